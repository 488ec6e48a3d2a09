"""AsyncEmbeddedRedis: redis.asyncio's methods on the embedded engine. It wraps
EmbeddedRedis (whose replies tests/api/test_client.py compares with redis-server), so
these tests check the wrapping: replies and errors equal to the sync client's, a
blocking read that leaves the event loop running, scripts, and the clear refusal of
what it does not run."""
from __future__ import annotations

import asyncio
import time

import pytest
import redis

from engine import AsyncEmbeddedRedis, EmbeddedRedis, Engine


def run(coro):
    return asyncio.run(coro)


@pytest.mark.parametrize("options", [{}, {"decode_responses": True}, {"protocol": 3}],
                         ids=["bytes", "decoded", "resp3"])
def test_replies_and_errors_are_the_sync_clients(options: dict) -> None:
    engine = Engine()
    sync = EmbeddedRedis(engine, **options)

    async def steps(client) -> list:
        out = []
        for call in (lambda: client.xadd("s", {"f": "v"}, id="1-0"),
                     lambda: client.xgroup_create("s", "g", id="0"),
                     lambda: client.xreadgroup("g", "c", {"s": ">"}, count=5),
                     lambda: client.xpending_range("s", "g", "-", "+", 10),
                     lambda: client.xadd("s", {"f": "v"}, id="1-0"),          # ID too small
                     lambda: client.execute_command("XADD", "s"),             # arity
                     lambda: client.set("k", "v", px=60_000), lambda: client.get("k")):
            try:
                result = call()
                out.append(await result if asyncio.iscoroutine(result) else result)
            except redis.RedisError as error:
                out.append((type(error), str(error)))
        return out

    async def on_async() -> list:
        client = AsyncEmbeddedRedis(Engine(), **options)
        try:
            return await steps(client)
        finally:
            await client.aclose()

    expected = run(steps(sync))
    got = run(on_async())
    for row in (expected, got):          # the pending entry's idle time is the clock's
        for pending in row[3]:
            del pending["time_since_delivered"]
    assert got == expected
    assert isinstance(got[4], tuple) and got[4][0] is redis.ResponseError


def test_a_blocking_read_leaves_the_loop_running() -> None:
    """XREADGROUP BLOCK waits off the loop: another task of the same loop writes, and
    that write wakes the read (a blocked loop would see nothing until the timeout)."""
    async def scenario() -> tuple:
        client = AsyncEmbeddedRedis(decode_responses=True)
        await client.xgroup_create("s", "g", id="0", mkstream=True)

        async def write_later() -> str:
            await asyncio.sleep(0.2)
            return await client.xadd("s", {"n": "1"})
        writer = asyncio.create_task(write_later())
        started = time.monotonic()
        reply = await client.xreadgroup("g", "c", {"s": ">"}, count=1, block=10_000)
        waited = time.monotonic() - started
        await client.aclose()
        return reply, await writer, waited

    reply, added, waited = run(scenario())
    assert reply == [["s", [(added, {"n": "1"})]]]
    assert waited < 8, f"the read waited {waited:.1f} s: the loop did not run the writer"


def test_clients_of_one_engine_share_its_data_and_scripts() -> None:
    engine = Engine()
    sync = EmbeddedRedis(engine, decode_responses=True)

    async def scenario() -> list:
        client = AsyncEmbeddedRedis(engine, decode_responses=True)
        script = client.register_script("return redis.call('INCRBY', KEYS[1], ARGV[1])")
        first = await script(keys=["n"], args=[2])       # NOSCRIPT, then EVAL's fallback
        second = await script(keys=["n"], args=[3])      # EVALSHA
        sync.set("from-sync", "1")
        seen = await client.get("from-sync")
        await client.aclose()
        return [first, second, seen, client.engine is engine]

    assert run(scenario()) == [2, 5, "1", True]
    assert sync.get("n") == "5"


def test_pipelines_and_pubsub_are_refused_clearly() -> None:
    async def scenario() -> list:
        client = AsyncEmbeddedRedis()
        errors = []
        for attempt in (lambda: client.pipeline().set("k", "v").execute(),
                        lambda: client.pubsub().subscribe("ch")):
            with pytest.raises(NotImplementedError) as refused:
                await attempt()
            errors.append(str(refused.value))
        await client.aclose()
        return errors

    for message in run(scenario()):
        assert "no pipelines, MULTI/EXEC or pub/sub" in message
