"""The string commands and COPY through the AOF: their effects replay in Sluice after
a restart (with a rewrite in between), and load into redis-server 7.0 with the same
values, TTLs and streams (the effects are commands 7.0 has: SET ... PXAT/KEEPTTL,
MSET, SETRANGE, PEXPIREAT, PERSIST, DEL, COPY ... REPLACE)."""
from __future__ import annotations

import random

from engine import Engine

from test_aof_interop import redis_on

KEYS = [f"k{i}" for i in range(6)]
FAR = 99_999_999_999


def workload(call, rng: random.Random, steps: int) -> None:
    """String commands and COPY; relative TTLs long enough not to expire meanwhile."""
    for _ in range(steps):
        key, other = rng.choice(KEYS), rng.choice(KEYS)
        value = rng.choice(["1", "2.5", "abc", "", "-7", "x" * 30])
        at = str(FAR - rng.randint(0, 1000))
        command = rng.choice([
            ["MSET", key, value, other, value], ["MSETNX", key, value, other, value],
            ["SETNX", key, value], ["SETEX", key, "3600", value],
            ["PSETEX", key, "3600000", value], ["GETSET", key, value],
            ["GETEX", key, "EXAT", at], ["GETEX", key, "PERSIST"], ["GETEX", key, "EX", "900"],
            ["GETEX", key, "PXAT", "1"], ["INCRBYFLOAT", key, rng.choice(["0.1", "-3", "1e3"])],
            ["SETRANGE", key, str(rng.randint(0, 40)), value or "z"], ["APPEND", key, value],
            ["COPY", key, other, "REPLACE"], ["COPY", key, other, "DB", "1"],
            ["INCRBY", key, "2"], ["DEL", key],
        ])
        try:
            call(*command)
        except Exception as err:  # noqa: BLE001 - error replies are part of the run
            assert "ERR" in str(err) or "WRONGTYPE" in str(err), err


def stream_with_groups(call) -> None:
    call("XGROUP", "CREATE", "s", "g", "0", "MKSTREAM")
    for i in range(1, 300):
        call("XADD", "s", f"{i}-1", "f", str(i))
    call("XREADGROUP", "GROUP", "g", "alice", "COUNT", "120", "STREAMS", "s", ">")
    call("XREADGROUP", "GROUP", "g", "bob", "COUNT", "50", "STREAMS", "s", ">")
    call("XACK", "s", "g", "3-1", "60-1")
    call("XDEL", "s", "7-1")


def view(call) -> dict:
    out = {}
    for db in (0, 1):
        call("SELECT", str(db))
        for key in KEYS:
            ttl = call("PTTL", key)
            out[(db, key)] = (call("GET", key), "ttl" if ttl > 0 else ttl)
    call("SELECT", "0")
    for key in ("s", "s2"):
        groups = [dict(zip(g[::2], g[1::2])) for g in call("XINFO", "GROUPS", key)]
        out[key] = (call("XRANGE", key, "-", "+"), call("XLEN", key),
                    [(g[b"name"], g[b"pending"], g[b"last-delivered-id"]) for g in groups],
                    [p[:2] + p[3:] for p in call("XPENDING", key, "g", "-", "+", 1000)])
    return out


def test_strings_and_copy_replay_after_rewrite_and_restart_and_in_redis(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                    appendfsync="no")
    stream_with_groups(engine.execute)
    workload(engine.execute, random.Random(11), 300)
    engine.execute("COPY", "s", "s2")
    engine.execute("BGREWRITEAOF")
    workload(engine.execute, random.Random(12), 300)
    engine.execute("XREADGROUP", "GROUP", "g", "carol", "COUNT", "5", "STREAMS", "s2", ">")
    expected = view(engine.execute)
    engine.close(save=False)

    again = Engine(dir=str(tmp_path), appendonly=True)
    try:
        assert view(again.execute) == expected
    finally:
        again.close(save=False)
    with redis_on(tmp_path, "--appendonly", "yes") as conn:
        assert view(conn.execute) == expected
