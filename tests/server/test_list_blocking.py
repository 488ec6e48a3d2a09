"""Blocking list commands (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP) as Redis serves
them, the same scenarios on sluice-server (real sockets), on redis-server 7.0 and on
the embedded client (threads): waiters served oldest first, woken by a push from
another client, a push inside MULTI serving after EXEC (and not at all when the
transaction pops it again), a BLMOVE's push serving the next waiter, a key that
becomes another type leaving its waiters waiting, timeouts (float seconds)."""
from __future__ import annotations

import threading
import time
from typing import Callable

import pytest
import redis

from engine import EmbeddedRedis, Engine
from engine.api.client import _state_for
from servers import SluiceServer


class Target:
    """Clients of one server (or one embedded engine) and how many of them wait."""

    def __init__(self, make: Callable[[], redis.Redis], blocked: Callable[[], int]) -> None:
        self.make = make
        self.blocked = blocked
        self.clients: list = []

    def client(self) -> redis.Redis:
        c = self.make()
        self.clients.append(c)
        return c

    def close(self) -> None:
        for c in self.clients:
            c.close()


def server_target(port: int, host: str = "127.0.0.1") -> Target:
    info = redis.Redis(host=host, port=port)
    return Target(lambda: redis.Redis(host=host, port=port),
                  lambda: int(info.info("clients")["blocked_clients"]))


def embedded_target() -> Target:
    engine = Engine()
    state = _state_for(engine)
    return Target(lambda: EmbeddedRedis(engine),
                  lambda: state.blocked_clients.count)


@pytest.fixture(scope="module")
def sluice():
    with SluiceServer() as srv:
        yield srv


@pytest.fixture(params=["sluice", "redis", "embedded"])
def target(request, sluice, redis_server):
    if request.param == "sluice":
        t = server_target(sluice.port)
    elif request.param == "redis":
        t = server_target(redis_server[1], redis_server[0])
    else:
        t = embedded_target()
    t.client().flushall()
    yield t
    t.close()


class Waiter(threading.Thread):
    """One client's blocking command, run in a thread; `reply` once it returns."""

    def __init__(self, target: Target, *command) -> None:
        super().__init__(daemon=True)
        self.client = target.client()
        self.command = command
        self.reply = None

    def run(self) -> None:
        try:
            self.reply = self.client.execute_command(*self.command)
        except redis.ResponseError as err:
            self.reply = f"error: {err}"
        if isinstance(self.reply, tuple):
            self.reply = list(self.reply)


def wait_blocked(target: Target, n: int) -> None:
    deadline = time.monotonic() + 5
    while target.blocked() != n:
        assert time.monotonic() < deadline, f"{target.blocked()} clients blocked, not {n}"
        time.sleep(0.005)


def park(target: Target, *command) -> Waiter:
    """Starts a blocking command and returns once it waits."""
    before = target.blocked()
    w = Waiter(target, *command)
    w.start()
    wait_blocked(target, before + 1)
    return w


def finish(*waiters: Waiter) -> list:
    for w in waiters:
        w.join(5)
        assert not w.is_alive(), f"{w.command} still waits"
    return [w.reply for w in waiters]


def test_waiters_are_served_oldest_first(target):
    other = target.client()
    first = park(target, "BLPOP", "q", 5)
    second = park(target, "BRPOP", "q", "elsewhere", 5)
    third = park(target, "BLMPOP", 5, 2, "elsewhere", "q", "LEFT", "COUNT", 2)
    other.rpush("q", "a", "b", "c", "d")
    assert finish(first, second, third) == [[b"q", b"a"], [b"q", b"d"], [b"q", [b"b", b"c"]]]
    assert other.exists("q") == 0


def test_a_push_inside_multi_serves_after_exec(target):
    other = target.client()
    w = park(target, "BLPOP", "q", 5)
    pipe = other.pipeline(transaction=True)
    pipe.rpush("q", "x", "y").lpush("q", "z")
    assert pipe.execute() == [2, 3]
    assert finish(w) == [[b"q", b"z"]]
    assert other.lrange("q", 0, -1) == [b"x", b"y"]
    other.delete("q")
    w = park(target, "BLPOP", "q", 0.5)
    other.pipeline(transaction=True).rpush("q", "v").lpop("q").execute()
    start = time.monotonic()
    assert finish(w) == [None]                 # nothing left after EXEC: it timed out
    assert time.monotonic() - start > 0.1


def test_blmove_push_serves_the_next_waiter(target):
    other = target.client()
    mover = park(target, "BLMOVE", "src", "dst", "LEFT", "RIGHT", 5)
    popper = park(target, "BLPOP", "dst", 5)
    chained = park(target, "BRPOPLPUSH", "dst2", "dst", 5)
    other.rpush("src", "v")
    assert finish(mover, popper) == [b"v", [b"dst", b"v"]]
    other.rpush("dst2", "w")
    assert finish(chained) == [b"w"]
    assert other.lrange("dst", 0, -1) == [b"w"] and other.exists("src") == 0


def test_another_type_keeps_waiters_waiting(target):
    other = target.client()
    w = park(target, "BLPOP", "k", 0.4)
    other.set("k", "string")
    other.delete("k")
    other.hset("k", "f", "v")
    assert finish(w) == [None]
    other.delete("k")
    w = park(target, "BLPOP", "k", 5)
    other.rpush("k", "late")
    assert finish(w) == [[b"k", b"late"]]


def test_timeouts_and_zero_forever(target):
    other = target.client()
    start = time.monotonic()
    assert finish(park(target, "BLPOP", "none", 0.2)) == [None]
    assert 0.15 < time.monotonic() - start < 3
    assert finish(park(target, "BLMOVE", "none", "x", "LEFT", "LEFT", 0.1)) == [None]
    forever = park(target, "BRPOP", "q", 0)
    time.sleep(0.3)
    assert forever.is_alive()
    other.lpush("q", "late")
    assert finish(forever) == [[b"q", b"late"]]


def test_async_client_waits_off_the_event_loop():
    """AsyncEmbeddedRedis runs a blocking command in a thread: the loop keeps going and
    a push from another coroutine serves it."""
    import asyncio
    from engine import AsyncEmbeddedRedis

    async def scenario():
        r = AsyncEmbeddedRedis()
        waiting = asyncio.create_task(r.blpop(["q"], 5))
        await asyncio.sleep(0.1)
        assert not waiting.done()
        await r.rpush("q", "v")
        return await asyncio.wait_for(waiting, 5)

    assert list(asyncio.run(scenario())) == [b"q", b"v"]


def test_blmove_to_another_type_is_answered_wrongtype(target):
    """Served when its source gets an element, BLMOVE finds its destination of another
    type: WRONGTYPE, the element stays (7.0 and newest Redis alike)."""
    other = target.client()
    w = park(target, "BLMOVE", "src", "dst", "LEFT", "LEFT", 5)
    other.set("dst", "x")
    other.rpush("src", "v")
    assert finish(w) == ["error: WRONGTYPE Operation against a key holding the wrong kind of value"]
    assert other.lrange("src", 0, -1) == [b"v"]


SUB_MILLISECOND = [
    ("BLPOP", "q", "0.001"), ("BLPOP", "q", "0.0001"), ("BLPOP", "q", "0.0009"),
    ("BRPOP", "q", "0.001"), ("BLMPOP", "0.001", 1, "q", "LEFT"),
    ("BLMOVE", "q", "d", "LEFT", "LEFT", "0.0009"), ("BRPOPLPUSH", "q", "d", "0.001"),
    ("BZPOPMIN", "z", "0.001"), ("BZPOPMAX", "z", "0.0001"),
    ("BZMPOP", "0.0009", 1, "z", "MIN"), ("XREAD", "BLOCK", 1, "STREAMS", "s", "$"),
]


def test_timeouts_under_a_millisecond_answer_nil_at_once(target):
    """A positive timeout under a millisecond (0.001 itself is 0.99999... ms as a long
    double) waits one millisecond, as Redis rounds it: it does not mean forever, and
    the command does not linger to take a later push."""
    other = target.client()
    waiters = [Waiter(target, *command) for command in SUB_MILLISECOND]
    for w in waiters:
        w.start()
    start = time.monotonic()
    replies = finish(*waiters)
    assert time.monotonic() - start < 3
    assert replies == [None] * (len(SUB_MILLISECOND) - 1) + [[]]     # redis-py: XREAD nil
    assert target.blocked() == 0
    other.rpush("q", "v")
    other.zadd("z", {"m": 1})
    assert other.lrange("q", 0, -1) == [b"v"] and other.zcard("z") == 1
