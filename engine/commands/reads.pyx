"""XREAD and XREADGROUP, including XREADGROUP's CLAIM option.

XREADGROUP ... CLAIM min-idle-time serves each stream in two phases: first the
pending entries idle for at least min-idle-time, oldest delivery first, found by a
range scan of the group's pel_by_time (O(log n + k)); then new entries up to what
is left of COUNT. With CLAIM every returned entry carries two more fields: its idle
time in ms and its delivery count before this delivery (0 and 0 for new entries).

MAXCOUNT and MAXSIZE (Redis 8.10) bound the whole reply, across its streams, where
COUNT bounds each stream: at most MAXCOUNT entries, and entries while the RESP2 bytes
of those served so far (entry_resp_size) are below MAXSIZE - a soft cap: the last
entry may cross it, and the first one comes however big it is. The
streams are served in the order given; once a limit is reached the rest get
nothing, and XREADGROUP delivers (adds to the PEL, claims) only what it returns.

When nothing can be served and BLOCK was given, the command leaves a BlockRequest
on the context; serving it is the server's job (the embedded API answers nil, as a
client that may not block gets from Redis).
"""
from libc.stdint cimport uint8_t, uint64_t, int64_t
from libc.stdlib cimport malloc, realloc, free

from engine.core.streamid cimport StreamID, id_cmp, id_incr, id_decr, id_format, id_decode, id_encode
from engine.core.keyspace cimport Database
from engine.core.stream cimport (Stream, StreamNode, StreamIter, EntryPos,
                            stream_iter_start, stream_iter_next, stream_iter_stop)
from engine.core.groups cimport (ConsumerGroup, Consumer, PendingEntry, pe_time, pe_count,
                            pe_set_count, advance_last_delivered, time_key_split)
from engine.core.radix cimport (RadixIter, radix_iter_init, radix_seek, radix_next, RADIX_GE,
                           RADIX_FIRST)
from engine.commands.context cimport CommandContext
from engine.core.reply_lists cimport gc_pause, gc_resume
from engine.commands.entry_reply cimport EntryReply, entry_reply, entry_resp_size
from engine.commands.stream_args cimport parse_id
from engine.commands.streams cimport stream_edge_id
from engine.commands.groups cimport (propagate_delivery, propagate_pending,
                                     propagate_group_position, consumer_for,
                                     drop_vanished)
from engine.commands.parsing cimport parse_int
from engine.commands.table import command
from engine.core.errors import arg_text, ResponseError, SYNTAX

cdef uint64_t U64_MAX = 0xffffffffffffffff


class BlockRequest:
    """What a blocking command that found nothing waits for (read by the session and
    the server): XREAD/XREADGROUP here, BLPOP & co. in lists.pyx, BZPOPMIN & co.
    `argv` is the command to run again when one of `keys` changes; XREAD's `$` in it
    is already the last ID of its stream when the read blocked (as Redis keeps it),
    not the last ID when the read wakes. `key_type` (b"list", b"zset"; None for the
    stream reads): the command runs again only when one of its keys holds that type,
    and is then answered whatever it replies, errors included (as Redis 7.2+
    re-executes it); the stream reads keep their own rules (session.BlockedRead).
    `on_fsync` (WAITAOF, no keys): it runs again when the AOF's fsyncs advance."""

    __slots__ = ("keys", "timeout_ms", "argv", "claim_min_idle", "key_type", "on_fsync")

    def __init__(self, keys, timeout_ms, argv, claim_min_idle=-1, key_type=None,
                 on_fsync=False):
        self.keys = keys
        self.timeout_ms = timeout_ms
        self.argv = argv
        self.claim_min_idle = claim_min_idle
        self.key_type = key_type
        self.on_fsync = on_fsync


cdef struct ReadArgs:
    int64_t timeout        # -1: no BLOCK
    int64_t count          # 0: no limit
    int64_t maxcount       # 0: no limit
    int64_t maxsize        # 0: no limit
    int64_t claim          # -1: no CLAIM
    bint noack
    Py_ssize_t streams_at  # index of the first key
    Py_ssize_t nstreams


cdef int parse_read_args(list argv, ReadArgs* a, bint group_mode, list group_out) except -1:
    cdef Py_ssize_t i = 1, argc = len(argv), more
    cdef bytes opt
    a.timeout = -1
    a.count = 0
    a.maxcount = 0
    a.maxsize = 0
    a.claim = -1
    a.noack = 0
    a.streams_at = 0
    a.nstreams = 0
    cmd = "xreadgroup" if group_mode else "xread"
    while i < argc:
        more = argc - i - 1
        opt = (<bytes>argv[i]).lower()
        if opt == b"block" and more:
            i += 1
            a.timeout = parse_int(argv[i], b"ERR timeout is not an integer or out of range")
            if a.timeout < 0:
                raise ResponseError("ERR timeout is negative")
        elif opt == b"count" and more:
            i += 1
            a.count = parse_int(argv[i], NULL)
            if a.count < 0:
                a.count = 0
        elif opt == b"maxcount" and more:
            i += 1
            a.maxcount = parse_int(argv[i], b"ERR MAXCOUNT must be a positive integer")
            if a.maxcount <= 0:
                raise ResponseError("ERR MAXCOUNT must be a positive integer")
        elif opt == b"maxsize" and more:
            i += 1
            a.maxsize = parse_int(argv[i], b"ERR MAXSIZE must be a positive integer")
            if a.maxsize <= 0:
                raise ResponseError("ERR MAXSIZE must be a positive integer")
        elif opt == b"streams" and more:
            a.streams_at = i + 1
            a.nstreams = argc - a.streams_at
            if a.nstreams % 2:
                raise ResponseError(
                    "ERR Unbalanced '%s' list of streams: for each stream key an ID%s must "
                    "be specified." % (cmd, " or '>'" if group_mode else ", '+', or '$'"))
            a.nstreams //= 2
            break
        elif opt == b"group" and more >= 2:
            if not group_mode:
                raise ResponseError("ERR The GROUP option is only supported by XREADGROUP. "
                                    "You called XREAD instead.")
            group_out[:] = [argv[i + 1], argv[i + 2]]
            i += 2
        elif opt == b"noack":
            if not group_mode:
                raise ResponseError("ERR The NOACK option is only supported by XREADGROUP. "
                                    "You called XREAD instead.")
            a.noack = 1
        elif opt == b"claim" and more:
            if not group_mode:
                raise ResponseError("ERR The CLAIM option is only supported by XREADGROUP. "
                                    "You called XREAD instead.")
            i += 1
            a.claim = parse_int(argv[i], b"ERR min-idle-time is not an integer or out of range")
            if a.claim < 0:
                raise ResponseError("ERR min-idle-time must be a positive integer")
        else:
            raise ResponseError(SYNTAX)
        i += 1
    if a.streams_at == 0:
        raise ResponseError(SYNTAX)
    if a.maxcount and a.count > a.maxcount:
        raise ResponseError("ERR MAXCOUNT must be greater than or equal to COUNT")
    if group_mode and not group_out:
        raise ResponseError("ERR Missing GROUP option for XREADGROUP")
    return 0


cdef struct ReplyBudget:
    int64_t entries        # entries the reply may still take; -1: no MAXCOUNT
    int64_t maxsize        # 0: no MAXSIZE
    int64_t size           # RESP2 bytes of the entries taken so far


cdef inline void budget_start(ReplyBudget* b, ReadArgs* a) noexcept:
    b.entries = a.maxcount if a.maxcount else -1
    b.maxsize = a.maxsize
    b.size = 0


cdef inline int64_t budget_count(ReplyBudget* b, int64_t count) noexcept:
    """The entries one stream may give (0 = any number, as COUNT), or -1 when the
    reply takes no more."""
    if b.entries == 0 or (b.maxsize and b.size >= b.maxsize):
        return -1
    if b.entries > 0 and (count == 0 or count > b.entries):
        return b.entries
    return count


cdef inline void budget_took(ReplyBudget* b, Py_ssize_t n) noexcept:
    if b.entries > 0:
        b.entries -= n


cdef inline bint budget_fits(ReplyBudget* b, const StreamID* id, StreamNode* node,
                             unsigned int off) noexcept:
    """Whether the reply takes one more entry under MAXSIZE (counting its bytes if so)."""
    if b.maxsize == 0:
        return True
    if b.size >= b.maxsize:
        return False
    b.size += entry_resp_size(id, node, off)
    return True


cdef object finish(CommandContext ctx, EntryReply reply, ReadArgs* a, list argv):
    """The reply: served streams, or nil (and a BlockRequest when BLOCK was given)."""
    cdef object served = reply.end_streams()
    if served is not None:
        return served
    if a.timeout >= 0:
        ctx.block = BlockRequest(argv[a.streams_at:a.streams_at + a.nstreams], a.timeout,
                                 argv, a.claim)
    ctx.null_array = True
    return None


# -- XREAD ---------------------------------------------------------------------------

@command("xread")
def xread(CommandContext ctx, list argv):
    cdef ReadArgs a
    parse_read_args(argv, &a, False, [])
    cdef Py_ssize_t i
    cdef StreamID* after = <StreamID*>malloc((a.nstreams or 1) * sizeof(StreamID))
    cdef Stream s
    cdef bytes arg
    cdef EntryReply reply = entry_reply(ctx)
    cdef StreamID start, top
    cdef bint gc_was_enabled, dollar = False
    cdef ReplyBudget budget
    cdef int64_t count
    budget_start(&budget, &a)
    try:
        for i in range(a.nstreams):
            s = ctx.db.lookup_stream(argv[a.streams_at + i], ctx.now)
            arg = argv[a.streams_at + a.nstreams + i]
            if arg == b"$":
                dollar = True
                if s is not None:
                    after[i] = s.last_id
                else:
                    after[i].ms = after[i].seq = 0
            elif arg == b">":
                raise ResponseError("ERR The > ID can be specified only when calling "
                                    "XREADGROUP using the GROUP <group> <consumer> option.")
            elif arg == b"+":
                # Newer Redis: "+" reads the stream's last entry.
                if s is not None and stream_edge_id(s, True, &after[i]):
                    id_decr(&after[i])
                else:
                    after[i].ms = after[i].seq = 0
            else:
                parse_id(arg, &after[i], 0, True)
        reply.begin_streams()
        for i in range(a.nstreams):
            s = ctx.db.lookup_stream(argv[a.streams_at + i], ctx.now)
            if s is None or s.length == 0:
                continue
            stream_edge_id(s, True, &top)
            if id_cmp(&top, &after[i]) <= 0:
                continue
            start = after[i]
            id_incr(&start)
            count = budget_count(&budget, 1 if argv[a.streams_at + a.nstreams + i] == b"+"
                                 else a.count)
            if count < 0:
                break
            gc_was_enabled = gc_pause()        # see engine/core/reply_lists.pxd
            try:
                reply.begin_stream(argv[a.streams_at + i])
                entries_within(reply, s, &start, count, &budget)
                budget_took(&budget, reply.nentries)
                reply.end_stream(False)
            finally:
                gc_resume(gc_was_enabled)
        if dollar and a.timeout >= 0:
            argv = list(argv)
            for i in range(a.nstreams):
                if argv[a.streams_at + a.nstreams + i] == b"$":
                    argv[a.streams_at + a.nstreams + i] = id_format(&after[i])
    finally:
        free(after)
    return finish(ctx, reply, &a, argv)


cdef int entries_within(EntryReply reply, Stream s, const StreamID* start, int64_t count,
                        ReplyBudget* budget) except -1:
    """XREAD's entries of one stream from `start` on: at most count (0: all), while
    MAXSIZE lets."""
    cdef StreamIter it
    cdef StreamID sid, hi
    cdef int64_t n = 0
    hi.ms = hi.seq = U64_MAX
    stream_iter_start(&it, s, start, &hi, False)
    try:
        while (count == 0 or n < count) and stream_iter_next(&it, &sid):
            if not budget_fits(budget, &sid, it.node, it.cur):
                break
            reply.entry(&sid, it.node, it.cur)
            n += 1
    finally:
        stream_iter_stop(&it)
    return 0


# -- XREADGROUP ----------------------------------------------------------------------

@command("xreadgroup")
def xreadgroup(CommandContext ctx, list argv):
    cdef ReadArgs a
    cdef list names = []
    parse_read_args(argv, &a, True, names)
    cdef bytes group_name = names[0], consumer_name = names[1], key, arg
    cdef Py_ssize_t i
    cdef Stream s
    cdef list groups = []
    cdef EntryReply reply = entry_reply(ctx)
    cdef StreamID after
    for i in range(a.nstreams):
        key = argv[a.streams_at + i]
        s = ctx.db.lookup_stream(key, ctx.now)
        g = None if s is None else s.groups.get(group_name)
        if g is None:
            raise ResponseError(
                "NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP "
                "option" % (arg_text(key), arg_text(group_name)))
        groups.append(g)
        arg = argv[a.streams_at + a.nstreams + i]
        if arg == b"$":
            raise ResponseError(
                "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read "
                "the history of this consumer by specifying a proper ID, or use the > ID to "
                "get new messages. The $ ID would just return an empty result set.")
        if arg == b"+":
            raise ResponseError(
                "ERR The + ID is meaningless in the context of XREADGROUP: you want to read "
                "the history of this consumer by specifying a proper ID, or use the > ID to "
                "get new messages. The + ID would just return an empty result set.")
        if arg != b">":
            parse_id(arg, &after, 0, True)
    cdef ConsumerGroup grp
    cdef Consumer c
    cdef long long changes
    cdef ReplyBudget budget
    cdef int64_t count
    budget_start(&budget, &a)
    cdef bint gc_was_enabled = gc_pause()      # see engine/core/reply_lists.pxd
    try:
        reply.begin_streams()
        for i in range(a.nstreams):
            count = budget_count(&budget, a.count)
            if count < 0:
                break
            key = argv[a.streams_at + i]
            s = ctx.db.lookup_stream(key, ctx.now)
            grp = groups[i]
            c = consumer_for(ctx, key, grp, consumer_name)
            arg = argv[a.streams_at + a.nstreams + i]
            reply.begin_stream(key)
            changes = ctx.dirty
            if arg == b">":
                if a.claim >= 0:
                    claim_idle(ctx, key, s, grp, c, a.claim, count, reply, &budget)
                if count == 0 or reply.nentries < count:
                    deliver_new(ctx, key, s, grp, c,
                                count - reply.nentries if count else 0,
                                a.noack, a.claim >= 0, reply, &budget)
                if reply.nentries:
                    c.active_time = ctx.now
                if ctx.dirty > changes:
                    # One change per stream served, however many entries it got
                    # (Redis 7.2+; each entry's effect is still logged).
                    ctx.dirty = changes + 1
                budget_took(&budget, reply.nentries)
                reply.end_stream(False)
            else:
                parse_id(arg, &after, 0, True)
                history(ctx, key, s, grp, c, &after, count, reply, &budget)
                budget_took(&budget, reply.nentries)
                # Re-reading the PEL only refreshes delivery metadata: not a change
                # (Redis 7.2+), though its effects are logged.
                ctx.dirty = changes
                reply.end_stream(True)
    finally:
        gc_resume(gc_was_enabled)
    return finish(ctx, reply, &a, argv)


def claim_deadline(Database db, list keys, bytes group, int64_t min_idle):
    """For a blocked XREADGROUP ... CLAIM: the earliest time (engine clock, ms) at which
    a pending entry of `group` on one of `keys` becomes claimable (its oldest delivery
    + min_idle), or None when none of them has a pending entry."""
    cdef object best = None, oldest, stream, group_obj
    for key in keys:
        stream = db.peek(key)
        if type(stream) is not Stream:
            continue
        group_obj = (<Stream>stream).groups.get(group)
        if group_obj is None:
            continue
        oldest = (<ConsumerGroup>group_obj).oldest_delivery()
        if oldest is not None and (best is None or oldest + min_idle < best):
            best = oldest + min_idle
    return best


cdef enum:
    CLAIM_CHUNK = 64        # entries claimed and answered together (see claim_idle)


cdef void claim_idle(CommandContext ctx, bytes key, Stream s, ConsumerGroup g, Consumer c,
                     int64_t min_idle, int64_t count, EntryReply reply,
                     ReplyBudget* budget) except *:
    """Phase one of CLAIM: take over entries idle >= min_idle, oldest delivery first.

    One ordered scan of pel_by_time up to the idle deadline: O(log n + k). Entries
    whose stream entry is gone leave the PEL on the way and do not count. Candidates
    go in chunks: their stream entries are looked up, they are redelivered and
    answered, in batches that overlap cache misses and while the lines they need
    are still cached. Claiming moves entries to "now" in pel_by_time, where a scan
    with min_idle 0 would meet them again: then the first chunk takes every
    candidate up to the limit, and a scan for more (after deleted entries) stops
    before "now"."""
    if ctx.now < min_idle:
        return
    cdef uint64_t deadline = ctx.now - min_idle
    # No more can be claimed than is pending: the arrays below are sized by the limit.
    cdef Py_ssize_t pending = g.pending_count()
    cdef Py_ssize_t limit = count if 0 < count < pending else pending
    if limit == 0:
        return
    cdef bint chunked = deadline < <uint64_t>ctx.now
    cdef Py_ssize_t size = CLAIM_CHUNK if chunked and limit > CLAIM_CHUNK else limit
    cdef StreamID* ids = <StreamID*>malloc(size * sizeof(StreamID))
    cdef EntryPos* where = <EntryPos*>malloc(size * sizeof(EntryPos))
    cdef PendingEntry* previous = <PendingEntry*>malloc(size * sizeof(PendingEntry))
    cdef PendingEntry delivered
    cdef RadixIter it
    cdef Py_ssize_t n = 0, m, k, kept
    cdef bint more, logging
    try:
        if ids == NULL or where == NULL or previous == NULL:
            raise MemoryError()
        radix_iter_init(&it, g.pel_by_time)
        more = radix_seek(&it, RADIX_FIRST, NULL)
        while more and n < limit:
            m = 0
            while more and m < size and n + m < limit:
                if time_key_split(it.key, &ids[m]) > deadline:
                    more = False
                    break
                m += 1
                more = radix_next(&it)
            if not chunked:
                deadline = ctx.now - 1
            s.locate_many(ids, m, where)
            kept = 0
            for k in range(m):
                if where[k].node == NULL:
                    drop_vanished(ctx, key, g, &ids[k])
                elif budget_fits(budget, &ids[k], where[k].node, where[k].off):
                    ids[kept] = ids[k]
                    where[kept] = where[k]
                    kept += 1
                else:                       # MAXSIZE reached: claim no further
                    more = False
                    break
            if kept == 0:
                continue
            # The kept candidates are now the oldest deliveries (the scan took them
            # from the front of pel_by_time and the vanished ones left it).
            g.redeliver_many(ids, kept, c, ctx.now, previous, True)
            logging = ctx.logs(kept)
            for k in range(kept):
                reply.entry_meta(&ids[k], where[k].node, where[k].off,
                                 ctx.now - <int64_t>pe_time(&previous[k]),
                                 pe_count(&previous[k]))
                if logging:
                    delivered = previous[k]     # count + 1, saturated as stored
                    pe_set_count(&delivered, pe_count(&delivered) + 1)
                    propagate_pending(ctx, key, g, id_format(&ids[k]), c, ctx.now,
                                      pe_count(&delivered))
            n += kept
    finally:
        free(ids)
        free(where)
        free(previous)


cdef void deliver_new(CommandContext ctx, bytes key, Stream s, ConsumerGroup g, Consumer c,
                      int64_t count, bint noack, bint with_meta, EntryReply reply,
                      ReplyBudget* budget) except *:
    """Entries after the group's last-delivered ID, added to the PEL unless NOACK."""
    cdef StreamIter it
    cdef StreamID sid, start = g.last_id, hi
    cdef int64_t n = 0
    cdef PendingEntry* pe
    cdef bint advanced = False
    if s.length == 0 or not id_incr(&start):
        return
    hi.ms = hi.seq = U64_MAX
    stream_iter_start(&it, s, &start, &hi, False)
    try:
        while (count == 0 or n < count) and stream_iter_next(&it, &sid):
            if not budget_fits(budget, &sid, it.node, it.cur):
                break
            advance_last_delivered(s, g, &sid)
            advanced = True
            if not noack:
                if not g.add_pending(&sid, c, ctx.now, 1):
                    # The group was moved back with SETID: the entry changes hands.
                    g.update_pending(&sid, c, ctx.now, 1)
                propagate_delivery(ctx, key, g, &sid)
            if with_meta:
                reply.entry_meta(&sid, it.node, it.cur, 0, 0)
            else:
                reply.entry(&sid, it.node, it.cur)
            n += 1
    finally:
        stream_iter_stop(&it)
    if advanced:
        propagate_group_position(ctx, key, g)


cdef void history(CommandContext ctx, bytes key, Stream s, ConsumerGroup g, Consumer c,
                  const StreamID* after, int64_t count, EntryReply reply,
                  ReplyBudget* budget) except *:
    """The consumer's own pending entries after `after`; each counts as re-delivered."""
    cdef StreamID start = after[0]
    cdef RadixIter it
    cdef uint8_t kbuf[16]
    cdef PendingEntry* pe
    cdef Py_ssize_t n = 0, cap = 0, k
    cdef StreamID* ids = NULL
    cdef PendingEntry** pes = NULL     # valid throughout: nothing inserts or removes
    cdef EntryPos* where = NULL
    if not id_incr(&start):
        return
    id_encode(&start, kbuf)
    radix_iter_init(&it, c.pel)
    cdef int ok = radix_seek(&it, RADIX_GE, kbuf)
    try:
        while ok and (count == 0 or n < count):
            pe = g.owned_entry(c, it.key)
            if pe == NULL:                  # claimed by another consumer since
                ok = radix_next(&it)
                continue
            if n == cap:
                cap = 2 * cap if cap else 64
                ids = <StreamID*>grow(ids, cap * sizeof(StreamID))
                pes = <PendingEntry**>grow(pes, cap * sizeof(PendingEntry*))
            id_decode(it.key, &ids[n])
            pes[n] = pe
            n += 1
            ok = radix_next(&it)
        if n == 0:
            return
        where = <EntryPos*>malloc(n * sizeof(EntryPos))
        if where == NULL:
            raise MemoryError()
        s.locate_many(ids, n, where)
        for k in range(n):
            if where[k].node == NULL:
                reply.entry_missing(&ids[k])
                continue
            if not budget_fits(budget, &ids[k], where[k].node, where[k].off):
                break
            g.redeliver(pes[k], &ids[k], c, ctx.now)
            propagate_delivery(ctx, key, g, &ids[k])
            reply.entry(&ids[k], where[k].node, where[k].off)
    finally:
        free(ids)
        free(pes)
        free(where)


cdef void* grow(void* p, size_t size) except NULL:
    """realloc; on failure p stays allocated (its owner frees it)."""
    cdef void* q = realloc(p, size)
    if q == NULL:
        raise MemoryError()
    return q
