# cython: language_level=3, boundscheck=False, wraparound=False
"""The connection's command loop, compiled: engine/server/connection.py hands every
batch of parsed commands to `run_batch`.

The common command - an engine command from a client outside MULTI, authenticated
and not subscribed, while persistence works - runs right here: it is the case of
process_command (engine/api/session.py) in which every check passes, compiled:
engine.execute_in, commandstats (engine/api/command_stats.pyx), the bookkeeping
every command shares (engine/api/after_command.pxd: touched keys, woken keys and
keyspace events to the hub), the reply into the connection's ReplyBuffer. Everything else goes through the
connection's `call_slow` (process_command: Redis's checks, MULTI, connection and
server commands, the MISCONF refusal of writes while persistence fails).
"""
from libc.stdint cimport int64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.api.after_command cimport report_command
from engine.api.command_stats cimport CALLED, FAILED, CommandStat
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
            and not session.patterns and not session.shard_channels and hub.write_refusal is None and hub.busy is None
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
        conn.server.stats.count(kind[2], now_ns() - start, FAILED)
        conn.write_error(str(err))
        return 0
    cdef int64_t ns = now_ns() - start
    stat_obj = stat_cache.get(name)
    if stat_obj is None:
        stat_obj = conn.server.stats.command(kind[2])
        if len(stat_cache) < NAME_CACHE_MAX:
            stat_cache[name] = stat_obj
    (<CommandStat>stat_obj).count(ns, CALLED)
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
    cdef list argv
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
                    start = now_ns()
                    try:
                        reply = execute_in(ctx, argv)
                    except _ResponseError as err:
                        conn.engine_error(argv, err, now_ns() - start)
                        ok = False
                    else:
                        if stat_obj is None:
                            stat_obj = server.stat_for(argv)
                        (<CommandStat>stat_obj).count(now_ns() - start, CALLED)
                        ok = True
                    report_command(hub, ctx, notify)
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
