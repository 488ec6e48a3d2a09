"""Sluice: a Redis-Streams-compatible stream engine, embedded in your process.

    from engine import Engine
    e = Engine()
    e.execute("XADD", "jobs", "*", "task", "resize")

`execute` takes the same arguments a Redis client sends and returns plain Python
values (bytes, int, list, None; dicts only for RESP3 maps), raising ResponseError
with Redis's error text. `EmbeddedRedis` is a `redis.Redis` whose connections run
in an engine (imported on first use: it loads redis-py).

The package is layered, each layer importing only those below it (ARCHITECTURE.md):
core (storage) -> resp -> commands -> (persist) -> api -> server.
"""
import engine.commands  # noqa: F401  (registers every command)
from engine.api.embedded import Engine
from engine.core.clock import Clock, ManualClock, SystemClock
from engine.core.errors import ResponseError
from engine.resp.reply import Status

__all__ = ["Engine", "EmbeddedRedis", "ResponseError", "Status", "Clock", "ManualClock",
           "SystemClock"]


def __getattr__(name: str):
    if name == "EmbeddedRedis":
        from engine.api.client import EmbeddedRedis
        return EmbeddedRedis
    raise AttributeError(f"module 'engine' has no attribute {name!r}")
