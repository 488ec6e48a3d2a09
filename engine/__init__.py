"""Sluice: a Redis-Streams-compatible stream engine, embedded in your process.

    from engine import Engine
    e = Engine()
    e.execute("XADD", "jobs", "*", "task", "resize")

`execute` takes the same arguments a Redis client sends and returns plain Python
values (bytes, int, list, None; dicts only for RESP3 maps), raising ResponseError
with Redis's error text.
"""
from __future__ import annotations

import weakref
from typing import Callable, Optional, Union

from engine.clock import ManualClock, SystemClock
from engine.errors import ResponseError
from engine.reply import Status

import engine.commands  # noqa: F401  (registers every command)
from engine.commands.context import CommandContext
from engine.commands.dispatch import dispatch, to_argv
from engine.keyspace import Database

__all__ = ["Engine", "ResponseError", "Status", "ManualClock", "SystemClock"]

Arg = Union[bytes, str, int, float]
# (database index, effects of one command) -> None
EffectListener = Callable[[int, list], None]


class Engine:
    """The whole keyspace plus the command layer, driven by `execute`."""

    def __init__(self, clock=None, *, databases: int = 16,
                 stream_node_max_bytes: int = 4096,
                 stream_node_max_entries: int = 100) -> None:
        self.clock = clock if clock is not None else SystemClock()
        self.databases = [Database(i) for i in range(databases)]
        self.stream_node_max_bytes = stream_node_max_bytes
        self.stream_node_max_entries = stream_node_max_entries
        self.effect_listeners: list[EffectListener] = []
        self._contexts: "weakref.WeakSet[CommandContext]" = weakref.WeakSet()
        self._ctx = self.new_context()

    def new_context(self, db: int = 0, resp3: bool = False) -> CommandContext:
        """A context for one caller (a client connection has its own)."""
        ctx = CommandContext(self, self.databases[db])
        ctx.resp3 = resp3
        ctx.node_max_bytes = self.stream_node_max_bytes
        ctx.node_max_entries = self.stream_node_max_entries
        ctx.logging = bool(self.effect_listeners)
        self._contexts.add(ctx)
        return ctx

    def add_effect_listener(self, listener: EffectListener) -> None:
        """Receives (db index, effects) after every command that changed something.

        Effects are only built while someone listens (the AOF, replication, tests)."""
        self.effect_listeners.append(listener)
        for ctx in self._contexts:
            ctx.logging = True

    def execute(self, *args: Arg):
        """Runs one command; returns its reply or raises ResponseError."""
        return self.execute_in(self._ctx, to_argv(args))

    def execute_in(self, ctx: CommandContext, argv: list):
        """Runs argv (a list of bytes) in the given context."""
        try:
            return dispatch(ctx, argv)
        finally:
            if ctx.effects:
                effects, ctx.effects = ctx.effects, []
                for listener in self.effect_listeners:
                    listener(ctx.db.index, effects)
            if ctx.touched:
                ctx.touched = []
            if ctx.events:
                ctx.events = []

    def select(self, index: int) -> None:
        """Makes `execute` use database `index` (SELECT for the embedded API)."""
        self._ctx.db = self.databases[index]

    def used_memory(self) -> int:
        """Bytes allocated for stored data (INFO's used_memory)."""
        from engine.memory import used_bytes
        return used_bytes()
