# cython: language_level=3, boundscheck=False, wraparound=False
"""The connection's command loop, compiled: engine/server/connection.py hands every
batch of parsed commands to `run_batch`.

The common command - an engine command from a client outside MULTI, authenticated
and not subscribed - runs right here: engine.execute_in, commandstats, touched keys
to the hub (WATCH, blocked readers), keyspace events to Pub/Sub, the reply into the
connection's ReplyBuffer. Everything else goes through the connection's `call_slow`
(the session: Redis's checks, MULTI, connection and server commands).
"""
from libc.stdint cimport int64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.commands.context cimport CommandContext
from engine.server.resp cimport ReplyBuffer
from engine.errors import ResponseError

cdef enum:
    FLUSH_AT = 64 * 1024       # reply bytes that trigger a socket write mid-batch
    NAME_CACHE_MAX = 4096

cdef bytes EXPIRED = b"expired"
cdef object _ResponseError = ResponseError
# command names as sent (b"XADD", b"xadd"...) that are not session commands
cdef dict _engine_names = {}


cdef class CommandStat:
    """Counters of one command (INFO commandstats)."""

    cdef public str name
    cdef public long long calls
    cdef public long long ns
    cdef public long long rejected
    cdef public long long failed

    def __init__(self, str name):
        self.name = name
        self.calls = self.ns = self.rejected = self.failed = 0

    def reset(self):
        self.calls = self.ns = self.rejected = self.failed = 0


cdef inline int64_t now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef inline bint plain_session(object session):
    """Outside MULTI, authenticated, not subscribed: engine commands run directly."""
    return (session.multi is None and session.authenticated and not session.channels
            and not session.patterns)


cdef inline bint engine_command(bytes name, dict commands):
    """Not a session command (the answer is cached per spelling)."""
    if name in _engine_names:
        return True
    if name in commands or name.lower() in commands:
        return False
    if len(_engine_names) < NAME_CACHE_MAX:
        _engine_names[name] = None
    return True


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
    cdef object pubsub = server.pubsub
    cdef Py_ssize_t n = 0
    cdef list argv, touched, events
    cdef bytes name
    cdef object last = None
    cdef object stat_obj, reply
    cdef CommandStat stat
    cdef int64_t start
    cdef bint fast = plain_session(session)
    cdef bint ok
    try:
        for argv in cmds:
            n += 1
            name = <bytes>argv[0]
            try:
                if fast and engine_command(name, commands):
                    stat_obj = stat_cache.get(name)
                    touched = ctx.touched
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
                        stat = <CommandStat>stat_obj
                        stat.calls += 1
                        stat.ns += now_ns() - start
                        ok = True
                    if touched and (hub.watchers or hub.blocked):
                        hub.touched(ctx.db.index, touched)
                    if events and (pubsub.notify_flags
                                   or events[len(events) - 1][1] == EXPIRED):
                        server.on_events(ctx.db.index, events)
                    last = name
                    if ok:
                        if ctx.block is not None:
                            request = ctx.block
                            ctx.block = None
                            conn.park(session.new_blocked_read(argv, request))
                            return n
                        out.write(reply, ctx.resp3, ctx.null_array)
                else:
                    last = None
                    if not conn.call_slow(argv):
                        return n
                    fast = plain_session(session)
            except Exception as exc:  # a bug must not kill the client
                conn.internal_error(argv, exc)
            if hub.ready:
                hub.serve_ready()
            if out.b.len > FLUSH_AT:
                conn.flush()
                if conn.write_paused or conn.closing:
                    return n
        return -1
    finally:
        server.stats.total_commands += n
        if last is not None:
            conn.last_cmd = last
