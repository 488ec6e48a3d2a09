"""SWAPDB as redis-server 7.0 does it: replies and errors, the clients of each database
see the other's keys, a WATCHed key present in either database aborts EXEC, blocked
readers whose key the swap brings are served, the keyspace events (none); and it
survives kill -9 (AOF replay) and a restart from a snapshot, with either AOF base."""
from __future__ import annotations

import signal
import threading

import pytest
import redis

from differential import run_both
from keyspace_events import notifications
from servers import SluiceServer
from test_keys_strings import cmds

SEQUENCE = cmds("""
    SET a 0
    SELECT 1
    SET b 1
    RPUSH l x y
    SWAPDB 0 1
    GET b
    GET a
    DBSIZE
    SELECT 0
    GET b
    LRANGE l 0 -1
    SWAPDB 0 0
    SWAPDB 1 0
    GET a
    SWAPDB x 1
    SWAPDB 0 x
    SWAPDB x y
    SWAPDB -1 0
    SWAPDB 0 16
    SWAPDB 0 99999999999
    SWAPDB 99999999999 x
    SWAPDB 1.5 0
    SWAPDB 0
    SWAPDB 0 1 2
    SWAPDB 15 3
    SELECT 15
    GET a
""")


def test_swapdb_replies_match_redis(engine, oracle):
    run_both(engine, oracle, SEQUENCE, label="SWAPDB")


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


def ports(sluice, redis_server) -> list[int]:
    return [sluice.port, redis_server[1]]


def watch_outcomes(port: int) -> list:
    """EXEC after a SWAPDB by another client, for a watched key in db 0 that is in db 0
    only, db 1 only, neither, or in db 2 (another pair swapped)."""
    setup = redis.Redis(port=port)
    setup.flushall()
    outcomes = []
    for where in (0, 1, None, 2):
        setup.flushall()
        if where is not None:
            redis.Redis(port=port, db=where).set("k", "v")
        watcher = redis.Redis(port=port).pipeline(transaction=True)
        watcher.watch("k")
        setup.execute_command("SWAPDB", *((0, 1) if where != 2 else (2, 3)))
        watcher.multi()
        watcher.set("marker", 1)
        try:
            outcomes.append(watcher.execute())
        except redis.WatchError:
            outcomes.append("aborted")
        watcher.reset()
    setup.flushall()
    return outcomes


def test_swapdb_dirties_watched_keys_as_redis(sluice, redis_server):
    ours, theirs = (watch_outcomes(port) for port in ports(sluice, redis_server))
    assert theirs == ["aborted", "aborted", [True], [True]]
    assert ours == theirs


def served_by_swap(port: int) -> list:
    """A BLPOP on db 0 for a key that only db 1 holds, then SWAPDB 0 1."""
    setup = redis.Redis(port=port)
    setup.flushall()
    redis.Redis(port=port, db=1).rpush("l", "from-1")
    got = []
    reader = redis.Redis(port=port)
    thread = threading.Thread(target=lambda: got.append(reader.blpop(["l"], timeout=5)))
    thread.start()
    while setup.info("clients")["blocked_clients"] < 1:
        pass
    setup.execute_command("SWAPDB", 0, 1)
    thread.join(10)
    got.append(redis.Redis(port=port, db=1).exists("l"))
    got.append(setup.info("clients")["blocked_clients"])
    setup.flushall()
    return got


def test_swapdb_serves_blocked_readers_as_redis(sluice, redis_server):
    ours, theirs = (served_by_swap(port) for port in ports(sluice, redis_server))
    assert theirs == [(b"l", b"from-1"), 0, 0]
    assert ours == theirs


def test_swapdb_keyspace_events_match_redis(sluice, redis_server):
    commands = [("SET", "a", "1"), ("SWAPDB", 0, 1), ("SET", "a", "2"), ("SWAPDB", 1, 0)]
    ours, theirs = (notifications("127.0.0.1", port, commands, "KEAn", "__key*@*__:*")
                    for port in ports(sluice, redis_server))
    assert ours == theirs


def fill_and_swap(client: redis.Redis) -> None:
    client.flushall()
    client.set("in0", "zero")
    client.execute_command("SELECT", 1)      # one connection: redis-py has no pool here
    client.set("in1", "one")
    client.rpush("list1", "a", "b")
    client.execute_command("SWAPDB", 0, 1)
    client.execute_command("SWAPDB", 1, 2)


def check_swapped(port: int) -> None:
    db = {i: redis.Redis(port=port, db=i) for i in range(3)}
    assert sorted(db[0].keys()) == [b"in1", b"list1"] and db[0].lrange("list1", 0, -1) == [b"a", b"b"]
    assert db[1].keys() == [] and db[2].keys() == [b"in0"] and db[2].get("in0") == b"zero"


@pytest.mark.parametrize("preamble", ["yes", "no"])
def test_swapdb_survives_kill_9_and_restarts(tmp_path, preamble):
    args = ["--appendonly", "yes", "--appendfsync", "always", "--save", "",
            "--aof-use-rdb-preamble", preamble]
    server = SluiceServer(args, workdir=str(tmp_path)).start()
    try:
        client = redis.Redis(port=server.port, single_connection_client=True)
        fill_and_swap(client)
        server.stop(signal.SIGKILL)          # the AOF replays SWAPDB
        server.start()
        check_swapped(server.port)
        client = redis.Redis(port=server.port)
        assert client.execute_command("BGREWRITEAOF")
        while client.info("persistence")["aof_rewrite_in_progress"]:
            pass
        assert client.save()
        server.stop(signal.SIGKILL)          # the rewritten AOF's base
        server.start()
        check_swapped(server.port)
    finally:
        server.stop()


def test_swapdb_then_snapshot(tmp_path):
    server = SluiceServer(["--save", ""], workdir=str(tmp_path)).start()
    try:
        client = redis.Redis(port=server.port, single_connection_client=True)
        fill_and_swap(client)
        assert client.save()
        server.stop(signal.SIGKILL)
        server.start()
        check_swapped(server.port)
    finally:
        server.stop()
