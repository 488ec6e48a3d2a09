"""Stream commands without consumer groups: XADD, XLEN, XRANGE, XREVRANGE, XDEL,
XTRIM, XSETID. XADD/XTRIM's trimming follows a reference policy (KEEPREF, DELREF,
ACKED: stream_args.pxd) when the stream has groups."""
from libc.stdint cimport uint8_t, uint64_t, int64_t

from engine.core.streamid cimport (StreamID, id_cmp, id_incr, id_decr, id_format, id_is_zero,
                                   id_encode, id_decode)
from engine.core.stream cimport (Stream, StreamIter, TRIM_NONE, TRIM_MAXLEN, TRIM_MINID,
                            stream_iter_start, stream_iter_next, stream_iter_stop)
from engine.core.keyspace cimport Database
from engine.commands.context cimport CommandContext
from engine.commands.entry_reply cimport EntryReply, entry_reply
from engine.core.reply_lists cimport gc_pause, gc_resume
from engine.commands.stream_args cimport (TrimArgs, parse_trim_args, parse_id,
                                          parse_bound, REF_DEL, REF_ACKED)
from engine.core.groups cimport ConsumerGroup, entry_referenced
from engine.core.radix cimport RadixIter, radix_iter_init, radix_seek, radix_next, RADIX_GE
from engine.commands.parsing cimport parse_int
from engine.commands.idmp cimport idmp_duplicate, idmp_record
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX, NO_SUCH_KEY, wrong_arity
from engine.resp.reply import OK
from engine.core.idmp import auto_iid

cdef uint64_t U64_MAX = 0xffffffffffffffff


cdef Stream stream_for_write(CommandContext ctx, bytes key, bint create):
    """The stream at key (created when absent and `create`), or None."""
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None and create:
        s = Stream()
        ctx.db.store(key, s)
    return s


cdef bint stream_edge_id(Stream s, bint last, StreamID* out) except -1:
    """The first (or last) live entry's ID; 0 when the stream is empty."""
    cdef StreamIter it
    cdef StreamID lo, hi
    lo.ms = lo.seq = 0
    hi.ms = hi.seq = U64_MAX
    stream_iter_start(&it, s, &lo, &hi, last)
    cdef bint found = stream_iter_next(&it, out)
    stream_iter_stop(&it)
    return found


cdef void refresh_first_id(Stream s) except *:
    """Recomputes first_id after deletions (0-0 for an empty stream)."""
    if not stream_edge_id(s, False, &s.first_id):
        s.first_id.ms = s.first_id.seq = 0


cdef bint delete_entry(Stream s, const StreamID* id) except -1:
    """Removes one entry as XDEL does (max_deleted_id follows, first_id too); 1 if it
    was there."""
    if not s.delete(id):
        return False
    if id_cmp(id, &s.max_deleted_id) > 0:
        s.max_deleted_id = id[0]
    if s.length == 0 or id_cmp(id, &s.first_id) == 0:
        refresh_first_id(s)
    return True


cdef void log_acks(CommandContext ctx, bytes key, dict acks) except *:
    """XACK effects: acks maps a group name to the IDs (bytes) it gave up."""
    for name, ids in acks.items():
        if ctx.logs():
            ctx.effects.append([b"XACK", key, name] + ids)


cdef int64_t apply_trim(CommandContext ctx, bytes key, Stream s, TrimArgs* args) except -1:
    """Trims per args; logs it so that replay leaves the same nodes: an exact MINID
    trim as itself (it may keep a head node of tombstones, which no MAXLEN trim
    does), any other as an exact MAXLEN trim to the length it left.
    Counts no change itself (XADD's trim is part of its one change; XTRIM counts its
    entries). With groups, DELREF also drops the trimmed entries from every PEL and
    ACKED trims only entries no group needs (see trim_acked)."""
    if args.policy == REF_ACKED and s.groups:
        return trim_acked(ctx, key, s, args)
    cdef dict pending = None
    if args.policy == REF_DEL and s.groups:
        pending = live_pending(s, args)
    cdef int64_t deleted = s.trim(args.strategy, args.maxlen, &args.minid, args.approx,
                                  args.limit)
    if deleted:
        if ctx.logging:
            ctx.effects.append(
                [b"XTRIM", key, b"MINID", b"=", id_format(&args.minid)]
                if args.strategy == TRIM_MINID and not args.approx else
                [b"XTRIM", key, b"MAXLEN", b"=", str(s.length).encode()])
        if pending:
            log_acks(ctx, key, drop_trimmed(s, pending))
        ctx.touch(key, "t", b"xtrim")
    return deleted


cdef dict live_pending(Stream s, TrimArgs* args):
    """Before a DELREF trim: each group's pending IDs that are live entries the trim
    may remove (from the first entry on; below MINID with MINID), as group -> list of
    (ms, seq). Dangling references (entries deleted earlier) are not the trim's."""
    cdef dict out = {}
    cdef ConsumerGroup g
    cdef RadixIter it
    cdef uint8_t key[16]
    cdef StreamID id
    cdef list ids
    cdef int ok
    id_encode(&s.first_id, key)
    for g in s.groups.values():
        ids = []
        radix_iter_init(&it, g.pel)
        ok = radix_seek(&it, RADIX_GE, key)
        while ok:
            id_decode(it.key, &id)
            if args.strategy != TRIM_MAXLEN and id_cmp(&id, &args.minid) >= 0:
                break
            if s.contains(&id):
                ids.append((id.ms, id.seq))
            ok = radix_next(&it)
        if ids:
            out[g] = ids
    return out


cdef dict drop_trimmed(Stream s, dict pending):
    """After a DELREF trim: removes from each group's PEL the IDs of `pending` that
    the trim took; returns group name -> their IDs as text (for XACK effects)."""
    cdef dict acks = {}
    cdef ConsumerGroup g
    cdef StreamID id
    for g, ids in pending.items():
        gone = []
        for ms, seq in ids:
            id.ms = ms
            id.seq = seq
            if not s.contains(&id) and g.remove_pending(&id):
                gone.append(id_format(&id))
        if gone:
            acks[g.name] = gone
    return acks


cdef class References:
    """keep(ms, seq) for Stream.trim_candidates: whether a group still needs the entry."""
    cdef Stream s

    def __init__(self, Stream s):
        self.s = s

    def __call__(self, uint64_t ms, uint64_t seq):
        cdef StreamID id
        id.ms = ms
        id.seq = seq
        return entry_referenced(self.s, &id)


cdef int64_t trim_acked(CommandContext ctx, bytes key, Stream s, TrimArgs* args) except -1:
    """ACKED trimming: the entries the strategy would remove that no group references
    (Redis walks the nodes as a plain trim does, sparing those entries); entries past
    the oldest group position are all unread by some group. Removed as XDEL removes,
    so that the XDEL effect replays them exactly."""
    cdef StreamID oldest, id
    cdef ConsumerGroup g
    oldest.ms = oldest.seq = U64_MAX
    for g in s.groups.values():
        if id_cmp(&g.last_id, &oldest) < 0:
            oldest = g.last_id
    cdef list doomed = s.trim_candidates(args.strategy, args.maxlen, &args.minid,
                                         args.approx, args.limit, References(s), &oldest)
    if not doomed:
        return 0
    cdef list texts = []
    for ms, seq in doomed:
        id.ms = ms
        id.seq = seq
        delete_entry(s, &id)
        texts.append(id_format(&id))
    if ctx.logs():
        ctx.effects.append([b"XDEL", key] + texts)
    ctx.touch(key, "t", b"xtrim")
    return len(doomed)


@command("xadd")
def xadd(CommandContext ctx, list argv):
    cdef TrimArgs args
    parse_trim_args(argv, &args, True, ctx.node_max_entries)
    cdef Py_ssize_t field_pos = args.next_arg + 1, nfields = len(argv) - field_pos
    if nfields < 2 or nfields % 2:
        raise wrong_arity("xadd")
    if args.id_given and args.seq_given and id_is_zero(&args.id):
        raise ResponseError("ERR The ID specified in XADD must be greater than 0-0")
    cdef bytes key = argv[1]
    cdef Stream s = stream_for_write(ctx, key, not args.nomkstream)
    if s is None:
        return None
    cdef bytes iid = None
    if args.idmp_pid:
        iid = (argv[args.idmp_iid] if args.idmp_iid
               else auto_iid(argv, field_pos, nfields // 2))
        original = idmp_duplicate(ctx, s, argv[args.idmp_pid], iid)
        if original is not None:
            return original
    if s.last_id.ms == U64_MAX and s.last_id.seq == U64_MAX:
        raise ResponseError("ERR The stream has exhausted the last possible ID, unable "
                            "to add more items")
    cdef StreamID new_id
    if not args.id_given:
        if <uint64_t>ctx.now > s.last_id.ms:
            new_id.ms = ctx.now
            new_id.seq = 0
        else:
            new_id = s.last_id
            id_incr(&new_id)
    elif not args.seq_given and args.id.ms == s.last_id.ms:
        if s.last_id.seq == U64_MAX:
            raise ResponseError("ERR The ID specified in XADD is equal or smaller than the "
                                "target stream top item")
        new_id = s.last_id
        new_id.seq += 1
    else:
        new_id = args.id
    if id_cmp(&new_id, &s.last_id) <= 0:
        raise ResponseError("ERR The ID specified in XADD is equal or smaller than the "
                            "target stream top item")
    cdef uint64_t total = 0
    for i in range(field_pos, len(argv)):
        total += len(<bytes>argv[i])
    if total > (1 << 30):
        raise ResponseError("ERR Elements are too large to be stored")
    s.append(&new_id, argv, field_pos, nfields // 2, ctx.node_max_bytes,
             ctx.node_max_entries)
    s.last_id = new_id
    s.entries_added += 1
    if s.length == 1:
        s.first_id = new_id
    cdef bytes reply = id_format(&new_id)
    if ctx.logs():
        ctx.effects.append([b"XADD", key, reply] + argv[field_pos:])
    if iid is not None:
        idmp_record(ctx, key, s, argv[args.idmp_pid], iid, &new_id)
    ctx.touch(key, "t", b"xadd")
    if args.strategy != TRIM_NONE:
        apply_trim(ctx, key, s, &args)
    return reply


@command("xlen")
def xlen(CommandContext ctx, list argv):
    cdef Stream s = ctx.db.lookup_stream(argv[1], ctx.now)
    return 0 if s is None else s.length


cdef object range_command(CommandContext ctx, list argv, bint rev):
    cdef StreamID start, end
    cdef bint start_ex, end_ex
    cdef int64_t count = -1
    cdef Py_ssize_t j
    parse_bound(argv[3] if rev else argv[2], &start, 0, &start_ex)
    if start_ex and not id_incr(&start):
        raise ResponseError("ERR invalid start ID for the interval")
    parse_bound(argv[2] if rev else argv[3], &end, U64_MAX, &end_ex)
    if end_ex and not id_decr(&end):
        raise ResponseError("ERR invalid end ID for the interval")
    j = 4
    while j < len(argv):
        if (<bytes>argv[j]).lower() == b"count" and j + 1 < len(argv):
            count = parse_int(argv[j + 1], NULL)
            if count < 0:
                count = 0
            j += 2
        else:
            raise ResponseError(SYNTAX)
    cdef Stream s = ctx.db.lookup_stream(argv[1], ctx.now)
    if s is None:
        return []
    if count == 0:
        ctx.null_array = True
        return None
    if id_cmp(&start, &end) > 0:
        return []
    cdef EntryReply reply = entry_reply(ctx)
    cdef bint gc_was_enabled = gc_pause()      # see engine/core/reply_lists.pxd
    try:
        reply.begin_entries()
        reply.entry_range(s, &start, &end, count, rev)
        return reply.end_entries()
    finally:
        gc_resume(gc_was_enabled)


@command("xrange")
def xrange(CommandContext ctx, list argv):
    return range_command(ctx, argv, False)


@command("xrevrange")
def xrevrange(CommandContext ctx, list argv):
    return range_command(ctx, argv, True)


@command("xdel")
def xdel(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        return 0
    cdef Py_ssize_t n = len(argv) - 2, j
    cdef StreamID one
    ids = []
    for j in range(n):
        parse_id(argv[2 + j], &one, 0, True)
        ids.append((one.ms, one.seq))
    cdef int64_t deleted = 0
    cdef bint first_gone = False
    for ms, seq in ids:
        one.ms = ms
        one.seq = seq
        if s.delete(&one):
            if id_cmp(&one, &s.first_id) == 0:
                first_gone = True
            if id_cmp(&one, &s.max_deleted_id) > 0:
                s.max_deleted_id = one
            deleted += 1
    if deleted:
        if s.length == 0 or first_gone:
            refresh_first_id(s)
        if ctx.logs(deleted):       # one change per entry deleted, as Redis counts them
            ctx.effects.append(argv)
        ctx.touch(key, "t", b"xdel")
    return deleted


@command("xtrim")
def xtrim(CommandContext ctx, list argv):
    cdef TrimArgs args
    parse_trim_args(argv, &args, False, ctx.node_max_entries)
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        return 0
    cdef int64_t deleted = apply_trim(ctx, key, s, &args)
    ctx.dirty += deleted            # one change per entry removed, as Redis counts them
    return deleted


@command("xsetid")
def xsetid(CommandContext ctx, list argv):
    cdef StreamID new_id, max_deleted
    cdef int64_t entries_added = -1
    cdef Py_ssize_t i = 3, more
    cdef bytes opt
    max_deleted.ms = max_deleted.seq = 0
    parse_id(argv[2], &new_id, 0, True)
    while i < len(argv):
        more = len(argv) - 1 - i
        opt = (<bytes>argv[i]).lower()
        if opt == b"entriesadded" and more:
            entries_added = parse_int(argv[i + 1], NULL)
            if entries_added < 0:
                raise ResponseError("ERR entries_added must be positive")
        elif opt == b"maxdeletedid" and more:
            parse_id(argv[i + 1], &max_deleted, 0, True)
            if id_cmp(&new_id, &max_deleted) < 0:
                raise ResponseError("ERR The ID specified in XSETID is smaller than the "
                                    "provided max_deleted_entry_id")
        else:
            raise ResponseError(SYNTAX)
        i += 2
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        raise ResponseError(NO_SUCH_KEY)
    if id_cmp(&new_id, &s.max_deleted_id) < 0:
        raise ResponseError("ERR The ID specified in XSETID is smaller than current "
                            "max_deleted_entry_id")
    cdef StreamID top
    if s.length > 0:
        stream_edge_id(s, True, &top)
        if id_cmp(&new_id, &top) < 0:
            raise ResponseError("ERR The ID specified in XSETID is smaller than the target "
                                "stream top item")
        if entries_added != -1 and <int64_t>s.length > entries_added:
            raise ResponseError("ERR The entries_added specified in XSETID is smaller than "
                                "the target stream length")
    s.last_id = new_id
    if entries_added != -1:
        s.entries_added = entries_added
    if not id_is_zero(&max_deleted):
        s.max_deleted_id = max_deleted
    ctx.propagate(argv)
    ctx.notify(key, "t", b"xsetid")     # not a change for WATCH, as in Redis
    return OK
