# cython: language_level=3
"""redis.call's common case, compiled: most commands a script calls are engine commands
that none of a script's refusals concern, so they run straight on the engine in the
script's context, with the bookkeeping every command shares (after_command.pxd) and
INFO commandstats when the client's session keeps stats. The others take the checked
road (engine/api/scripts.py: Scripting._call_checked, then process_command)."""
from libc.stdint cimport int64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.api.after_command cimport report_command
from engine.api.command_stats cimport CALLED, FAILED, REJECTED, CommandStat
from engine.commands.table import COMMANDS
from engine.core.errors import ResponseError

cdef object _ResponseError = ResponseError
cdef frozenset _CHECKED_FLAGS = frozenset(("noscript", "blocking", "may_replicate"))
cdef tuple _CHECKED = (None, None, False)
cdef enum:
    CACHE_MAX = 4096            # command spellings remembered


cdef inline int64_t now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef class ScriptCalls:
    """The commands of the running script: `begin` when a script starts, `end` after;
    `call(argv)` runs one (redis.call)."""

    def __init__(self, engine, CommandContext ctx, checked):
        self.ctx = ctx
        self.execute_in = engine.execute_in
        self.checked = checked
        self.direct = {}

    cpdef begin(self, session, bint refuse_writes):
        """A script of `session` starts: its commands run in the client's database,
        with the client's stream node limits (CONFIG SET changes them)."""
        cdef CommandContext own = session.ctx, ctx = self.ctx
        ctx.db = own.db
        ctx.node_max_bytes = own.node_max_bytes
        ctx.node_max_entries = own.node_max_entries
        ctx.max_string = own.max_string
        hub = self.hub = session.hub
        ctx.tracking = hub.tracking
        self.session = session
        self.refuse_writes = refuse_writes
        self.stats = session.stats
        self.wrote = False

    cpdef end(self):
        self.session = self.stats = self.hub = None

    cpdef object call(self, list argv):
        """One command of the script: its reply, or raises ResponseError."""
        cdef tuple entry = self.direct.get(argv[0])
        if entry is None or self.stats_of is not self.stats:
            entry = self._entry(argv[0])
        record = entry[0]
        hub = self.hub
        if record is None or (self.refuse_writes and entry[2]) \
                or hub.write_refusal is not None or hub.engine.maxmemory:
            return self.checked(argv)
        stat = entry[1]
        cdef CommandContext ctx = self.ctx
        cdef int64_t start = now_ns()
        try:
            reply = self.execute_in(ctx, argv)
        except _ResponseError:
            if entry[2] and record.arity_ok(len(argv)):
                self.wrote = True
            if stat is not None:
                (<CommandStat>stat).count(now_ns() - start,
                                          FAILED if record.arity_ok(len(argv)) else REJECTED)
            raise
        finally:
            report_command(hub, ctx, hub.notify_events)
        if entry[2]:
            self.wrote = True
        if stat is not None:
            (<CommandStat>stat).count(now_ns() - start, CALLED)
        return reply

    cdef tuple _entry(self, bytes name):
        """(record, stat) of a command that needs none of a script's refusals nor
        process_command's checks: an engine command without subcommands that neither
        blocks nor is refused to scripts (the engine checks its arity itself);
        _CHECKED for the others. Cached by spelling, for the current stats."""
        stats = self.stats
        if self.stats_of is not stats:
            self.direct = {}
            self.stats_of = stats
        record = COMMANDS.get(name.lower())
        cdef tuple entry = _CHECKED
        if record is not None and record.layer == "engine" and record.subcommands is None \
                and _CHECKED_FLAGS.isdisjoint(record.flags):
            entry = (record, None if stats is None else stats.command(record.name),
                     record.write)
        if len(self.direct) < CACHE_MAX:
            self.direct[name] = entry
        return entry
