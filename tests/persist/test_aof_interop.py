"""AOF interoperability with Redis 7.0, both ways: an appendonlydir written by Sluice
(RESP base) loads in redis-server with the same data and passes redis-check-aof; an
appendonlydir written by redis-server (RESP base) loads in Sluice. Compared: XRANGE,
XPENDING (IDs, owners, delivery counts), XINFO GROUPS (consumers, pending, last ID,
entries-read) and XINFO CONSUMERS (names, pending), plus strings with their TTLs."""
from __future__ import annotations

import os
import random
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from engine import Engine
from differential import RedisOracle
from servers import RedisServer, needs_redis

pytestmark = needs_redis


@contextmanager
def redis_on(workdir: Path, *args: str) -> Iterator[RedisOracle]:
    """A raw connection to a redis-server loading (and writing) `workdir`."""
    with RedisServer(["--save", "", "--loglevel", "warning", *args], workdir=workdir) as srv:
        conn = RedisOracle("127.0.0.1", srv.port)
        try:
            yield conn
        finally:
            conn.close()


def pairs(flat: list) -> dict:
    return dict(zip(flat[::2], flat[1::2]))


def view(call, streams, strings) -> dict:
    """What both sides must agree on (clock-dependent idle times left out)."""
    out = {}
    for key in streams:
        groups = {}
        for g in call("XINFO", "GROUPS", key):
            g = pairs(g)
            name = g[b"name"]
            consumers = sorted((pairs(c)[b"name"], pairs(c)[b"pending"])
                               for c in call("XINFO", "CONSUMERS", key, name))
            pending = [(p[0], p[1], p[3]) for p in call("XPENDING", key, name, "-", "+", 100000)]
            groups[name] = (g[b"consumers"], g[b"pending"], g[b"last-delivered-id"],
                            g[b"entries-read"], consumers, pending)
        out[key] = (call("XRANGE", key, "-", "+"), groups)
    for key in strings:
        ttl = call("PTTL", key)
        out[key] = (call("GET", key), ttl if ttl < 0 else "ttl")
    return out


def stream_workload(call, rng: random.Random, steps: int, first_ms: int) -> None:
    """Stream and string commands both servers support (explicit IDs, no CLAIM)."""
    if not call("EXISTS", "s1"):
        for key in ("s1", "s2"):
            call("XGROUP", "CREATE", key, "g1", "0", "MKSTREAM")
            call("XGROUP", "CREATE", key, "g2", "$")
    seq = first_ms
    for _ in range(steps):
        key = rng.choice(["s1", "s2"])
        group = rng.choice(["g1", "g2"])
        consumer = rng.choice(["alice", "bob", "carol"])
        op = rng.random()
        try:
            if op < 0.4:
                seq += 1
                args = ["MAXLEN", "~", 40] if rng.random() < 0.1 else []
                call("XADD", key, *args, f"{seq}-{rng.randint(0, 3)}", "f", str(seq))
            elif op < 0.6:
                call("XREADGROUP", "GROUP", group, consumer, "COUNT", rng.randint(1, 5),
                     "STREAMS", key, ">")
            elif op < 0.7:
                pending = call("XPENDING", key, group, "-", "+", 5)
                if pending:
                    call("XACK", key, group, *[p[0] for p in pending[:2]])
            elif op < 0.78:
                pending = call("XPENDING", key, group, "-", "+", 3)
                if pending:
                    call("XCLAIM", key, group, consumer, 0, *[p[0] for p in pending])
            elif op < 0.83:
                call("XAUTOCLAIM", key, group, consumer, 0, "0", "COUNT", 2)
            elif op < 0.86:
                entries = call("XRANGE", key, "-", "+", "COUNT", 5)
                if entries:
                    call("XDEL", key, rng.choice(entries)[0])
            elif op < 0.88:
                call("XGROUP", "DELCONSUMER", key, group, consumer)
            elif op < 0.9:
                call("XGROUP", "CREATECONSUMER", key, group, consumer + "2")
            elif op < 0.93:
                call("SET", f"k{rng.randint(0, 4)}", "v", "EX", 3600)
            elif op < 0.95:
                call("SET", f"k{rng.randint(0, 4)}", "w")
            elif op < 0.97:
                call("XREADGROUP", "GROUP", group, consumer, "STREAMS", key, "0")
            else:
                call("XTRIM", key, "MAXLEN", rng.randint(5, 30))
        except Exception as err:  # noqa: BLE001 - error replies are part of the run
            assert "ERR" in str(err) or "NOGROUP" in str(err), err


STREAMS = [b"s1", b"s2"]
STRINGS = [f"k{i}".encode() for i in range(5)]


def test_redis_loads_an_aof_written_by_sluice(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                    appendfsync="no")
    stream_workload(engine.execute, random.Random(1), 400, 1)
    engine.execute("BGREWRITEAOF")                     # a RESP base ...
    stream_workload(engine.execute, random.Random(2), 300, 10_000)   # ... and increments
    expected = view(engine.execute, STREAMS, STRINGS)
    engine.close(save=False)

    aof = tmp_path / "appendonlydir"
    for name in os.listdir(aof):
        if not name.endswith(".manifest"):
            check = subprocess.run(["redis-check-aof", str(aof / name)], capture_output=True,
                                   text=True)
            assert check.returncode == 0 and "is valid" in check.stdout, check.stdout
    check = subprocess.run(["redis-check-aof", str(aof / "appendonly.aof.manifest")],
                           capture_output=True, text=True)
    assert check.returncode == 0 and "is valid" in check.stdout, check.stdout

    with redis_on(tmp_path, "--appendonly", "yes") as conn:
        assert view(conn.execute, STREAMS, STRINGS) == expected


def test_sluice_loads_an_aof_written_by_redis(tmp_path):
    with redis_on(tmp_path, "--appendonly", "yes", "--aof-use-rdb-preamble", "no") as conn:
        stream_workload(conn.execute, random.Random(3), 400, 1)
        conn.execute("BGREWRITEAOF")
        deadline = time.monotonic() + 10
        while b"aof_rewrite_in_progress:1" in conn.execute("INFO", "persistence") \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.2)
        conn.execute("MULTI")
        conn.execute("XADD", "s1", "*", "in", "multi")
        conn.execute("SET", "k0", "multi")
        conn.execute("EXEC")
        stream_workload(conn.execute, random.Random(4), 300, 10 ** 13)
    # What the directory holds is what redis-server itself loads back: 7.0's log does
    # not keep everything it had live (entries-read after XREADGROUP, some delivery
    # counts), so the reference is its own reload, not its state before the restart.
    with redis_on(tmp_path, "--appendonly", "yes", "--aof-use-rdb-preamble", "no") as conn:
        expected = view(conn.execute, STREAMS, STRINGS)
    names = os.listdir(tmp_path / "appendonlydir")
    assert any(n.endswith(".base.aof") for n in names)
    engine = Engine(dir=str(tmp_path), appendonly=True)
    try:
        assert view(engine.execute, STREAMS, STRINGS) == expected
    finally:
        engine.close(save=False)


# -- scripts' effects ------------------------------------------------------------------

ADD_AND_READ = ("redis.call('XADD', KEYS[1], ARGV[1], 'f', ARGV[2]); "
                "return redis.call('XREADGROUP', 'GROUP', 'g1', ARGV[3], 'COUNT', 2, "
                "'STREAMS', KEYS[1], '>')")
SCRIPT_STEPS = [
    ("EVAL", "redis.call('XGROUP', 'CREATE', KEYS[1], 'g1', '0', 'MKSTREAM'); "
             "redis.call('XGROUP', 'CREATE', KEYS[2], 'g1', '$', 'MKSTREAM'); "
             "for i = 1, 20 do redis.call('XADD', KEYS[i % 2 + 1], i .. '-1', 'n', i) end; "
             "redis.call('SET', 'k0', 'from a script', 'EX', 3600); return 1", 2, "s1", "s2"),
    ("EVALSHA", ADD_AND_READ, 1, "s1", "30-1", "a", "alice"),
    ("EVALSHA", ADD_AND_READ, 1, "s2", "31-1", "b", "bob"),
    ("EVALSHA", ADD_AND_READ, 1, "s1", "32-1", "c", "carol"),
    # pending entries change owners, some are acknowledged, one goes
    ("EVAL", "local p = redis.call('XPENDING', KEYS[1], 'g1', '-', '+', 10); "
             "redis.call('XCLAIM', KEYS[1], 'g1', 'dave', 0, p[1][1]); "
             "redis.call('XACK', KEYS[1], 'g1', p[2][1]); "
             "redis.call('XAUTOCLAIM', KEYS[1], 'g1', 'erin', 0, '0', 'COUNT', 1); "
             "redis.call('XDEL', KEYS[1], '5-1'); "
             "return redis.call('XTRIM', KEYS[1], 'MAXLEN', 8)", 1, "s1"),
    # errors caught with pcall change nothing; the writes around them stay
    ("EVAL", "redis.call('SET', 'k1', 'one'); redis.pcall('XADD', KEYS[1], '1-1', 'f', 'v'); "
             "redis.pcall('INCR', 'k1'); redis.call('INCRBY', 'k2', 5); "
             "return redis.call('APPEND', 'k1', '+')", 1, "s2"),
    # failed half-way: what it wrote before the error stays
    ("EVAL", "redis.call('SET', 'k3', 'before the error'); "
             "redis.call('XADD', KEYS[1], '40-1', 'f', 'kept'); "
             "redis.call('XADD', KEYS[1], '1-1', 'f', 'too small'); "
             "redis.call('SET', 'k3', 'never')", 1, "s2"),
    # a script in another database, back to db 0 for the next command
    ("EVAL", "redis.call('SELECT', 1); redis.call('SET', KEYS[1], 'db1'); "
             "redis.call('SELECT', 0); return redis.call('SET', 'k4', 'db0')", 1, "k9"),
    ("EVAL", "return redis.call('GET', 'k0')", 0),          # writes nothing
    ("MULTI",),
    ("EVAL", "return redis.call('XADD', KEYS[1], '50-1', 'in', 'exec')", 1, "s1"),
    ("SET", "k2", "after the script"),
    ("EXEC",),
    ("EVAL", "redis.call('DEL', 'k1'); return redis.call('XGROUP', 'DELCONSUMER', "
             "KEYS[1], 'g1', 'carol')", 1, "s1"),
]


def run_script_steps(call) -> list:
    """Runs SCRIPT_STEPS (EVALSHA steps load their script first); the replies, errors
    as their text without the script's sha."""
    out = []
    for step in SCRIPT_STEPS:
        if step[0] == "EVALSHA":
            step = ("EVALSHA", call("SCRIPT", "LOAD", step[1]), *step[2:])
        try:
            out.append(call(*step))
        except Exception as err:  # noqa: BLE001 - error replies are part of the run
            out.append(str(err).split(" script:")[0])
    return out


def test_redis_loads_an_aof_of_script_effects(tmp_path):
    """Scripts reach our AOF as their effects bracketed by MULTI/EXEC (also inside a
    client's MULTI/EXEC and when they fail half-way); redis-server 7.0 loads it and ends
    with the keyspace Sluice has, and both ran the scripts alike."""
    from engine.api.session import Hub, Session

    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                    appendfsync="no")
    session = Session(Hub(engine))
    ours = run_script_steps(lambda *argv: session.call(
        [a if isinstance(a, bytes) else str(a).encode() for a in argv]))
    expected = view(engine.execute, STREAMS, STRINGS)
    session.call([b"SELECT", b"1"])
    expected_db1 = session.call([b"GET", b"k9"])
    engine.close(save=False)
    assert expected[b"k3"][0] == b"before the error" and expected_db1 == b"db1"

    (tmp_path / "redis").mkdir()
    with redis_on(tmp_path / "redis", "--appendonly", "no") as conn:
        theirs = run_script_steps(conn.execute)
        assert view(conn.execute, STREAMS, STRINGS) == expected

    aof = tmp_path / "appendonlydir"
    check = subprocess.run(["redis-check-aof", str(aof / "appendonly.aof.manifest")],
                           capture_output=True, text=True)
    assert check.returncode == 0 and "is valid" in check.stdout, check.stdout
    with redis_on(tmp_path, "--appendonly", "yes") as conn:
        assert view(conn.execute, STREAMS, STRINGS) == expected
        conn.execute("SELECT", 1)
        assert conn.execute("GET", "k9") == expected_db1
    assert [normalized(r) for r in ours] == [normalized(r) for r in theirs]


def normalized(reply):
    """A reply as both clients give it: ours as Python values, the oracle's raw."""
    if isinstance(reply, (list, tuple)):
        return [normalized(item) for item in reply]
    if isinstance(reply, dict):
        return [normalized(x) for kv in reply.items() for x in kv]
    if isinstance(reply, bytes):
        return bytes(reply)
    return reply


# -- Redis 8.2's reference policies, logged as 7.0 commands ----------------------------

POLICY_STEPS = [
    ("XGROUP", "CREATE", "s1", "g1", "0", "MKSTREAM"),
    ("XGROUP", "CREATE", "s1", "g2", "0"),
    *[("XADD", "s1", f"{i}-1", "f", str(i)) for i in range(1, 13)],
    ("XREADGROUP", "GROUP", "g1", "alice", "COUNT", 8, "STREAMS", "s1", ">"),
    ("XREADGROUP", "GROUP", "g2", "bob", "COUNT", 4, "STREAMS", "s1", ">"),
    ("XACK", "s1", "g1", "1-1", "2-1", "3-1"),
    ("XACK", "s1", "g2", "1-1", "2-1"),
    ("XTRIM", "s1", "MAXLEN", 10, "ACKED"),                 # 1-1 and 2-1 go
    ("XDELEX", "s1", "DELREF", "IDS", 2, "4-1", "3-1"),     # and their references
    ("XACKDEL", "s1", "g1", "ACKED", "IDS", 2, "5-1", "6-1"),  # g2 has not read them
    ("XREADGROUP", "GROUP", "g2", "carol", "COUNT", 3, "STREAMS", "s1", ">"),
    ("XACKDEL", "s1", "g2", "KEEPREF", "IDS", 2, "5-1", "7-1"),
    ("XADD", "s1", "DELREF", "MAXLEN", 4, "13-1", "f", "13"),
    ("XDEL", "s1", "11-1"),
    ("XDELEX", "s1", "ACKED", "IDS", 2, "11-1", "13-1"),
    ("XTRIM", "s1", "MINID", "12-1", "DELREF"),
    ("XADD", "s1", "ACKED", "MAXLEN", 0, "14-1", "f", "14"),
]


def test_redis_loads_the_effects_of_reference_policies(tmp_path):
    """XDELEX, XACKDEL and XADD/XTRIM with DELREF or ACKED reach the AOF as XACK, XDEL
    and XTRIM, which redis-server 7.0 loads into the state Sluice has."""
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                    appendfsync="no")
    replies = [engine.execute(*step) for step in POLICY_STEPS]
    assert replies[-10:-7] == [2, [1, 1], [2, 2]]
    expected = view(engine.execute, [b"s1"], [])
    engine.close(save=False)
    assert expected[b"s1"][0] and expected[b"s1"][1][b"g1"][5]   # entries and a PEL left
    check = subprocess.run(["redis-check-aof", str(tmp_path / "appendonlydir" /
                                                   "appendonly.aof.manifest")],
                           capture_output=True, text=True)
    assert check.returncode == 0 and "is valid" in check.stdout, check.stdout
    with redis_on(tmp_path, "--appendonly", "yes") as conn:
        assert view(conn.execute, [b"s1"], []) == expected


def test_redis_loads_the_effects_of_move_and_sort_store(tmp_path):
    """MOVE (logged as COPY ... DB n REPLACE + DEL) and SORT ... STORE (DEL + RPUSH)."""
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                    appendfsync="no")
    for argv in (("RPUSH", "l", "3", "1", "2"), ("MSET", "w_1", "30", "w_2", "10", "w_3", "20"),
                 ("SET", "dst", "old"), ("SORT", "l", "BY", "w_*", "GET", "#", "GET", "nokey_*",
                                         "STORE", "dst"),
                 ("SORT", "l", "DESC", "STORE", "l2"), ("SORT", "missing", "STORE", "w_1"),
                 ("SET", "m", "v", "PX", "3600000"), ("MOVE", "m", "1"), ("MOVE", "l2", "2")):
        engine.execute(*argv)
    expected = engine.execute("LRANGE", "dst", "0", "-1")
    assert expected == [b"2", b"", b"3", b"", b"1", b""]
    engine.close(save=False)
    with redis_on(tmp_path, "--appendonly", "yes") as conn:
        assert conn.execute("LRANGE", "dst", "0", "-1") == expected
        assert conn.execute("EXISTS", "w_1", "m", "l2") == 0
        conn.execute("SELECT", "1")
        assert conn.execute("GET", "m") == b"v" and conn.execute("PTTL", "m") > 3_500_000
        conn.execute("SELECT", "2")
        assert conn.execute("LRANGE", "l2", "0", "-1") == [b"3", b"2", b"1"]
