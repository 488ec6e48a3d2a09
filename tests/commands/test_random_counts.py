"""HRANDFIELD, SRANDMEMBER and ZRANDMEMBER with a count: negative counts (repeats
allowed) reply as the oracle does within the bound, and a count whose reply would
pass 512 MB is refused at once instead of building it (Redis 7.0 and the newest
build it until their memory runs out: tests/differential.py lists the difference).
HRANDFIELD takes a random field from the hash's slot list, in O(1)."""
from __future__ import annotations

import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from differential import run_both
from engine import Engine
from engine.core.errors import ResponseError

HUGE = -9223372036854775807
SETUP = [("SADD", "s", "a", "bb", "ccc"), ("HSET", "h", "f", "v", "g", "w"),
         ("ZADD", "z", 1, "a", 2.5, "b")]
CALLS = [("SRANDMEMBER", "s"), ("HRANDFIELD", "h"), ("HRANDFIELD", "h", "WITHVALUES"),
         ("ZRANDMEMBER", "z"), ("ZRANDMEMBER", "z", "WITHSCORES")]


def with_count(call: tuple, count: int) -> tuple:
    return (*call[:2], count, *call[2:])


def test_negative_counts_within_the_bound_reply_as_redis(engine, oracle):
    """The picks are random: their number and that each is the key's are compared."""
    run_both(engine, oracle, SETUP)
    items = {b"s": {b"a", b"bb", b"ccc"}, b"h": {b"f", b"g"}, b"z": {b"a", b"b"}}
    for call in CALLS:
        for count in (-1, -7, -3000):
            ours = engine.execute(*with_count(call, count))
            theirs = oracle.execute(*with_count(call, count))
            step = 2 if len(call) > 2 else 1
            assert len(ours) == len(theirs) == step * -count, call
            for reply in (ours, theirs):
                assert set(reply[::step]) <= items[call[1].encode()], call


# A child with a 3 GB address-space limit: a reply built in full would fail there
# with MemoryError instead of exhausting the machine.
CHILD = """
import resource, sys, time
resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
from engine import Engine
e = Engine()
for cmd in {setup!r}:
    e.execute(*cmd)
out = []
for cmd in {calls!r}:
    start = time.monotonic()
    try:
        reply = len(e.execute(*cmd))
    except Exception as err:
        reply = str(err)
    out.append((reply, time.monotonic() - start))
print(repr(out))
"""


def test_a_huge_negative_count_is_refused_without_building_the_reply():
    calls = [with_count(call, count) for call in CALLS
             for count in (HUGE, -(1 << 40), -(1 << 30))]
    script = CHILD.format(setup=SETUP, calls=calls)
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=root, env={"PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    results = eval(done.stdout)   # noqa: S307 - our own child's repr of a list
    assert [reply for reply, _ in results] == ["ERR value is out of range"] * len(calls)
    assert all(seconds < 1 for _, seconds in results)


def test_the_bound_is_the_replys_size_not_the_count():
    """600 picks of 1 MB members pass 512 MB; 400 do not (and cost 400 references)."""
    e = Engine()
    e.execute("SADD", "big", *[bytes([65 + i]) * (1 << 20) for i in range(3)])
    e.execute("SADD", "small", "x")
    with pytest.raises(ResponseError, match="value is out of range"):
        e.execute("SRANDMEMBER", "big", -600)
    assert len(e.execute("SRANDMEMBER", "big", -400)) == 400
    assert len(e.execute("SRANDMEMBER", "small", -100_000)) == 100_000
    with pytest.raises(ResponseError, match="value is out of range"):
        e.execute("SRANDMEMBER", "small", -(1 << 25))


# -- HRANDFIELD across changes ------------------------------------------------------------

@pytest.mark.parametrize("fields, encoding", [(200, b"listpack"), (3000, b"hashtable")])
def test_hash_random_fields_follow_every_change(fields, encoding):
    """After random HSET/HDEL (in either encoding) the hash equals a dict model, a COPY
    is independent, and HRANDFIELD reaches every field."""
    rng = random.Random(3)
    e = Engine()
    model = {}
    for _ in range(3000):
        field = f"f{rng.randrange(fields)}"
        if rng.random() < 0.6:
            v = rng.randrange(9)
            e.execute("HSET", "h", field, v)
            model[field.encode()] = str(v).encode()
        else:
            e.execute("HDEL", "h", field)
            model.pop(field.encode(), None)
    value = e.databases[0].peek(b"h")
    assert value.encoding() == encoding
    assert dict(zip(value.keys(), value.values())) == model
    e.execute("COPY", "h", "h2")
    e.execute("HSET", "h2", "new", 1)
    assert b"new" not in value and len(e.databases[0].peek(b"h2")) == len(model) + 1
    seen = Counter(e.execute("HRANDFIELD", "h") for _ in range(20 * len(value)))
    assert set(seen) == set(model)


def test_hrandfield_takes_constant_time():
    """20000 picks from 200000 fields: a linear pick would take minutes."""
    e = Engine()
    for start in range(0, 200_000, 10_000):
        e.execute("HSET", "h", *[x for i in range(start, start + 10_000) for x in (i, i)])
    began = time.monotonic()
    for _ in range(20_000):
        e.execute("HRANDFIELD", "h")
    assert time.monotonic() - began < 5
