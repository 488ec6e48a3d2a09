"""Sluice: a Redis-Streams-compatible stream engine, embedded in your process.

    from engine import Engine
    e = Engine()
    e.execute("XADD", "jobs", "*", "task", "resize")

`execute` takes the same arguments a Redis client sends and returns plain Python
values (bytes, int, list, None; dicts only for RESP3 maps), raising ResponseError
with Redis's error text.
"""
import engine.commands  # noqa: F401  (registers every command)
from engine.clock import Clock, ManualClock, SystemClock
from engine.embedded import Engine
from engine.errors import ResponseError
from engine.reply import Status

__all__ = ["Engine", "ResponseError", "Status", "Clock", "ManualClock", "SystemClock"]
