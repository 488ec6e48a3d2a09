"""The embedded engine: the whole keyspace plus the command layer, driven by
`execute`. Written in Cython so that a call costs no Python frame of ours."""
import atexit
import logging
import os
import weakref

from libc.stdint cimport int64_t, uint64_t
import time

from engine.core.clock cimport Clock, SystemClock
from engine.core.encoding_limits cimport EncodingLimits
from engine.core.keyspace cimport Database, Keyspace
from engine.commands.context cimport CommandContext
from engine.commands.dispatch cimport dispatch, drain_expired, to_argv
from engine.core.memory cimport MemoryAccount
from engine.core.eviction cimport Evictor

# Persistent engines still open, closed at interpreter exit (see Engine.close).
_open_engines = weakref.WeakSet()


def _close_open_engines() -> None:
    cdef Engine engine
    for engine in list(_open_engines):
        try:
            engine.close_if_owned()
        except Exception:  # noqa: BLE001 - reported; the other engines still close
            logging.getLogger("sluice").exception("Closing an embedded engine at exit failed")


atexit.register(_close_open_engines)


cdef double _tenacity_seconds(int tenacity):
    """How long one round of eviction may run: Redis's curve (500 us at 10, growing
    15% a step beyond), none at 100."""
    if tenacity >= 100:
        return 1e9
    if tenacity <= 10:
        return 500e-6 * tenacity / 10 if tenacity > 0 else 0.0
    return 500e-6 * (1.15 ** (tenacity - 10))


cdef class Engine:
    """In-process Sluice. `execute(*args)` takes what a Redis client sends (bytes,
    str, int, float) and returns plain Python values, raising ResponseError with
    Redis's error text.

    Stream-entry lists in replies are not tracked by Python's cycle collector (see
    engine/core/reply_lists.pxd): use them freely, but a reference cycle you build through
    one of them is not collected."""

    cdef readonly Clock clock
    cdef readonly Keyspace keyspace     # every database and their memory: what commands see
    cdef readonly list databases        # the keyspace's
    cdef public uint64_t stream_node_max_bytes
    cdef public uint64_t stream_node_max_entries
    cdef readonly EncodingLimits encoding_limits   # set-/hash-/list-max-* (CONFIG SET changes it)
    cdef readonly list effect_listeners
    cdef readonly long long dirty       # changes so far (save points count them)
    cdef readonly long long effects_seq # batches of effects handed to the listeners so far:
                                        # a position in the log (see flush)
    cdef readonly object durability     # persist.Durability, or None
    cdef readonly MemoryAccount memory  # the C allocations of its stored data
    cdef readonly Evictor evictor       # maxmemory-policy and maxmemory-samples
    cdef public int eviction_tenacity   # maxmemory-eviction-tenacity (0-100)
    cdef readonly long long evicted_keys
    cdef public object scripting        # Lua and the script cache (engine/api/scripts.py)
    cdef public object functions        # FUNCTION's libraries (engine/api/functions.py)
    cdef int _tx_depth                  # inside EXEC: effects are bracketed by MULTI/EXEC
    cdef bint _tx_logged                # MULTI already handed to the listeners
    cdef object _contexts
    cdef CommandContext _ctx
    cdef object _end_of_call            # durability's, when it is ours to drive
    cdef int _batch_depth               # inside begin_batch ... end_batch
    cdef bint _changed                  # something changed since the last end of call
    cdef bint _closed
    cdef int _owner_pid                 # a forked child leaves the files to its parent
    cdef object __weakref__

    def __init__(self, Clock clock=None, *, int databases=16,
                 uint64_t stream_node_max_bytes=4096,
                 uint64_t stream_node_max_entries=100, int stream_idmp_duration=100,
                 int stream_idmp_maxsize=100, EncodingLimits encoding_limits=None, dir=None,
                 bint appendonly=False, str appendfsync="everysec",
                 uint64_t maxmemory=0, str maxmemory_policy="noeviction",
                 int maxmemory_samples=5, int maxmemory_eviction_tenacity=10,
                 int lfu_log_factor=10, int lfu_decay_time=1, **persistence):
        """With `dir`, the engine is persistent: it loads that directory now and logs
        every write to its AOF (`appendonly`, fsync policy `appendfsync`: always,
        everysec or no), and snapshots at its `save` points (Redis's by default) and
        on close. More options (dbfilename, aof_use_rdb_preamble, aof_load_truncated,
        auto_aof_rewrite_percentage, ...) are those of persist.Durability.
        `encoding_limits` (engine.core.encoding_limits.EncodingLimits, Redis's defaults
        without it) holds this engine's set-max-*/hash-max-*/list-* thresholds; changing its
        attributes takes effect at the next change of each collection.
        What each call changed is handed to the OS when it returns (README.md,
        "What each mode survives"). Call close() (or use `with`) when done; an
        engine dropped unclosed, or open at interpreter exit, is closed then.
        `maxmemory` (bytes; 0: no limit) and the eviction settings are Redis's
        directives of the same names (see make_room)."""
        self.clock = clock if clock is not None else SystemClock()
        self.memory = MemoryAccount()
        self.keyspace = Keyspace(databases, self.memory, stream_idmp_duration,
                                 stream_idmp_maxsize)
        self.databases = self.keyspace.databases
        self.encoding_limits = encoding_limits if encoding_limits is not None else EncodingLimits()
        self.maxmemory = maxmemory
        self.eviction_tenacity = maxmemory_eviction_tenacity
        self.set_eviction_policy(maxmemory_policy, maxmemory_samples)
        self.set_lfu_params(lfu_log_factor, lfu_decay_time)
        self.stream_node_max_bytes = stream_node_max_bytes
        self.stream_node_max_entries = stream_node_max_entries
        self.effect_listeners = []
        self.dirty = 0
        self._contexts = weakref.WeakSet()
        self._ctx = self.new_context()
        self.durability = None
        if dir is not None:
            from persist import Durability
            self.durability = Durability(self, dir, appendonly=appendonly,
                                         appendfsync=appendfsync, **persistence)
            previous = self.memory.enter()     # what the load allocates is ours
            try:
                self.durability.start()
            finally:
                self.memory.leave(previous)
            if self.durability.embedded:
                self._end_of_call = self.durability.end_of_call
                self._owner_pid = os.getpid()
                _open_engines.add(self)
        elif appendonly or persistence:
            raise TypeError("persistence options need dir=")

    def close(self, save=None) -> None:
        """Finishes persistence: the AOF written and fsynced, and a last snapshot when
        `save` (None: when `save` points are configured). A closed persistent engine
        refuses commands (they would be kept nowhere). Closing again does nothing;
        harmless when not persistent."""
        if self.durability is None or self._closed:
            return
        self._closed = True
        self._end_of_call = None
        _open_engines.discard(self)
        self.durability.close(save)

    def __del__(self):
        # Dropped unclosed: closed now, while everything it holds is intact (a
        # finalizer, unlike a weakref callback, still sees the keyspace to save).
        self.close_if_owned()

    cdef close_if_owned(self):
        """Closes at exit or when dropped, unless this is a forked child's copy (the
        files belong to the process that opened them) or this runs where closing
        cannot (see Durability.can_close_here)."""
        if (self._end_of_call is not None and self._owner_pid == os.getpid()
                and self.durability.can_close_here()):
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

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
        self._set_logging()

    def remove_effect_listener(self, listener) -> None:
        """Stops handing effects to listener; with no listener left, commands stop
        building them."""
        self.effect_listeners.remove(listener)
        self._set_logging()

    cdef _set_logging(self):
        cdef bint on = bool(self.effect_listeners)
        for ctx in self._contexts:
            (<CommandContext>ctx).logging = on

    def execute(self, *args):
        """Runs one command; returns its reply or raises ResponseError."""
        return self.run(self._ctx, to_argv(args))

    def execute_in(self, CommandContext ctx, list argv):
        """Runs argv (a list of bytes) in the given context."""
        return self.run(ctx, argv)

    cdef object run(self, CommandContext ctx, list argv):
        if self._closed:
            raise RuntimeError("the engine is closed")
        cdef MemoryAccount previous = self.memory.enter()
        try:
            return dispatch(ctx, argv)
        finally:
            self.flush(ctx)
            self.memory.leave(previous)
            self.end_call()

    cdef inline void end_call(self) except *:
        """A call is over (outside a batch or EXEC): if it changed something, its
        effects go to the OS now (one write per call, or per batch: see
        begin_batch), and what the server's timer does happens here, where the
        keyspace is consistent."""
        if self._changed and not self._batch_depth and not self._tx_depth:
            self._changed = False
            if self._end_of_call is not None:
                self._end_of_call()

    def begin_batch(self) -> None:
        """Calls until end_batch are one batch (a pipeline): their changes reach the
        OS together at its end. The caller holds the engine for the whole batch."""
        self._batch_depth += 1

    def end_batch(self) -> None:
        if self._batch_depth <= 0:
            raise RuntimeError("end_batch without begin_batch")
        self._batch_depth -= 1
        self.end_call()

    cdef void flush(self, CommandContext ctx) except *:
        """Hands the command's effects to the listeners (the keys it touched and its
        events stay in the context for its caller's report: after_command.pxd). Each
        batch of effects takes the next position in the log (effects_seq); outside a
        transaction the context remembers it as its last write (ctx.write_seq: a
        transaction's writes count when it ends, as Redis updates a client's write
        offset once its top-level command is done)."""
        if ctx.dirty or ctx.effects:
            self._changed = True
        self.dirty += ctx.dirty
        ctx.dirty = 0
        if ctx.effects:
            effects = ctx.effects
            ctx.effects = []
            if self._tx_depth and not self._tx_logged:
                self._tx_logged = True
                effects.insert(0, [b"MULTI"])
            self.effects_seq += 1
            if not self._tx_depth:
                ctx.write_seq = self.effects_seq
            for listener in self.effect_listeners:
                listener(ctx.db.index, effects)
        if ctx.flushed_all:
            # FLUSHALL: persistence snapshots the empty keyspace when save points
            # are configured (as Redis does)
            ctx.flushed_all = False
            if self.durability is not None:
                self.durability.flushed_all()

    @property
    def in_transaction(self) -> bool:
        """Inside EXEC (persistence defers rewrites and saves until it is over)."""
        return self._tx_depth > 0

    def transaction_begin(self) -> None:
        """EXEC starts: the effects of the commands until transaction_end reach the
        listeners bracketed by MULTI ... EXEC, so a log replays them all or none."""
        self._tx_depth += 1

    def transaction_end(self, int db, CommandContext writer) -> None:
        """EXEC is over (`db`: the database its commands ended in); `writer` is the
        context of the client it ran for: the transaction's writes become its last
        write."""
        self._tx_depth -= 1
        if self._tx_depth == 0 and self._tx_logged:
            self._tx_logged = False
            self.effects_seq += 1
            writer.write_seq = self.effects_seq
            for listener in self.effect_listeners:
                listener(db, [[b"EXEC"]])
        self.end_call()

    def active_expire(self, int limit=200) -> list:
        """Removes keys whose TTL has passed even if nobody reads them (the server
        calls this on a timer). Logs each as DEL; returns the `expired` events as
        (db index, key) pairs."""
        cdef CommandContext ctx
        cdef list fired = []
        now = self.clock.now_ms()
        cdef MemoryAccount previous
        for db in self.databases:
            previous = self.memory.enter()      # what the expired values free is ours
            try:
                swept = (<Database>db).sweep_expired(now, limit)
            finally:
                self.memory.leave(previous)
            if swept:
                ctx = self.new_context((<Database>db).index)
                ctx.tracking = True
                drain_expired(ctx)
                fired.extend(((<Database>db).index, key) for key in ctx.touched)
                self.flush(ctx)
        return fired

    def set_eviction_policy(self, str policy, int samples) -> None:
        """maxmemory-policy and maxmemory-samples; under an LFU policy keys' access
        metadata is an LFU counter (OBJECT FREQ), else an access time (IDLETIME)."""
        self.evictor = Evictor(policy, samples)
        cdef bint lfu = policy.endswith("-lfu")
        for db in self.databases:
            (<Database>db).lfu = lfu

    def set_lfu_params(self, int log_factor, int decay_time) -> None:
        """lfu-log-factor and lfu-decay-time."""
        for db in self.databases:
            (<Database>db).lfu_log_factor = log_factor
            (<Database>db).lfu_decay_time = decay_time

    @property
    def maxmemory(self) -> int:
        """Bytes of used_memory writes may reach; 0: no limit (kept by the memory
        account, where the road reads it before every command)."""
        return self.memory.limit

    @maxmemory.setter
    def maxmemory(self, uint64_t limit) -> None:
        self.memory.limit = limit

    def over_maxmemory(self) -> bool:
        return self.memory.limit != 0 and self.used_memory() > <int64_t>self.memory.limit

    def make_room(self) -> tuple:
        """Before a command, with a maxmemory: evicts keys by the policy until
        used_memory is within the limit, or no key qualifies, or the time of
        maxmemory-eviction-tenacity is spent (as Redis's performEvictions). Returns
        (False when over the limit with nothing left to evict, the evicted keys as
        (db index, key) pairs); each is logged as
        DEL, counted in evicted_keys and fires the `evicted` event (class "e")."""
        if not self.over_maxmemory():
            return True, []
        cdef dict by_db = {}
        cdef CommandContext ctx
        cdef int64_t now = self.clock.now_ms()
        cdef double budget = _tenacity_seconds(self.eviction_tenacity)
        cdef double start = time.monotonic()
        cdef MemoryAccount previous = self.memory.enter()
        cdef bint within = True
        cdef int n = 0
        try:
            while self.used_memory() > <int64_t>self.memory.limit:
                chosen = self.evictor.victim(self.databases, now)
                if chosen is None:
                    within = False      # nothing left to evict: writes are refused
                    break
                db, key = chosen
                (<Database>db).remove(key)
                by_db.setdefault((<Database>db).index, []).append(key)
                self.evicted_keys += 1
                n += 1
                if n % 16 == 0 and time.monotonic() - start > budget:
                    break               # the next command goes on evicting
        finally:
            self.memory.leave(previous)
        cdef list fired = []
        for index, keys in by_db.items():
            ctx = self.new_context(index)
            ctx.tracking = True
            if ctx.logging:
                ctx.effects = [[b"DEL", key] for key in keys]
            for key in keys:
                ctx.touch(key, "e", b"evicted")
            fired.extend((index, key) for key in keys)
            self.flush(ctx)
        if fired:
            self.end_call()
        return within, fired

    def select(self, int index) -> None:
        """Makes `execute` use database `index` (SELECT for the embedded API)."""
        self._ctx.db = self.databases[index]

    def function_codes(self) -> list:
        """The code of every function library, for persistence to keep (as opaque data)
        and hand back to restore_function_codes."""
        return [] if self.functions is None else self.functions.codes()

    def restore_function_codes(self, list codes) -> None:
        """Replaces the function libraries with those of `codes` (a snapshot's)."""
        if self.functions is not None:
            self.functions.flush()
        if codes:
            from engine.api.functions import engine_functions
            functions = engine_functions(self)
            for code in codes:
                functions.load(code, False)

    def used_memory(self) -> int:
        """Bytes held for stored data (INFO's used_memory): the exact C allocations
        of streams and their indexes, plus the Python objects of keys and strings."""
        return self.keyspace.used_memory()

    @property
    def peak_memory(self) -> int:
        """The highest used_memory seen (INFO, MEMORY STATS)."""
        return self.keyspace.peak_memory

    @property
    def stream_idmp_duration(self) -> int:
        """A new stream's IDMP duration until XCFGSET (stream-idmp-duration)."""
        return self.keyspace.stream_idmp_duration

    @stream_idmp_duration.setter
    def stream_idmp_duration(self, int seconds) -> None:
        self.keyspace.stream_idmp_duration = seconds

    @property
    def stream_idmp_maxsize(self) -> int:
        """A new stream's IDMP maxsize until XCFGSET (stream-idmp-maxsize)."""
        return self.keyspace.stream_idmp_maxsize

    @stream_idmp_maxsize.setter
    def stream_idmp_maxsize(self, int entries) -> None:
        self.keyspace.stream_idmp_maxsize = entries
