# cython: language_level=3, boundscheck=False, wraparound=False
"""The connection's command loop, compiled: engine/server/connection.py hands every
batch of parsed commands to `run_batch`, which enters each at the one road
(engine/api/road.pyx process_command: Redis's checks, call(), commandstats, the
clients served after it) and writes its reply into the connection's ReplyBuffer as
the client's CLIENT REPLY mode says; a command that must wait is parked, and the
batch stops there.
"""
from engine.api.road cimport (CLIENT_CLOSE_AFTER_REPLY, CLIENT_MONITOR,
                              CLIENT_REPLY_MODES,
                              CLIENT_REPLY_QUIET, Client, process_command)
from engine.resp.codec cimport ReplyBuffer
from engine.api.road import POSTPONED
from engine.api.session import QUEUED, BlockedRead
from engine.core.errors import ResponseError
from engine.server.session import NO_REPLY, SILENT, Pushes

cdef enum:
    FLUSH_AT = 64 * 1024       # reply bytes that trigger a socket write mid-batch
    POSTPONED_RUN = 2          # answer(): the command did not run, CLIENT PAUSE holds it

cdef object _ResponseError = ResponseError
cdef object _QUEUED = QUEUED
cdef object _POSTPONED = POSTPONED
cdef object _BlockedRead = BlockedRead
cdef object _Pushes = Pushes
cdef object _NO_REPLY = NO_REPLY
cdef object _SILENT = SILENT


cdef int answer(object conn, Client client, ReplyBuffer out, object reply) except -1:
    """Writes one command's reply: 1 when the batch goes on, 0 when it must stop
    (the command waits, or the connection closes after it), POSTPONED_RUN when the
    command waits for CLIENT PAUSE to end without having run (it runs again then)."""
    cdef type cls = type(reply)
    if cls is _BlockedRead:
        conn.park(reply)
        return 0
    if reply is _POSTPONED:
        conn.postpone()
        return POSTPONED_RUN
    if reply is _QUEUED:
        conn.server.stats.total_commands -= 1      # counted when EXEC runs it
    elif reply is _NO_REPLY:
        return 0
    elif reply is _SILENT:
        return 1
    if client.flags & CLIENT_REPLY_QUIET:
        pass
    elif cls is _Pushes:
        conn.write_reply(reply, client.null_array)
    else:
        out.write(reply, client.ctx.resp3, client.null_array)
    if client.flags & CLIENT_CLOSE_AFTER_REPLY:
        conn.close_after_reply()
        return 0
    return 1


def run_batch(object conn, list cmds):
    """Runs cmds in order: -1 when all ran, else the index of the first one that must
    wait (the one before it blocked, paused the output, or closed the connection)."""
    cdef Client client = conn.session
    cdef ReplyBuffer out = conn.out
    cdef object server = conn.server
    cdef Py_ssize_t n = 0
    cdef list argv
    cdef object last = None
    cdef int go
    try:
        for argv in cmds:
            n += 1
            last = argv[0]
            try:
                go = answer(conn, client, out, process_command(client, argv))
            except _ResponseError as err:
                if client.flags & CLIENT_REPLY_QUIET:
                    server.stats.error(str(err))
                else:
                    conn.write_error(str(err))
                go = True
            except Exception as exc:  # a bug must not kill the client
                conn.internal_error(argv, exc)
                go = True
            if go == POSTPONED_RUN:
                n -= 1              # not run yet: it stays the first of the pending
                return n
            if client.flags & CLIENT_MONITOR and conn.held_lines:
                conn.release_held()         # a MONITOR client's own lines follow its reply
            if client.cmd_name is not None:     # (not an engine command's fast case)
                last = client.cmd_name
                if conn.closing:
                    return n
            if client.flags & CLIENT_REPLY_MODES and conn.blocked_read is None:
                client.reply_done()
            if not go:
                return n
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
            conn.last_cmd = last if type(last) is bytes else (<str>last).encode()
