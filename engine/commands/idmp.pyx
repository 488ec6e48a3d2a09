"""Idempotent production on streams (Redis 8.6): the IDMP steps of XADD, XCFGSET and
XIDMPRECORD.

Effects. XADD IDMP logs the plain XADD with its ID, then `XIDMPRECORD key pid iid id`
(Redis 8.8's internal command for this), so a replay tracks the same iids; IDMPAUTO's
iid is logged as computed. The stream's settings are logged as a full
`XCFGSET key IDMP-DURATION d IDMP-MAXSIZE m` when its IDMP state is created, so that
the configuration defaults at replay time do not matter. A duplicate changes nothing
but the iids-duplicates counter and logs nothing (the snapshot and the rewrite base
keep that counter; replaying the AOF's tail does not).
redis-server 7.0 has neither XCFGSET nor XIDMPRECORD: an AOF holding them does not load
into 7.0 (tests/differential.py lists this with the other 8.x differences).
"""
from libc.stdint cimport int64_t

from engine.core.streamid cimport StreamID, id_format, id_parse
from engine.core.stream cimport Stream
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int
from engine.commands.table import command
from engine.core.errors import ResponseError, NO_SUCH_KEY, INVALID_STREAM_ID, SYNTAX
from engine.core.idmp import (IdmpState, DURATION_MIN, DURATION_MAX,
                              MAXSIZE_MIN, MAXSIZE_MAX)
from engine.resp.reply import OK


cdef tuple config_defaults(CommandContext ctx):
    """(duration, maxsize) a stream's IDMP state starts with: the engine's
    stream-idmp-duration / stream-idmp-maxsize."""
    return ctx.keyspace.stream_idmp_duration, ctx.keyspace.stream_idmp_maxsize


cdef object state_of(CommandContext ctx, bytes key, Stream s):
    """The stream's IDMP state, created (and logged as XCFGSET) when it has none."""
    if s.idmp is None:
        duration, maxsize = config_defaults(ctx)
        s.idmp = IdmpState(duration, maxsize)
        if ctx.logging:
            ctx.effects.append(cfgset_effect(key, s.idmp))
    return s.idmp


cdef list cfgset_effect(bytes key, state):
    return [b"XCFGSET", key, b"IDMP-DURATION", str(state.duration).encode(),
            b"IDMP-MAXSIZE", str(state.maxsize).encode()]


cdef object idmp_duplicate(CommandContext ctx, Stream s, bytes pid, bytes iid):
    state = s.idmp
    if state is None:
        return None
    entry = state.lookup(pid, iid, ctx.now)
    if entry is None:
        return None
    state.iids_duplicates += 1
    return b"%d-%d" % entry


cdef int idmp_record(CommandContext ctx, bytes key, Stream s, bytes pid, bytes iid,
                     const StreamID* id) except -1:
    state_of(ctx, key, s).record(pid, iid, (id.ms, id.seq), ctx.now)
    if ctx.logging:
        ctx.effects.append([b"XIDMPRECORD", key, pid, iid, id_format(id)])
    return 0


cdef list idmp_info(CommandContext ctx, Stream s):
    state = s.idmp
    if state is None:
        duration, maxsize = config_defaults(ctx)
        return [b"idmp-duration", duration, b"idmp-maxsize", maxsize, b"pids-tracked", 0,
                b"iids-tracked", 0, b"iids-added", 0, b"iids-duplicates", 0]
    state.sweep(ctx.now)
    return [b"idmp-duration", state.duration, b"idmp-maxsize", state.maxsize,
            b"pids-tracked", len(state.producers), b"iids-tracked", state.tracked,
            b"iids-added", state.iids_added, b"iids-duplicates", state.iids_duplicates]


cdef int64_t setting(list argv, Py_ssize_t i, int64_t lo, int64_t hi, str error) except? -1:
    cdef int64_t v = parse_int(argv[i], NULL)
    if v < lo or v > hi:
        raise ResponseError(error)
    return v


@command("xcfgset")
def xcfgset(CommandContext ctx, list argv):
    """XCFGSET key [IDMP-DURATION seconds] [IDMP-MAXSIZE count]: settings that differ
    from the stream's forget every tracked iid (the counters stay)."""
    cdef Py_ssize_t i = 2, argc = len(argv)
    duration = maxsize = None
    if argc == 2:
        raise ResponseError("ERR At least one parameter must be specified")
    while i < argc:
        opt = (<bytes>argv[i]).lower()
        if i + 1 >= argc or opt not in (b"idmp-duration", b"idmp-maxsize"):
            raise ResponseError(SYNTAX)
        if opt == b"idmp-duration":
            duration = setting(argv, i + 1, DURATION_MIN, DURATION_MAX,
                               "ERR IDMP-DURATION must be between 1 and 86400 seconds")
        else:
            maxsize = setting(argv, i + 1, MAXSIZE_MIN, MAXSIZE_MAX,
                              "ERR IDMP-MAXSIZE must be between 1 and 10000 entries")
        i += 2
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        raise ResponseError(NO_SUCH_KEY)
    if s.idmp is None:
        s.idmp = IdmpState(*config_defaults(ctx))
    state = s.idmp
    state.configure(state.duration if duration is None else duration,
                    state.maxsize if maxsize is None else maxsize)
    if ctx.logs():
        ctx.effects.append(cfgset_effect(key, state))
    ctx.touch(key, "t", b"xcfgset")
    return OK


@command("xidmprecord")
def xidmprecord(CommandContext ctx, list argv):
    """XIDMPRECORD key pid iid id: records that iid of producer pid produced the
    existing entry id (what XADD IDMP logs; Redis 8.8 replays its AOF with it)."""
    cdef bytes key = argv[1], pid = argv[2], iid = argv[3]
    cdef StreamID id
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        raise ResponseError(NO_SUCH_KEY)
    if not pid:
        raise ResponseError("ERR IDMP requires a non-empty producer ID")
    if not iid:
        raise ResponseError("ERR IDMP requires a non-empty idempotent ID")
    if not id_parse(argv[4], &id, 0, NULL):
        raise ResponseError(INVALID_STREAM_ID)
    if not s.contains(&id):
        raise ResponseError("ERR The ID specified in XIDMPRECORD does not exist in the stream")
    if s.idmp is not None:
        entry = s.idmp.lookup(pid, iid, ctx.now)
        if entry == (id.ms, id.seq):
            return OK
        if entry is not None:
            raise ResponseError("ERR The producer and idempotent IDs are already recorded "
                                "for another entry")
    ctx.logs()
    idmp_record(ctx, key, s, pid, iid, &id)
    ctx.touch(key, "t", b"xidmprecord")
    return OK
