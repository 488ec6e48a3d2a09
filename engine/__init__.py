"""Sluice: a Redis-Streams-compatible stream engine, embedded in your process.

    from engine import Engine
    e = Engine()
    e.execute("XADD", "jobs", "*", "task", "resize")

`execute` takes the same arguments a Redis client sends and returns plain Python
values (bytes, int, list, None; dicts only for RESP3 maps), raising ResponseError
with Redis's error text. `EmbeddedRedis` is a `redis.Redis` whose connections run
in an engine, `AsyncEmbeddedRedis` its redis.asyncio counterpart (both imported on
first use: they load redis-py).

The package is layered, each layer importing only those below it (ARCHITECTURE.md):
core (storage) -> resp -> commands -> (persist) -> api -> server. The names below
are its public API, all that tools/ and sluice/ may use (tests/test_layers.py):

    Engine, EmbeddedRedis       the engine and a redis.Redis running in it
    AsyncEmbeddedRedis          a redis.asyncio.Redis running in it
    ResponseError, Status       an error reply; a simple-string reply (+OK)
    Clock, SystemClock,         the engine's time source; ManualClock for tests and
      ManualClock                 replays that set the time themselves
    command_keys(argv)          the key arguments of a command, by the command table
    glob_match(pattern, s)      Redis's glob matching (KEYS, SCAN MATCH, PSUBSCRIBE)
"""
from __future__ import annotations

import engine.commands  # noqa: F401  (registers every command)
from engine.api.embedded import Engine
from engine.commands.dispatch import resolve
from engine.core.clock import Clock, ManualClock, SystemClock
from engine.core.errors import ResponseError
from engine.core.glob import match as glob_match
from engine.resp.reply import Status

__all__ = ["Engine", "EmbeddedRedis", "AsyncEmbeddedRedis", "ResponseError", "Status", "Clock", "ManualClock",
           "SystemClock", "command_keys", "glob_match"]


def command_keys(argv: list) -> list:
    """The key arguments of a command (a list of bytes) by the command table's key
    positions (XGROUP CREATE's key is its third word); [] for a command the engine
    does not know or whose arguments do not fit its arity."""
    try:
        return resolve(argv).keys(argv)
    except ResponseError:
        return []


def __getattr__(name: str):
    if name == "EmbeddedRedis":
        from engine.api.client import EmbeddedRedis
        return EmbeddedRedis
    if name == "AsyncEmbeddedRedis":
        from engine.api.async_client import AsyncEmbeddedRedis
        return AsyncEmbeddedRedis
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
