"""Lists, hashes and sets survive what streams survive: AOF replay (increments and a
RESP base after BGREWRITEAOF), snapshots, restarts; an appendonlydir Sluice writes
with them loads into redis-server 7.0 with the same data (redis-check-aof passes);
a pop that served a blocked client reaches the log as the non-blocking pop."""
from __future__ import annotations

import os
import random
import subprocess
import threading
import time
from pathlib import Path

import pytest
import redis

from collection_generator import generate
from engine import Engine, ResponseError
from engine_states import observe
from saved_states import NOT_KEPT, SAVE_PATHS, SavingServer, raw, read_out, save_kill_restart
from servers import RedisServer, SluiceServer, needs_redis


def workload(call, seed: int, steps: int) -> None:
    """Collection commands (tests/collection_generator.py) plus TTLs on some keys and
    another database; errors are part of it (both sides see them)."""
    rng = random.Random(seed)
    for cmd in generate(seed, steps):
        try:
            call(*cmd)
            if rng.random() < 0.03:
                call("PEXPIRE", cmd[1], rng.choice((3_600_000, 7_200_000)))
            if rng.random() < 0.01:
                call("SELECT", 1)
                call("RPUSH", "other-db", "x")
                call("SELECT", 0)
        except (ResponseError, redis.ResponseError):
            pass


def view(call) -> dict:
    """Every key of databases 0 and 1 with its type, content and whether it has a TTL."""
    out = {}
    for db in (0, 1):
        call("SELECT", db)
        for key in sorted(call("KEYS", "*")):
            kind = call("TYPE", key)
            kind = kind.decode() if isinstance(kind, bytes) else kind
            if kind == "list":
                content = call("LRANGE", key, 0, -1)
            elif kind == "hash":
                flat = call("HGETALL", key)          # redis-py makes it a dict
                content = sorted(flat.items() if isinstance(flat, dict)
                                 else zip(flat[::2], flat[1::2]))
            elif kind == "set":
                content = sorted(call("SMEMBERS", key))
            else:
                content = call("GET", key)
            out[db, key] = (kind, content, call("PTTL", key) > 0)
    call("SELECT", 0)
    return out


def engine_call(engine: Engine):
    def call(*args):
        if args[0] == "SELECT":
            engine.select(int(args[1]))
            return None
        return engine.execute(*args)
    return call


def test_aof_replay_and_rewrite_restore_collections(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, appendfsync="no")
    workload(engine_call(engine), 1, 600)
    engine.execute("BGREWRITEAOF")
    workload(engine_call(engine), 2, 400)
    expected = observe(engine)
    assert any(kind == b"list" for kind, _, _ in expected.values())
    engine.close(save=False)
    again = Engine(dir=str(tmp_path), appendonly=True)
    try:
        assert observe(again) == expected
    finally:
        again.close(save=False)


def test_snapshot_restores_collections(tmp_path):
    engine = Engine(dir=str(tmp_path))
    workload(engine_call(engine), 3, 800)
    engine.execute("SAVE")
    expected = observe(engine)
    engine.close(save=False)
    again = Engine(dir=str(tmp_path))
    try:
        assert observe(again) == expected
    finally:
        again.close(save=False)


@needs_redis
def test_redis_loads_an_aof_with_collections_written_by_sluice(tmp_path):
    engine = Engine(dir=str(tmp_path), appendonly=True, aof_use_rdb_preamble=False,
                    appendfsync="no")
    workload(engine_call(engine), 4, 600)
    engine.execute("BGREWRITEAOF")                             # a RESP base ...
    engine.execute("RPUSH", "big", *[f"e{i}" for i in range(200)])
    engine.execute("HSET", "bighash", *[f"f{i}" if j == 0 else "v" for i in range(150)
                                        for j in (0, 1)])
    engine.execute("BGREWRITEAOF")                             # ... batched commands
    workload(engine_call(engine), 5, 400)                      # ... and increments
    expected = view(engine_call(engine))
    assert {kind for kind, _, _ in expected.values()} >= {"list", "hash", "set"}
    engine.close(save=False)
    aof = tmp_path / "appendonlydir"
    for name in os.listdir(aof):
        check = subprocess.run(["redis-check-aof", str(aof / name)], capture_output=True,
                               text=True)
        assert check.returncode == 0 and "is valid" in check.stdout, check.stdout
    with RedisServer(["--save", "", "--appendonly", "yes"], workdir=tmp_path) as srv:
        client = redis.Redis(port=srv.port)
        try:
            assert view(client.execute_command) == expected
        finally:
            client.close()


def test_served_blocked_pop_is_logged_as_a_pop(tmp_path):
    with SluiceServer(["--appendonly", "yes", "--appendfsync", "always"],
                      workdir=tmp_path) as srv:
        blocked, other = redis.Redis(port=srv.port), redis.Redis(port=srv.port)
        replies = []
        waiter = threading.Thread(target=lambda: replies.append(
            blocked.blmove("src", "dst", 5, "LEFT", "RIGHT")))
        waiter.start()
        deadline = time.monotonic() + 5
        while other.info("clients")["blocked_clients"] != 1:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        other.rpush("src", "a", "b")
        waiter.join(5)
        assert replies == [b"a"]
        assert other.blpop(["src"], 1) == (b"src", b"b")
        blocked.close()
        other.close()
    log = b"".join(p.read_bytes() for p in (Path(tmp_path) / "appendonlydir").iterdir()
                   if p.name.endswith(".aof"))
    assert b"LMOVE" in log and b"LPOP" in log and b"BLMOVE" not in log and b"BLPOP" not in log
    with SluiceServer(["--appendonly", "yes"], workdir=tmp_path) as srv:
        client = redis.Redis(port=srv.port)
        assert client.exists("src") == 0 and client.lrange("dst", 0, -1) == [b"a"]
        client.close()


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_quicklists_with_compressed_nodes_survive_every_save(path):
    """Lists in both encodings, small nodes (list-max-listpack-size 4) with their
    interior LZF-compressed (list-compress-depth 1), changed in the middle, saved by each
    path, kill -9, restarted: the same elements and encodings (a list of one node at
    most half full loads back as a listpack, as Redis 7.2 loads it)."""
    with SavingServer(path, ("--list-max-listpack-size", "4", "--list-compress-depth", "1")) \
            as srv:
        client = srv.client()
        raw(client, "RPUSH", "big", *[f"item-{i:04d}-" + "z" * 80 for i in range(400)])
        raw(client, "LINSERT", "big", "BEFORE", "item-0200-" + "z" * 80, "inserted")
        raw(client, "LSET", "big", 300, "replaced")
        raw(client, "LREM", "big", 0, "item-0100-" + "z" * 80)
        raw(client, "LTRIM", "big", 3, -3)
        raw(client, "RPUSH", "small", "a", "b")
        raw(client, "RPUSH", "ints", *range(-3, 9))
        before = read_out(client, NOT_KEPT[path])
        encodings = [raw(client, "OBJECT", "ENCODING", k) for k in ("big", "small", "ints")]
        assert encodings == [b"quicklist", b"listpack", b"quicklist"]
        assert raw(client, "MEMORY", "USAGE", "big") < 400 * 90 / 2      # compressed
        save_kill_restart(srv)
        client = srv.client()
        assert read_out(client, NOT_KEPT[path]) == before
        assert [raw(client, "OBJECT", "ENCODING", k) for k in ("big", "small", "ints")] \
            == encodings


@pytest.mark.parametrize("path", SAVE_PATHS)
def test_many_small_collections_packed_in_their_entries_survive_every_save(path):
    """Hundreds of small keys of each type (packed in their entries between commands),
    some changed, some with a TTL, saved by each path, kill -9, restarted: the same
    keys, values, TTLs and encodings; and changed after the restart, they go on alike."""
    with SavingServer(path) as srv:
        client = srv.client()
        pipe = client.pipeline(transaction=False)
        for k in range(300):
            pipe.rpush(f"l:{k}", k, "a", "b")
            pipe.hset(f"h:{k}", mapping={"f": k, "g": "v"})
            pipe.sadd(f"i:{k}", k, k + 1, -k)
            pipe.sadd(f"s:{k}", "a", k)
            pipe.zadd(f"z:{k}", {"m": k, "n": 0.5})
            if k % 7 == 0:
                pipe.lpop(f"l:{k}")
                pipe.hdel(f"h:{k}", "g")
                pipe.pexpire(f"z:{k}", 1_000_000)
        pipe.execute()
        before = read_out(client, NOT_KEPT[path])
        keys = ["l:5", "h:5", "i:5", "s:5", "z:5"]
        encodings = [raw(client, "OBJECT", "ENCODING", k) for k in keys]
        assert encodings == [b"listpack", b"listpack", b"intset", b"listpack", b"listpack"]
        save_kill_restart(srv)
        client = srv.client()
        assert read_out(client, NOT_KEPT[path]) == before
        assert [raw(client, "OBJECT", "ENCODING", k) for k in keys] == encodings
        raw(client, "HSET", "h:5", "new", "x")
        raw(client, "SADD", "i:5", "member")
        assert raw(client, "HGET", "h:5", "new") == b"x"
        assert raw(client, "OBJECT", "ENCODING", "i:5") == b"listpack"
