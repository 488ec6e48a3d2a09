"""WAITAOF in the engine and the embedded clients (EmbeddedRedis, AsyncEmbeddedRedis),
following redis.io's WAITAOF page and the standalone cases of Redis's tests/unit/wait.tcl
(the server's port: tests/server/test_waitaof_server.py): the reply [local, replicas], each
error, what "this client's writes" means (its last logged write: Redis's woff, of a
transaction or a script once it ends), and the wait under each appendfsync policy.

redis-server 7.0 (the oracle) has no WAITAOF: engine-only tests (tests/differential.py
lists the difference)."""
from __future__ import annotations

import asyncio
import threading
import time

import pytest
import redis

from engine import Engine
from engine.api.async_client import AsyncEmbeddedRedis
from engine.api.client import EmbeddedRedis, engine_lock
from engine.api.session import BlockedRead, Hub, Session
from engine.commands.table import COMMANDS
from engine.core.errors import ResponseError

AOF_OFF = "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
EVERYSEC_BOUND_S = 3.0      # the sync thread fsyncs once a second; slack for a busy machine


def persistent(tmp_path, policy: str) -> Engine:
    return Engine(dir=str(tmp_path), appendonly=True, appendfsync=policy, save=[])


def timed(call, *args) -> tuple:
    started = time.monotonic()
    reply = call(*args)
    return reply, time.monotonic() - started


def test_the_record_is_redis_7_2s():
    record = COMMANDS[b"waitaof"]
    assert (record.arity, record.flags, record.first_key, record.group, record.since) \
        == (4, ("blocking",), 0, "generic", "7.2.0")
    assert record.acl_categories == ("@slow", "@blocking", "@connection")
    assert not record.write and not record.no_multi


@pytest.mark.parametrize("argv, error", [
    (("x", 0, 0), "ERR value is not an integer or out of range"),
    (("1.0", 0, 0), "ERR value is not an integer or out of range"),
    ((" 1", 0, 0), "ERR value is not an integer or out of range"),
    ((2, 0, 0), "ERR value is out of range, value must between 0 and 1"),
    ((-1, 0, 0), "ERR value is out of range, value must between 0 and 1"),
    ((0, "+1", 0), "ERR value is not an integer or out of range"),
    ((0, -1, 0), "ERR value is out of range, must be positive"),
    ((0, 0, "x"), "ERR timeout is not an integer or out of range"),
    ((0, 0, "9223372036854775808"), "ERR timeout is not an integer or out of range"),
    ((0, 0, "9223372036854775807"), "ERR timeout is out of range"),
    ((0, 0, -1), "ERR timeout is negative"),
    ((5, -1, -1), "ERR value is out of range, value must between 0 and 1"),   # first first
    ((1, 0, -1), "ERR timeout is negative"),           # before the appendonly check
    ((1, 0, 0), AOF_OFF),
    ((0, 0), "ERR wrong number of arguments for 'waitaof' command"),
    ((0, 0, 0, 0), "ERR wrong number of arguments for 'waitaof' command"),
])
def test_errors_in_redis_order(argv, error):
    with pytest.raises(ResponseError) as raised:
        Engine().execute("WAITAOF", *argv)
    assert str(raised.value) == error


def test_without_an_aof_the_local_count_is_0():
    engine = Engine()
    engine.execute("SET", "k", "v")
    assert engine.execute("WAITAOF", 0, 0, 0) == [0, 0]
    assert engine.execute("WAITAOF", 0, 2, 0) == [0, 0]    # may not block: at once


@pytest.mark.parametrize("policy, local", [("always", 1), ("no", 0)])
def test_execute_answers_at_once_what_is_fsynced(tmp_path, policy, local):
    """Engine.execute is a caller that may not block: the reply is what holds now. A
    write returns with its AOF write done, and under always its fsync (everysec's
    answer depends on when its thread last ran: the embedded client's tests below)."""
    engine = persistent(tmp_path, policy)
    try:
        assert engine.execute("WAITAOF", 1, 0, 0) == [1, 0]     # nothing written yet
        engine.execute("SET", "k", "v")
        assert engine.execute("WAITAOF", 1, 0, 0) == [local, 0]
        engine.durability.set_appendfsync("always")             # fsyncs what was written
        assert engine.execute("WAITAOF", 1, 0, 0) == [1, 0]
    finally:
        engine.close()


def test_a_clients_own_writes_count_not_the_others(tmp_path):
    """A client that wrote nothing has all its writes on disk (wait.tcl: "master client
    didn't send any write command"), however much others wrote; a write that logs
    nothing (DEL of a missing key) is no write."""
    engine = persistent(tmp_path, "no")
    try:
        hub = Hub(engine)
        writer, idle = Session(hub), Session(hub)
        writer.call([b"INCR", b"n"])
        assert idle.call([b"WAITAOF", b"1", b"0", b"0"]) == [1, 0]
        idle.call([b"DEL", b"missing"])
        assert idle.call([b"WAITAOF", b"1", b"0", b"0"]) == [1, 0]
        blocked = writer.call([b"WAITAOF", b"1", b"0", b"0"])
        assert isinstance(blocked, BlockedRead)
        assert blocked.on_fsync and blocked.timeout_ms == 0
        assert blocked.retry() == (False, None)
        assert blocked.timeout_reply() == [0, 0]
        engine.durability.set_appendfsync("always")
        assert blocked.retry() == (True, [1, 0])
    finally:
        engine.close()


def test_a_transactions_writes_count_when_it_ends(tmp_path):
    """Inside EXEC WAITAOF answers about the writes before the transaction (Redis
    updates a client's write offset when its top-level command is done); the
    transaction's, and a script's, are the client's last write once they end."""
    engine = persistent(tmp_path, "no")
    try:
        session = Session(Hub(engine))
        for argv in ([b"MULTI"], [b"INCR", b"n"], [b"WAITAOF", b"1", b"1", b"0"]):
            session.call(argv)
        assert session.call([b"EXEC"]) == [1, [1, 0]]
        assert isinstance(session.call([b"WAITAOF", b"1", b"0", b"0"]), BlockedRead)
        engine.durability.set_appendfsync("always")
        assert session.call([b"WAITAOF", b"1", b"0", b"0"]) == [1, 0]
        engine.durability.set_appendfsync("no")
        script = b"redis.call('incr', 'n') return redis.call('waitaof', 1, 1, 0)"
        assert session.call([b"EVAL", script, b"0"]) == [1, 0]      # at once, in it
        assert isinstance(session.call([b"WAITAOF", b"1", b"0", b"0"]), BlockedRead)
    finally:
        engine.close()


# -- the embedded client ------------------------------------------------------------------

@pytest.mark.parametrize("policy", ["always", "everysec"])
def test_embedded_waits_until_its_writes_are_fsynced(tmp_path, policy):
    engine = persistent(tmp_path, policy)
    r = EmbeddedRedis(engine)
    try:
        r.xadd("s", {"f": "v"})
        reply, took = timed(r.waitaof, 1, 0, 0)
        assert reply == [1, 0]
        assert took < (0.5 if policy == "always" else EVERYSEC_BOUND_S)
        assert engine.durability.fsynced_seq == engine.effects_seq
        pipe = r.pipeline(transaction=False)            # the write and WAITAOF in one batch
        pipe.xadd("s", {"f": "v"})
        pipe.waitaof(1, 0, 0)
        pipe.xlen("s")
        assert pipe.execute()[1:] == [[1, 0], 2]
    finally:
        engine.close()


def test_embedded_under_no_answers_0_at_the_timeout(tmp_path):
    """wait.tcl's "WAITAOF local copy before fsync"."""
    engine = persistent(tmp_path, "no")
    r = EmbeddedRedis(engine)
    try:
        r.incr("foo")
        reply, took = timed(r.waitaof, 1, 0, 50)
        assert reply == [0, 0] and took >= 0.045
        reply, took = timed(r.waitaof, 0, 1, 100)      # replicas: the whole timeout
        assert reply == [0, 0] and took >= 0.095
    finally:
        engine.close()


def test_embedded_waiters_wake_on_the_fsync_and_on_aof_off(tmp_path):
    """Two threads wait under `no`; the fsync of switching to everysec answers the
    first (its writes), the AOF turned off the second (its error), as wait.tcl's
    "WAITAOF local wait and then stop aof"."""
    engine = persistent(tmp_path, "no")
    first, second = EmbeddedRedis(engine), EmbeddedRedis(engine)
    replies: dict = {}

    def wait(name: str, client: EmbeddedRedis, numreplicas: int) -> None:
        client.incr(name)
        try:
            replies[name] = client.waitaof(1, numreplicas, 10_000)
        except redis.ResponseError as error:
            replies[name] = str(error)

    try:
        threads = [threading.Thread(target=wait, args=("a", first, 0)),
                   threading.Thread(target=wait, args=("b", second, 1))]
        for thread in threads:
            thread.start()
        time.sleep(0.3)
        assert replies == {}
        with engine_lock(engine):
            engine.durability.set_appendfsync("everysec")
        threads[0].join(2)
        assert replies == {"a": [1, 0]}          # b asked for a replica: still waiting
        with engine_lock(engine):
            engine.durability.set_appendonly(False)
        threads[1].join(2)
        assert replies["b"] == AOF_OFF[4:]
    finally:
        engine.close()


def test_async_client_waits_off_the_loop(tmp_path):
    engine = persistent(tmp_path, "everysec")

    async def steps() -> list:
        client = AsyncEmbeddedRedis(engine)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.05)
                ticks += 1

        ticker = asyncio.create_task(tick())
        try:
            await client.incr("n")
            reply = await client.waitaof(1, 0, 0)
            return [reply, ticks > 0]
        finally:
            ticker.cancel()
            await client.aclose()

    try:
        assert asyncio.run(steps()) == [[1, 0], True]
    finally:
        engine.close()
