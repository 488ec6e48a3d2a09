"""XREAD / XREADGROUP MAXCOUNT and MAXSIZE (Redis 8.10): caps on the whole reply, across
its streams, where COUNT caps each stream. Redis 7.0 has neither option (the
differential suite leaves them out, tests/differential.py DELIBERATE_DIFFERENCES), so
these tests follow the newest docs: redis.io XREAD / XREADGROUP pages, redis/redis#15282
and its stream-cgroups.tcl cases. They run on the engine, through redis-py's
`max_count` / `max_size` on EmbeddedRedis, and on sluice-server in RESP2 and RESP3."""
from __future__ import annotations

import random
import threading

import pytest
import redis

from engine import EmbeddedRedis, Engine, ManualClock, ResponseError
from engine_states import grouped_streams
from servers import SluiceServer

T0 = 1_700_000_000_000

# RESP2 bytes of [b"<i>-0", [b"f", b"v<i>"]] for 1 <= i <= 9: "*2\r\n" "$3\r\n1-0\r\n"
# "*2\r\n" "$1\r\nf\r\n" "$2\r\nv1\r\n".
ENTRY_BYTES = 4 + 9 + 4 + 7 + 8


@pytest.fixture
def clock():
    return ManualClock(T0)


@pytest.fixture
def e(clock):
    """Streams s1, s2, s3 with entries 1-0..3-0 each, and group g on each from 0."""
    return grouped_streams(clock, ("s1", "s2", "s3"))


def served(reply) -> list[tuple[bytes, list[bytes]]]:
    return [(key, [entry[0] for entry in entries]) for key, entries in reply or []]


# -- MAXCOUNT ------------------------------------------------------------------------

def test_xread_maxcount_caps_the_total_in_stream_order(e):
    # The docs' example: COUNT 2 alone gives 6, with MAXCOUNT 3 the first 3 in stream order.
    assert sum(len(ids) for _, ids in served(e.execute(
        "XREAD", "COUNT", "2", "STREAMS", "s1", "s2", "s3", "0", "0", "0"))) == 6
    reply = e.execute("XREAD", "COUNT", "2", "MAXCOUNT", "3", "STREAMS", "s1", "s2", "s3",
                      "0", "0", "0")
    assert served(reply) == [(b"s1", [b"1-0", b"2-0"]), (b"s2", [b"1-0"])]


def test_xread_maxcount_without_count_and_with_plus(e):
    assert served(e.execute("XREAD", "MAXCOUNT", "4", "STREAMS", "s1", "s2", "0", "0")) == [
        (b"s1", [b"1-0", b"2-0", b"3-0"]), (b"s2", [b"1-0"])]
    # '+' gives a stream's last entry, one of the budget.
    assert served(e.execute("XREAD", "MAXCOUNT", "2", "STREAMS", "s1", "s2", "s3",
                            "+", "+", "+")) == [(b"s1", [b"3-0"]), (b"s2", [b"3-0"])]


def test_xread_maxcount_skips_streams_with_nothing_new(e):
    # s1 has nothing after 3-0: the budget goes to the streams that have entries.
    reply = e.execute("XREAD", "MAXCOUNT", "2", "STREAMS", "s1", "s2", "3-0", "1-0")
    assert served(reply) == [(b"s2", [b"2-0", b"3-0"])]


def test_xreadgroup_maxcount_delivers_only_what_it_returns(e):
    reply = e.execute("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "4",
                      "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    assert served(reply) == [(b"s1", [b"1-0", b"2-0", b"3-0"]), (b"s2", [b"1-0"])]
    assert e.execute("XPENDING", "s2", "g")[0] == 1
    assert e.execute("XPENDING", "s3", "g")[0] == 0
    assert e.execute("XINFO", "GROUPS", "s2")[0][7] == b"1-0"      # last-delivered-id
    # The rest comes with the next read.
    reply = e.execute("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "10",
                      "STREAMS", "s1", "s2", "s3", ">", ">", ">")
    assert served(reply) == [(b"s2", [b"2-0", b"3-0"]), (b"s3", [b"1-0", b"2-0", b"3-0"])]


def test_xreadgroup_maxcount_counts_claimed_entries(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s1", "s2", ">", ">")
    clock.advance(100)
    # Claimable: s1 1-0 2-0, s2 1-0 2-0; new: s1 3-0, s2 3-0.
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "50", "MAXCOUNT", "3",
                      "STREAMS", "s1", "s2", ">", ">")
    assert served(reply) == [(b"s1", [b"1-0", b"2-0", b"3-0"])]
    pending = e.execute("XPENDING", "s2", "g", "-", "+", "10")
    assert [(p[0], p[1]) for p in pending] == [(b"1-0", b"c1"), (b"2-0", b"c1")]


def test_xreadgroup_maxcount_bounds_a_history_read(e):
    e.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s1", "s2", ">", ">")
    reply = e.execute("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "4",
                      "STREAMS", "s1", "s2", "0", "0")
    assert served(reply) == [(b"s1", [b"1-0", b"2-0", b"3-0"]), (b"s2", [b"1-0"])]


# -- MAXSIZE -------------------------------------------------------------------------

def test_xread_maxsize_counts_resp2_bytes(e):
    # A soft cap: entries come while those served so far are below it.
    two = 2 * ENTRY_BYTES
    assert served(e.execute("XREAD", "MAXSIZE", str(two), "STREAMS", "s1", "s2", "0", "0")) == [
        (b"s1", [b"1-0", b"2-0"])]
    assert served(e.execute("XREAD", "MAXSIZE", str(two - 1), "STREAMS", "s1", "s2", "0", "0")) == [
        (b"s1", [b"1-0", b"2-0"])]
    assert served(e.execute("XREAD", "MAXSIZE", str(two + 1), "STREAMS", "s1", "s2", "0", "0")) == [
        (b"s1", [b"1-0", b"2-0", b"3-0"])]
    assert served(e.execute("XREAD", "MAXSIZE", str(4 * ENTRY_BYTES), "STREAMS", "s1", "s2",
                            "0", "0")) == [(b"s1", [b"1-0", b"2-0", b"3-0"]), (b"s2", [b"1-0"])]


def test_maxsize_returns_one_oversized_entry(e):
    e.execute("XADD", "big", "1-0", "payload", "x" * 10_000)
    e.execute("XADD", "big", "2-0", "payload", "y")
    assert served(e.execute("XREAD", "MAXSIZE", "1", "STREAMS", "big", "s1", "0", "0")) == [
        (b"big", [b"1-0"])]
    e.execute("XGROUP", "CREATE", "big", "g", "0")
    reply = e.execute("XREADGROUP", "GROUP", "g", "c", "MAXSIZE", "100", "STREAMS", "big", ">")
    assert served(reply) == [(b"big", [b"1-0"])]
    assert e.execute("XPENDING", "big", "g")[0] == 1


def test_maxsize_with_count_and_maxcount(e):
    # Whichever limit comes first ends the reply.
    reply = e.execute("XREAD", "COUNT", "1", "MAXCOUNT", "2", "MAXSIZE", "10000",
                      "STREAMS", "s1", "s2", "s3", "0", "0", "0")
    assert served(reply) == [(b"s1", [b"1-0"]), (b"s2", [b"1-0"])]
    reply = e.execute("XREAD", "COUNT", "2", "MAXCOUNT", "5", "MAXSIZE", str(3 * ENTRY_BYTES),
                      "STREAMS", "s1", "s2", "s3", "0", "0", "0")
    assert served(reply) == [(b"s1", [b"1-0", b"2-0"]), (b"s2", [b"1-0"])]


def test_xreadgroup_maxsize_stops_claims_and_deliveries(e, clock):
    e.execute("XREADGROUP", "GROUP", "g", "c1", "COUNT", "2", "STREAMS", "s1", ">")
    clock.advance(100)
    reply = e.execute("XREADGROUP", "GROUP", "g", "c2", "CLAIM", "50",
                      "MAXSIZE", str(ENTRY_BYTES), "STREAMS", "s1", "s2", ">", ">")
    assert served(reply) == [(b"s1", [b"1-0"])]
    pending = e.execute("XPENDING", "s1", "g", "-", "+", "10")
    assert [(p[0], p[1]) for p in pending] == [(b"1-0", b"c2"), (b"2-0", b"c1")]
    assert e.execute("XPENDING", "s2", "g")[0] == 0


def test_empty_reads_stay_empty_and_block(e):
    assert e.execute("XREAD", "MAXCOUNT", "1", "MAXSIZE", "1", "STREAMS", "s1", "3-0") is None
    e.execute("XREADGROUP", "GROUP", "g", "c", "STREAMS", "s1", ">")
    assert e.execute("XREADGROUP", "GROUP", "g", "c", "MAXCOUNT", "1", "BLOCK", "10",
                     "STREAMS", "s1", ">") is None


# -- argument errors -----------------------------------------------------------------

@pytest.mark.parametrize("options, error", [
    (["MAXCOUNT", "0"], "ERR MAXCOUNT must be a positive integer"),
    (["MAXCOUNT", "-1"], "ERR MAXCOUNT must be a positive integer"),
    (["MAXCOUNT", "x"], "ERR MAXCOUNT must be a positive integer"),
    (["MAXSIZE", "0"], "ERR MAXSIZE must be a positive integer"),
    (["MAXSIZE", "1.5"], "ERR MAXSIZE must be a positive integer"),
    (["COUNT", "3", "MAXCOUNT", "2"], "ERR MAXCOUNT must be greater than or equal to COUNT"),
    (["MAXCOUNT", "2", "COUNT", "3"], "ERR MAXCOUNT must be greater than or equal to COUNT"),
])
@pytest.mark.parametrize("group", [False, True], ids=["xread", "xreadgroup"])
def test_limit_argument_errors(e, options, error, group):
    head = ["XREADGROUP", "GROUP", "g", "c"] if group else ["XREAD"]
    with pytest.raises(ResponseError) as err:
        e.execute(*head, *options, "STREAMS", "s1", ">" if group else "0")
    assert str(err.value) == error


def test_limit_without_value_is_a_syntax_error(e):
    with pytest.raises(ResponseError, match="^ERR syntax error$"):
        e.execute("XREAD", "COUNT", "1", "MAXSIZE")


def test_count_equal_to_maxcount_is_accepted(e):
    assert served(e.execute("XREAD", "COUNT", "2", "MAXCOUNT", "2", "STREAMS", "s1", "s2",
                            "0", "0")) == [(b"s1", [b"1-0", b"2-0"])]


# -- through redis-py ------------------------------------------------------------------

def test_redis_py_max_count_and_max_size_embedded(e):
    r = EmbeddedRedis(e)
    reply = r.xreadgroup("g", "c", {"s1": ">", "s2": ">", "s3": ">"}, count=2, max_count=3)
    assert served(reply) == [(b"s1", [b"1-0", b"2-0"]), (b"s2", [b"1-0"])]
    reply = r.xread({"s1": "0", "s2": "0"}, max_size=2 * ENTRY_BYTES)
    assert served(reply) == [(b"s1", [b"1-0", b"2-0"])]
    reply = r.xread({"s1": "0", "s2": "0"}, count=1, max_count=5)
    assert served(reply) == [(b"s1", [b"1-0"]), (b"s2", [b"1-0"])]


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


def streams_of(reply) -> list[tuple[bytes, list[bytes]]]:
    """redis-py's XREAD/XREADGROUP reply (a list in RESP2, a dict in RESP3) as served()."""
    if isinstance(reply, dict):
        return [(key, [entry[0] for entry in entries[0]]) for key, entries in reply.items()]
    return served(reply)


@pytest.mark.parametrize("protocol", [2, 3], ids=["resp2", "resp3"])
def test_redis_py_max_count_and_max_size_on_the_server(sluice, protocol):
    r = redis.Redis(port=sluice.port, protocol=protocol)
    try:
        r.flushall()
        for key in ("s1", "s2", "s3"):
            for i in range(1, 4):
                r.xadd(key, {"f": f"v{i}"}, id=f"{i}-0")
            r.xgroup_create(key, "g", id="0")
        reply = r.xreadgroup("g", "c", {"s1": ">", "s2": ">", "s3": ">"}, count=2, max_count=3)
        assert streams_of(reply) == [(b"s1", [b"1-0", b"2-0"]), (b"s2", [b"1-0"])]
        assert r.xpending("s3", "g")["pending"] == 0
        # MAXSIZE counts RESP2 bytes whatever the protocol: the same cut in RESP3.
        reply = r.xread({"s1": "0", "s2": "0"}, max_size=2 * ENTRY_BYTES)
        assert streams_of(reply) == [(b"s1", [b"1-0", b"2-0"])]
        with pytest.raises(redis.ResponseError, match="MAXCOUNT must be greater than or equal"):
            r.execute_command("XREAD", "COUNT", "3", "MAXCOUNT", "2", "STREAMS", "s1", "0")
    finally:
        r.close()


# -- against redis-server 7.0 ------------------------------------------------------------

def resp2_entry_size(entry_id: bytes, fields: list[bytes]) -> int:
    """RESP2 bytes of [id, [field, value, ...]], computed apart from the engine."""
    def bulk(b: bytes) -> int:
        return len(b"$%d\r\n" % len(b)) + len(b) + 2
    return 4 + bulk(entry_id) + len(b"*%d\r\n" % len(fields)) + sum(bulk(f) for f in fields)


def capped(reply, maxcount: int | None, maxsize: int | None):
    """7.0's XREAD reply cut as MAXCOUNT/MAXSIZE cut it: streams in order, entries
    while fewer than maxcount and while the bytes so far are below maxsize."""
    out, taken, size = [], 0, 0
    for key, entries in reply or []:
        kept = []
        for entry_id, fields in entries:
            if (maxcount is not None and taken == maxcount) or \
                    (maxsize is not None and size >= maxsize):
                break
            kept.append([entry_id, fields])
            taken += 1
            size += resp2_entry_size(entry_id, fields)
        if kept:
            out.append([key, kept])
    return out or None


@pytest.mark.parametrize("seed", range(6))
def test_xread_limits_cut_what_redis_7_returns(oracle, seed):
    """Random streams (random field counts and value sizes) on both sides; XREAD with
    random COUNT/MAXCOUNT/MAXSIZE here equals 7.0's XREAD with the same COUNT, cut by
    the documented rule."""
    rng = random.Random(seed)
    eng = Engine()
    keys = [f"k{i}" for i in range(rng.randint(1, 5))]
    for n in range(rng.randint(5, 60)):
        key = rng.choice(keys)
        fields = []
        for f in range(rng.randint(1, 4)):
            fields += [f"f{f}", "x" * rng.choice((0, 1, 5, 30, 200, 1000))]
        entry_id = f"{n + 1}-{rng.randint(0, 2)}"
        assert eng.execute("XADD", key, entry_id, *fields) == oracle.execute(
            "XADD", key, entry_id, *fields)
    served_any = 0
    for _ in range(40):
        names = rng.sample(keys + ["missing"], rng.randint(1, len(keys) + 1))
        ids = [rng.choice(("0", "3", "20-1", "$")) for _ in names]
        count = rng.choice((None, 1, 2, 5))
        maxcount = rng.choice((None, 1, 3, 7, 100))
        if count is not None and maxcount is not None and maxcount < count:
            maxcount = count
        maxsize = rng.choice((None, 1, 50, 300, 2000))
        base = ["XREAD"] + (["COUNT", count] if count is not None else [])
        limits = (["MAXCOUNT", maxcount] if maxcount is not None else []) + \
                 (["MAXSIZE", maxsize] if maxsize is not None else [])
        theirs = oracle.execute(*base, "STREAMS", *names, *ids)
        ours = eng.execute(*base, *limits, "STREAMS", *names, *ids)
        assert ours == capped(theirs, maxcount, maxsize), (base, limits, names, ids)
        served_any += ours is not None
    assert served_any >= 10        # the cut was exercised, not only empty reads


def test_blocked_read_woken_is_capped_too(sluice):
    """A blocked XREADGROUP ... MAXCOUNT woken by a transaction that adds several
    entries gets (and is delivered) MAXCOUNT of them; the rest stay new."""
    r = redis.Redis(port=sluice.port)
    other = redis.Redis(port=sluice.port)
    try:
        r.flushall()
        r.xgroup_create("b", "g", id="$", mkstream=True)

        def add_three():
            with other.pipeline(transaction=True) as pipe:
                for i in range(1, 4):
                    pipe.xadd("b", {"f": i}, id=f"{i}-0")
                pipe.execute()

        adder = threading.Timer(0.2, add_three)
        adder.start()
        reply = r.xreadgroup("g", "c", {"b": ">"}, max_count=2, block=5000)
        adder.join()
        assert streams_of(reply) == [(b"b", [b"1-0", b"2-0"])]
        assert r.xpending("b", "g")["pending"] == 2
        assert streams_of(r.xreadgroup("g", "c", {"b": ">"})) == [(b"b", [b"3-0"])]
    finally:
        r.close()
        other.close()
