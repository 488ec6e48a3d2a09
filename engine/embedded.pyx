"""The embedded engine: the whole keyspace plus the command layer, driven by
`execute`. Written in Cython so that a call costs no Python frame of ours."""
import weakref

from libc.stdint cimport uint64_t

from engine.clock cimport Clock, SystemClock
from engine.keyspace cimport Database
from engine.commands.context cimport CommandContext
from engine.commands.dispatch cimport dispatch, drain_expired, to_argv
from engine.memory cimport mem_used


cdef class Engine:
    """In-process Sluice. `execute(*args)` takes what a Redis client sends (bytes,
    str, int, float) and returns plain Python values, raising ResponseError with
    Redis's error text.

    Stream-entry lists in replies are not tracked by Python's cycle collector (see
    engine/reply_lists.pxd): use them freely, but a reference cycle you build through
    one of them is not collected."""

    cdef readonly Clock clock
    cdef readonly list databases
    cdef public uint64_t stream_node_max_bytes
    cdef public uint64_t stream_node_max_entries
    cdef readonly list effect_listeners
    cdef object _contexts
    cdef CommandContext _ctx
    cdef object __weakref__

    def __init__(self, Clock clock=None, *, int databases=16,
                 uint64_t stream_node_max_bytes=4096,
                 uint64_t stream_node_max_entries=100):
        self.clock = clock if clock is not None else SystemClock()
        self.databases = [Database(i) for i in range(databases)]
        self.stream_node_max_bytes = stream_node_max_bytes
        self.stream_node_max_entries = stream_node_max_entries
        self.effect_listeners = []
        self._contexts = weakref.WeakSet()
        self._ctx = self.new_context()

    def new_context(self, int db=0, bint resp3=False) -> CommandContext:
        """A context for one caller (a client connection has its own)."""
        cdef CommandContext ctx = CommandContext(self, self.databases[db])
        ctx.resp3 = resp3
        ctx.node_max_bytes = self.stream_node_max_bytes
        ctx.node_max_entries = self.stream_node_max_entries
        ctx.logging = bool(self.effect_listeners)
        self._contexts.add(ctx)
        return ctx

    def add_effect_listener(self, listener) -> None:
        """listener(db_index, effects) runs after every command that changed
        something. Effects are only built while someone listens (the AOF, tests)."""
        self.effect_listeners.append(listener)
        for ctx in self._contexts:
            (<CommandContext>ctx).logging = True

    def execute(self, *args):
        """Runs one command; returns its reply or raises ResponseError."""
        return self.run(self._ctx, to_argv(args))

    def execute_in(self, CommandContext ctx, list argv):
        """Runs argv (a list of bytes) in the given context."""
        return self.run(ctx, argv)

    cdef object run(self, CommandContext ctx, list argv):
        try:
            return dispatch(ctx, argv)
        finally:
            self.flush(ctx)

    cdef void flush(self, CommandContext ctx) except *:
        """Hands the command's effects to the listeners and resets the context."""
        if ctx.effects:
            effects = ctx.effects
            ctx.effects = []
            for listener in self.effect_listeners:
                listener(ctx.db.index, effects)
        if ctx.touched:
            ctx.touched = []
        if ctx.events:
            ctx.events = []

    def active_expire(self, int limit=200) -> list:
        """Removes keys whose TTL has passed even if nobody reads them (the server
        calls this on a timer). Logs each as DEL; returns the `expired` events as
        (db index, key) pairs."""
        cdef CommandContext ctx
        cdef list fired = []
        now = self.clock.now_ms()
        for db in self.databases:
            if (<Database>db).expires and (<Database>db).sweep_expired(now, limit):
                ctx = self.new_context((<Database>db).index)
                ctx.tracking = True
                drain_expired(ctx)
                fired.extend(((<Database>db).index, key) for key in ctx.touched)
                self.flush(ctx)
        return fired

    def select(self, int index) -> None:
        """Makes `execute` use database `index` (SELECT for the embedded API)."""
        self._ctx.db = self.databases[index]

    def used_memory(self) -> int:
        """Bytes held for stored data (INFO's used_memory): the exact C allocations
        of streams and their indexes, plus the Python objects of keys and strings."""
        return mem_used() + sum([(<Database>db).object_bytes for db in self.databases])
