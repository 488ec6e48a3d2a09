# cython: language_level=3, boundscheck=False, wraparound=False
"""The connection's command loop, compiled: engine/server/connection.py hands every
batch of parsed commands to `run_batch`.

The common command - an engine command from a client outside MULTI, authenticated
and not subscribed, while persistence works - runs right here: it is the case of
process_command (engine/api/session.py) in which every check passes, compiled:
engine.execute_in, commandstats, the bookkeeping every command shares
(engine/api/after_command.pxd: touched keys, woken keys and keyspace events to the
hub), the reply into the connection's ReplyBuffer. Everything else goes through the
connection's `call_slow` (process_command: Redis's checks, MULTI, connection and
server commands, the MISCONF refusal of writes while persistence fails).
"""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.api.after_command cimport report_command
from engine.commands.context cimport CommandContext
from engine.resp.codec cimport ReplyBuffer
from engine.core.errors import ResponseError

cdef enum:
    FLUSH_AT = 64 * 1024       # reply bytes that trigger a socket write mid-batch
    NAME_CACHE_MAX = 4096

cdef object _ResponseError = ResponseError
# command names as sent (b"XADD", b"xadd"...) that are not session commands
cdef dict _engine_names = {}
# EVAL & co.: (by sha, read-only, the name commandstats counts under)
cdef dict _SCRIPT_COMMANDS = {b"eval": (False, False, "eval"),
                              b"evalsha": (True, False, "evalsha"),
                              b"eval_ro": (False, True, "eval_ro"),
                              b"evalsha_ro": (True, True, "evalsha_ro")}
cdef dict _script_names = {}    # spelling as sent -> the entry above, or None


cdef extern from *:
    int clzll "__builtin_clzll" (unsigned long long) noexcept nogil

# Latency histogram with HdrHistogram's layout for 2 significant digits (what Redis
# uses for INFO latencystats): values in ns from 1 to 1 s; 128 sub-buckets per
# power of two above 256, exact below. A percentile reads as the highest value
# equivalent to its bucket, so the figures match Redis's for the same durations.
cdef enum:
    HIST_BUCKETS = 23
    HIST_LEN = (HIST_BUCKETS + 1) * 128
cdef int64_t HIST_MAX_NS = 1000000000


cdef inline Py_ssize_t hist_index(int64_t v) noexcept nogil:
    cdef int bucket = 64 - clzll(<unsigned long long>(v | 255)) - 8
    return ((bucket + 1) << 7) + ((v >> bucket) - 128)


cdef inline int64_t hist_highest_value(Py_ssize_t index) noexcept nogil:
    cdef int bucket = <int>(index >> 7) - 1
    cdef int64_t sub = (index & 127) + 128
    if bucket < 0:
        sub -= 128
        bucket = 0
    return (sub << bucket) + (<int64_t>1 << bucket) - 1


cdef class CommandStat:
    """Counters of one command (INFO commandstats) and its latency histogram (INFO
    latencystats)."""

    cdef public str name
    cdef public long long calls
    cdef public long long ns
    cdef public long long rejected
    cdef public long long failed
    cdef uint64_t* latency        # HIST_LEN counts, allocated by the first call
    cdef readonly uint64_t samples

    def __init__(self, str name):
        self.name = name
        self.calls = self.ns = self.rejected = self.failed = 0

    def __dealloc__(self):
        free(self.latency)

    cdef inline int record(self, int64_t ns) except -1:
        """One call that ran for ns nanoseconds."""
        self.calls += 1
        self.ns += ns
        if self.latency is NULL:
            self.latency = <uint64_t*>calloc(HIST_LEN, sizeof(uint64_t))
            if self.latency is NULL:
                raise MemoryError()
        self.latency[hist_index(1 if ns < 1 else HIST_MAX_NS if ns > HIST_MAX_NS else ns)] += 1
        self.samples += 1
        return 0

    def add_call(self, long long ns, bint failed=False):
        """A call that ran (failed: it replied with an error)."""
        self.record(ns)
        if failed:
            self.failed += 1

    def latency_percentile(self, double percentile) -> int:
        """The latency (ns) at or below which `percentile` % of the calls finished:
        HdrHistogram's value_at_percentile. 0 without calls."""
        cdef uint64_t total = 0, wanted
        cdef Py_ssize_t i
        if not self.samples:
            return 0
        wanted = <uint64_t>((min(percentile, 100.0) / 100.0) * self.samples + 0.5)
        if wanted < 1:
            wanted = 1
        for i in range(HIST_LEN):
            total += self.latency[i]
            if total >= wanted:
                return hist_highest_value(i)
        return 0

    def reset(self):
        self.calls = self.ns = self.rejected = self.failed = 0
        free(self.latency)
        self.latency = NULL
        self.samples = 0


cdef inline int64_t now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef inline bint plain_session(object session, object hub):
    """Outside MULTI, authenticated, not subscribed, not in CLIENT NO-TOUCH mode (the
    session's call keeps access times then), no write refusal in force
    (persistence failing: the session's checks decide then) and no script running
    long (BUSY): engine commands run directly. The refusal changes only between
    rounds or through a slow-path command (CONFIG SET), after which this is asked
    again; a batch read while a script is busy starts busy. With a maxmemory every
    command takes the slow path, where process_command evicts before it runs; under
    CLIENT REPLY OFF or SKIP too, where the reply is dropped."""
    return (session.multi is None and session.authenticated and not session.channels
            and not session.patterns and hub.write_refusal is None and hub.busy is None
            and not session.no_touch and not hub.engine.maxmemory and not session.replies)


cdef inline bint engine_command(bytes name, dict commands):
    """Run by the engine, not by the session (the answer is cached per spelling)."""
    if name in _engine_names:
        return True
    if name in commands or name.lower() in commands:
        return False
    if len(_engine_names) < NAME_CACHE_MAX:
        _engine_names[name] = None
    return True


cdef inline tuple script_command(bytes name):
    """EVAL, EVALSHA or their _RO forms, by any spelling (cached): their entry, or None."""
    try:
        return _script_names[name]
    except KeyError:
        entry = _SCRIPT_COMMANDS.get(name.lower())
        if len(_script_names) < NAME_CACHE_MAX:
            _script_names[name] = entry
        return entry


cdef bint run_script(object conn, object session, object scripting, tuple kind, list argv,
                     ReplyBuffer out, dict stat_cache, bint resp3) except -1:
    """A script (EVAL & co. from a plain session, its script cache made): the case of
    process_command in which every check passes, compiled. Counted in commandstats
    as the session counts it; failures (NOSCRIPT, the script's errors) as failed calls."""
    cdef int64_t start = now_ns()
    cdef bytes name = argv[0]
    try:
        reply = scripting.eval(session, argv, kind[0], kind[1])
    except _ResponseError as err:
        conn.server.stats.failure(kind[2], False, now_ns() - start)
        conn.write_error(str(err))
        return 0
    cdef int64_t ns = now_ns() - start
    stat_obj = stat_cache.get(name)
    if stat_obj is None:
        stat_obj = conn.server.stats.command(kind[2])
        if len(stat_cache) < NAME_CACHE_MAX:
            stat_cache[name] = stat_obj
    (<CommandStat>stat_obj).record(ns)
    if type(reply) is bytes or type(reply) is int:
        out.write(reply, resp3, False)
    else:
        conn.write_reply(reply)
    return 0


def run_batch(object conn, list cmds):
    """Runs cmds in order: -1 when all ran, else the index of the first one that must
    wait (the one before it blocked, paused the output, or closed the connection)."""
    cdef object session = conn.session
    cdef CommandContext ctx = conn.ctx
    cdef object hub = conn.hub
    cdef ReplyBuffer out = conn.out
    cdef object execute_in = conn.execute_in
    cdef dict commands = session.commands
    cdef object server = conn.server
    cdef dict stat_cache = server.stat_cache
    cdef Py_ssize_t n = 0
    cdef list argv, touched, woken, events
    cdef bytes name
    cdef object last = None
    cdef object stat_obj, reply, scripting
    cdef tuple kind
    cdef int64_t start
    cdef bint fast = plain_session(session, hub)
    cdef bint notify = hub.notify_events     # changes only through a slow-path command
    cdef bint ok
    try:
        for argv in cmds:
            n += 1
            name = <bytes>argv[0]
            try:
                if fast and engine_command(name, commands):
                    stat_obj = stat_cache.get(name)
                    touched = ctx.touched
                    woken = ctx.woken
                    events = ctx.events
                    start = now_ns()
                    try:
                        reply = execute_in(ctx, argv)
                    except _ResponseError as err:
                        conn.engine_error(argv, err, now_ns() - start)
                        ok = False
                    else:
                        if stat_obj is None:
                            stat_obj = server.stat_for(argv)
                        (<CommandStat>stat_obj).record(now_ns() - start)
                        ok = True
                    report_command(hub, ctx, touched, woken, events, notify)
                    last = name
                    if ok:
                        if ctx.block is not None:
                            request = ctx.block
                            ctx.block = None
                            conn.park(session.new_blocked_read(argv, request))
                            return n
                        out.write(reply, ctx.resp3, ctx.null_array)
                elif fast and len(argv) >= 3 and (kind := script_command(name)) is not None \
                        and (scripting := session.engine.scripting) is not None:
                    run_script(conn, session, scripting, kind, argv, out, stat_cache, ctx.resp3)
                    last = name
                    fast = plain_session(session, hub)
                else:
                    last = None
                    if not conn.call_slow(argv):
                        return n
                    fast = plain_session(session, hub)
                    notify = hub.notify_events
            except Exception as exc:  # a bug must not kill the client
                conn.internal_error(argv, exc)
            if hub.ready:
                hub.serve_ready()
            if out.b.len > FLUSH_AT:
                conn.flush()
                if conn.write_paused or conn.closing:
                    return n
                if conn.flush_scheduled:       # the replies wait for the round's log write:
                    conn.resume_after_flush = True     # the rest runs once they are out
                    return n
        return -1
    finally:
        server.stats.total_commands += n
        if last is not None:
            conn.last_cmd = last
