"""Sorted sets on disk: the AOF replays them (RESP and snapshot bases, after a
rewrite), the snapshot carries them, a restart keeps them with their TTLs, and the
AOF interoperates with redis-server 7.0 both ways (Sluice's loads there and passes
redis-check-aof; 7.0's, blocking pops and ZINCRBY included, loads here)."""
from __future__ import annotations

import random
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

from engine import Engine, ManualClock
from differential import RedisOracle
from servers import RedisServer, needs_redis
from test_sorted_sets import random_command

T0 = 1_700_000_000_000
FAR_FUTURE_MS = 4_000_000_000_000      # a TTL that no clock of the run reaches
KEYS = ["z1", "z2", "z3", "lex", "dst", "big", "str"]


def view(call) -> dict:
    """What a restart must keep: each key's type, members with scores (as sent), TTL."""
    out = {}
    for key in KEYS:
        kind = call("TYPE", key)
        members = call("ZRANGE", key, 0, -1, "WITHSCORES") if kind == b"zset" else None
        ttl = call("PTTL", key)
        out[key] = (kind, members, ttl if ttl < 0 else "ttl")
    return out


def workload(call, rng: random.Random, steps: int) -> None:
    """The generated sorted-set commands of the differential tests, a large set with
    edge scores (skiplist, -0, infinities, more than a rewrite batch) and TTLs."""
    for i in range(steps):
        cmd = random_command(rng)
        if cmd[0] in ("BZPOPMIN", "BZPOPMAX"):
            cmd = (cmd[0], *cmd[1:-1], "0.001")
        try:
            call(*cmd)
        except Exception as err:  # noqa: BLE001 - error replies are part of the run
            assert "ERR" in str(err) or "WRONGTYPE" in str(err), err
        if i % 97 == 0:
            call("ZADD", "big", *[x for j in range(150) for x in
                                  (rng.choice(["inf", "-inf", "1e-300", "0.1", "7", "-7.25"]),
                                   f"m{rng.randrange(400)}")])
            call("ZINCRBY", "big", "0.3", "m1")
            call("ZDIFFSTORE", "dst", 2, "big", "z1")      # DEL + ZADD batches
            call("PEXPIREAT", "z2", FAR_FUTURE_MS)


def reopen(path: Path, **options) -> Engine:
    return Engine(clock=ManualClock(T0), dir=str(path), appendfsync="no", **options)


@pytest.mark.parametrize("preamble", [False, True])
def test_aof_replay_and_rewrite_keep_sorted_sets(tmp_path, preamble):
    engine = reopen(tmp_path, appendonly=True, aof_use_rdb_preamble=preamble)
    workload(engine.execute, random.Random(1), 800)
    assert engine.execute("TYPE", "big") == b"zset"
    first = view(engine.execute)
    engine.close()
    engine = reopen(tmp_path, appendonly=True, aof_use_rdb_preamble=preamble)
    assert view(engine.execute) == first
    engine.execute("BGREWRITEAOF")
    workload(engine.execute, random.Random(2), 400)
    second = view(engine.execute)
    engine.close()
    engine = reopen(tmp_path, appendonly=True, aof_use_rdb_preamble=preamble)
    try:
        assert view(engine.execute) == second
        assert engine.databases[0].peek(b"big").encoding() == b"skiplist"
    finally:
        engine.close()


def test_snapshot_keeps_sorted_sets(tmp_path):
    engine = reopen(tmp_path)
    workload(engine.execute, random.Random(3), 600)
    engine.execute("ZADD", "signed", *[x for i in range(129) for x in (i + 1, f"m{i}")], "-0", "zero")
    assert engine.execute("SAVE") == b"OK"
    before = view(engine.execute)
    engine.execute("ZADD", "z1", 1, "after-the-save")
    engine.close(save=False)
    again = reopen(tmp_path)
    try:
        assert view(again.execute) == before
        assert again.execute("ZSCORE", "signed", "zero") == b"-0"    # a skiplist keeps -0
    finally:
        again.close()


@needs_redis
def test_redis_loads_an_aof_written_by_sluice(tmp_path):
    engine = reopen(tmp_path, appendonly=True, aof_use_rdb_preamble=False)
    workload(engine.execute, random.Random(4), 700)
    engine.execute("BGREWRITEAOF")                             # a RESP base ...
    workload(engine.execute, random.Random(5), 300)            # ... and increments
    expected = view(engine.execute)
    engine.close(save=False)
    aof = tmp_path / "appendonlydir"
    check = subprocess.run(["redis-check-aof", str(aof / "appendonly.aof.manifest")],
                           capture_output=True, text=True)
    assert check.returncode == 0 and "is valid" in check.stdout, check.stdout
    with RedisServer(["--save", "", "--appendonly", "yes"], workdir=tmp_path) as srv:
        conn = RedisOracle("127.0.0.1", srv.port)
        try:
            assert view(conn.execute) == expected
        finally:
            conn.close()


@needs_redis
def test_sluice_loads_an_aof_written_by_redis(tmp_path):
    args = ["--save", "", "--appendonly", "yes", "--aof-use-rdb-preamble", "no"]
    with RedisServer(args, workdir=tmp_path) as srv:
        conn = RedisOracle("127.0.0.1", srv.port)
        workload(conn.execute, random.Random(6), 500)
        conn.execute("BGREWRITEAOF")
        deadline = time.monotonic() + 10
        while b"aof_rewrite_in_progress:0" not in conn.execute("INFO", "persistence"):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        time.sleep(0.2)
        # a blocked pop that is served: 7.0 logs it as ZPOPMIN / ZMPOP
        waiter = redis.Redis(port=srv.port, protocol=2)
        served = []
        thread = threading.Thread(target=lambda: served.append(
            waiter.execute_command("BZPOPMIN", "blocked", 5)))
        thread.start()
        time.sleep(0.3)
        conn.execute("ZADD", "blocked", 1, "a", 2, "b")
        thread.join(5)
        waiter.close()
        assert served and list(served[0][:2]) == [b"blocked", b"a"]
        workload(conn.execute, random.Random(7), 300)
        conn.close()
    with RedisServer(args, workdir=tmp_path) as srv:        # what 7.0 itself loads back
        conn = RedisOracle("127.0.0.1", srv.port)
        expected = view(conn.execute), conn.execute("ZRANGE", "blocked", 0, -1)
        conn.close()
    engine = Engine(dir=str(tmp_path), appendonly=True)
    try:
        assert (view(engine.execute), engine.execute("ZRANGE", "blocked", 0, -1)) == expected
    finally:
        engine.close(save=False)
