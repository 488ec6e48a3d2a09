"""Consumer-group commands: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XNACK.

Every change to a pending entry is logged as the idempotent
`XCLAIM key group consumer 0 id TIME t RETRYCOUNT n FORCE JUSTID LASTID last`, an
acknowledgement or a vanished entry as `XACK`, and group positions as
`XGROUP SETID ... ENTRIESREAD n`, so a replay rebuilds the PEL and pel_by_time
exactly, whatever the clock says during the replay.
"""
from libc.stdint cimport uint8_t, uint64_t, int64_t
from libc.stdlib cimport malloc, free

from engine.core.streamid cimport (StreamID, id_cmp, id_incr, id_decr, id_format, id_decode,
                              id_encode)
from engine.core.stream cimport Stream, EntryPos
from engine.core.groups cimport (ConsumerGroup, Consumer, PendingEntry, pe_time, pe_count,
                            ENTRIES_READ_UNKNOWN)
from engine.core.radix cimport (RadixIter, radix_iter_init, radix_seek, radix_next, RADIX_GE,
                           RADIX_FIRST, RADIX_LAST)
from engine.commands.context cimport CommandContext
from engine.commands.entry_reply cimport EntryReply, entry_reply
from engine.core.reply_lists cimport leaf_list
from engine.commands.stream_args cimport parse_id, parse_bound
from engine.commands.parsing cimport parse_int
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX, arg_text, subcommand_syntax
from engine.resp.reply import OK

cdef uint64_t U64_MAX = 0xffffffffffffffff


# -- propagation -------------------------------------------------------------------

# One claim call logs hundreds of XCLAIMs with the same delivery time and LASTID and
# small counts: their text is made once and reused.
cdef tuple SMALL_COUNTS = tuple(str(i).encode() for i in range(256))
cdef uint64_t memo_time = 0
cdef bytes memo_time_text = b"0"
cdef StreamID memo_last_id
cdef bytes memo_last_id_text = b"0-0"


cdef inline bytes time_text(uint64_t t):
    global memo_time, memo_time_text
    if t != memo_time:
        memo_time = t
        memo_time_text = str(t).encode()
    return memo_time_text


cdef inline bytes last_id_text(const StreamID* last):
    global memo_last_id_text
    if last.ms != memo_last_id.ms or last.seq != memo_last_id.seq:
        memo_last_id.ms = last.ms
        memo_last_id.seq = last.seq
        memo_last_id_text = id_format(last)
    return memo_last_id_text


cdef void propagate_delivery(CommandContext ctx, bytes key, ConsumerGroup g,
                             const StreamID* id) except *:
    """Logs the current state of the pending entry `id` as an idempotent XCLAIM."""
    if not ctx.logs():
        return
    cdef PendingEntry* pe = g.find_pending(id)
    propagate_pending(ctx, key, g, id_format(id), g.owner_of(pe), pe_time(pe), pe_count(pe))


cdef void propagate_pending(CommandContext ctx, bytes key, ConsumerGroup g, bytes id_text,
                            Consumer owner, uint64_t time, int64_t count) except *:
    # Only bytes inside: kept out of the cycle collector like reply lists (a claim
    # logs one per entry).
    ctx.effects.append(leaf_list([b"XCLAIM", key, g.name, owner.name, b"0", id_text,
                             b"TIME", time_text(time), b"RETRYCOUNT",
                             <bytes>SMALL_COUNTS[count] if 0 <= count < 256
                             else str(count).encode(),
                             b"FORCE", b"JUSTID", b"LASTID", last_id_text(&g.last_id)]))


cdef void propagate_group_position(CommandContext ctx, bytes key, ConsumerGroup g) except *:
    if not ctx.logs():
        return
    ctx.effects.append([b"XGROUP", b"SETID", key, g.name, id_format(&g.last_id),
                   b"ENTRIESREAD", str(g.entries_read).encode()])


cdef void propagate_consumer(CommandContext ctx, bytes key, ConsumerGroup g,
                             Consumer c) except *:
    ctx.propagate([b"XGROUP", b"CREATECONSUMER", key, g.name, c.name])
    ctx.notify(key, "t", b"xgroup-createconsumer")


cdef Consumer consumer_for(CommandContext ctx, bytes key, ConsumerGroup g, bytes name):
    """The named consumer (created, and logged, when new); marks it seen now."""
    cdef Consumer c = g.lookup_consumer(name)
    if c is None:
        c = g.create_consumer(name, ctx.now)
        propagate_consumer(ctx, key, g, c)
    c.seen_time = ctx.now
    return c


cdef ConsumerGroup group_or_error(CommandContext ctx, bytes key, bytes group, str fmt):
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    cdef ConsumerGroup g = None if s is None else s.groups.get(group)
    if g is None:
        raise ResponseError(fmt.format(key=arg_text(key), group=arg_text(group)))
    return g


NOGROUP_KEY_OR_GROUP = "NOGROUP No such key '{key}' or consumer group '{group}'"


# -- XGROUP --------------------------------------------------------------------------



cdef int64_t parse_entries_read(CommandContext ctx, bytes arg) except? -3:
    """ENTRIESREAD's value. A replayed log's is the group's state as logged, taken as
    it is: the counter may have wrapped past INT64_MAX (as Redis's does), or exceed
    entries-added since XSETID lowered that (see cap_entries_read)."""
    cdef int64_t n = parse_int(arg, NULL)
    if n < 0 and n != ENTRIES_READ_UNKNOWN and not ctx.db.loading:
        raise ResponseError("ERR value for ENTRIESREAD must be positive or -1")
    return n


cdef Stream xgroup_stream(CommandContext ctx, list argv, bint mkstream):
    cdef Stream s = ctx.db.lookup_stream(argv[2], ctx.now)
    if s is None and not mkstream:
        raise ResponseError(
            "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE "
            "you may want to use the MKSTREAM option to create an empty stream "
            "automatically.")
    return s


cdef ConsumerGroup xgroup_existing(CommandContext ctx, list argv):
    cdef Stream s = xgroup_stream(ctx, argv, False)
    cdef ConsumerGroup g = s.groups.get(argv[3])
    if g is None:
        raise ResponseError("NOGROUP No such consumer group '%s' for key name '%s'" % (
            arg_text(argv[3]), arg_text(argv[2])))
    return g


cdef int64_t cap_entries_read(CommandContext ctx, Stream s, int64_t entries_read):
    """Newer Redis caps a given ENTRIESREAD at the stream's entries-added (not a
    replayed one: see parse_entries_read)."""
    if (entries_read != ENTRIES_READ_UNKNOWN and <uint64_t>entries_read > s.entries_added
            and not ctx.db.loading):
        return s.entries_added
    return entries_read


cdef int64_t group_options(CommandContext ctx, list argv, bint create, bint* mkstream) except? -2:
    """CREATE's MKSTREAM and CREATE's or SETID's ENTRIESREAD (its value), read first:
    Redis reports a bad option before anything about the key, the group or the ID."""
    cdef int64_t entries_read = ENTRIES_READ_UNKNOWN
    cdef Py_ssize_t i = 5
    while i < len(argv):
        opt = (<bytes>argv[i]).lower()
        if create and opt == b"mkstream":
            mkstream[0] = True
            i += 1
        elif opt == b"entriesread" and i + 1 < len(argv):
            entries_read = parse_entries_read(ctx, argv[i + 1])
            i += 2
        else:
            raise subcommand_syntax(b"xgroup", argv[1])
    return entries_read


@command("xgroup|create")
def xgroup_create(CommandContext ctx, list argv):
    cdef bint mkstream = False
    cdef int64_t entries_read = group_options(ctx, argv, True, &mkstream)
    cdef bytes key = argv[2], name = argv[3]
    cdef Stream s = xgroup_stream(ctx, argv, mkstream)
    cdef bint created = s is None
    if len(argv) > 8:
        raise subcommand_syntax(b"xgroup", argv[1])
    cdef StreamID start
    if argv[4] == b"$":
        if s is not None:
            start = s.last_id
        else:
            start.ms = start.seq = 0
    else:
        parse_id(argv[4], &start, 0, True)
    if s is None:
        s = Stream()
        ctx.db.store(key, s)
    if name in s.groups:
        raise ResponseError("BUSYGROUP Consumer Group name already exists")
    entries_read = cap_entries_read(ctx, s, entries_read)
    s.groups[name] = ConsumerGroup(name, start.ms, start.seq, entries_read)
    ctx.propagate([b"XGROUP", b"CREATE", key, name, id_format(&start), b"MKSTREAM",
                   b"ENTRIESREAD", str(entries_read).encode()])
    if created:
        ctx.touch(key, "t", b"xgroup-create")     # MKSTREAM made a new key
    else:
        ctx.notify(key, "t", b"xgroup-create")
    return OK


@command("xgroup|setid")
def xgroup_setid(CommandContext ctx, list argv):
    cdef bint mkstream = False
    cdef int64_t entries_read = group_options(ctx, argv, False, &mkstream)
    cdef ConsumerGroup g = xgroup_existing(ctx, argv)
    cdef Stream s = ctx.db.lookup_stream(argv[2], ctx.now)
    if len(argv) != 5 and len(argv) != 7:
        raise subcommand_syntax(b"xgroup", argv[1])
    cdef StreamID start
    if argv[4] == b"$":
        start = s.last_id
    else:
        parse_id(argv[4], &start, 0, False)
    g.last_id = start
    g.entries_read = cap_entries_read(ctx, s, entries_read)
    propagate_group_position(ctx, argv[2], g)
    ctx.wake(argv[2], "t", b"xgroup-setid")
    return OK


@command("xgroup|destroy")
def xgroup_destroy(CommandContext ctx, list argv):
    cdef Stream s = xgroup_stream(ctx, argv, False)
    if s.groups.pop(argv[3], None) is None:
        return 0
    ctx.propagate(argv)
    ctx.wake(argv[2], "t", b"xgroup-destroy")    # its readers get NOGROUP
    return 1


@command("xgroup|createconsumer")
def xgroup_createconsumer(CommandContext ctx, list argv):
    cdef ConsumerGroup g = xgroup_existing(ctx, argv)
    if g.lookup_consumer(argv[4]) is not None:
        return 0
    propagate_consumer(ctx, argv[2], g, g.create_consumer(argv[4], ctx.now))
    return 1


@command("xgroup|delconsumer")
def xgroup_delconsumer(CommandContext ctx, list argv):
    cdef ConsumerGroup g = xgroup_existing(ctx, argv)
    cdef Consumer c = g.lookup_consumer(argv[4])
    if c is None:
        return 0
    cdef uint64_t pending = g.delete_consumer(c)
    ctx.propagate(argv)
    ctx.notify(argv[2], "t", b"xgroup-delconsumer")
    return pending


XGROUP_HELP = [
    b"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"CREATE <key> <groupname> <id|$> [option]",
    b"    Create a new consumer group. Options are:",
    b"    * MKSTREAM",
    b"      Create the empty stream if it does not exist.",
    b"    * ENTRIESREAD entries_read",
    b"      Set the group's entries_read counter (internal use).",
    b"CREATECONSUMER <key> <groupname> <consumer>",
    b"    Create a new consumer in the specified group.",
    b"DELCONSUMER <key> <groupname> <consumer>",
    b"    Remove the specified consumer.",
    b"DESTROY <key> <groupname>",
    b"    Remove the specified group.",
    b"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
    b"    Set the current group ID and entries_read counter.",
    b"HELP",
    b"    Print this help.",
]


@command("xgroup|help")
def xgroup_help(CommandContext ctx, list argv):
    return list(XGROUP_HELP)


# -- XACK ----------------------------------------------------------------------------

@command("xack")
def xack(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    cdef ConsumerGroup g = None if s is None else s.groups.get(argv[2])
    if g is None:
        return 0
    cdef Py_ssize_t n = len(argv) - 3, j
    cdef StreamID* ids = <StreamID*>malloc(n * sizeof(StreamID))
    cdef int64_t acked = 0
    try:
        for j in range(n):
            parse_id(argv[3 + j], &ids[j], 0, True)
        for j in range(n):
            if g.remove_pending(&ids[j]):
                acked += 1
    finally:
        free(ids)
    if acked:
        ctx.propagate(argv, acked)         # one change per entry acknowledged
    return acked


# -- XPENDING ------------------------------------------------------------------------

@command("xpending")
def xpending(CommandContext ctx, list argv):
    cdef Py_ssize_t argc = len(argv), first = 3
    cdef int64_t min_idle = 0, count = 0
    cdef StreamID start, end
    cdef bint start_ex, end_ex
    cdef bytes consumer_name = None
    if argc != 3 and (argc < 6 or argc > 9):
        raise ResponseError(SYNTAX)
    if argc >= 6:
        if (<bytes>argv[3]).lower() == b"idle":
            min_idle = parse_int(argv[4], NULL)
            if argc < 8:
                raise ResponseError(SYNTAX)
            first = 5
        count = parse_int(argv[first + 2], NULL)
        if count < 0:
            count = 0
        parse_bound(argv[first], &start, 0, &start_ex)
        if start_ex and not id_incr(&start):
            raise ResponseError("ERR invalid start ID for the interval")
        parse_bound(argv[first + 1], &end, U64_MAX, &end_ex)
        if end_ex and not id_decr(&end):
            raise ResponseError("ERR invalid end ID for the interval")
        if first + 3 < argc:
            consumer_name = argv[first + 3]
    cdef ConsumerGroup g = group_or_error(ctx, argv[1], argv[2], NOGROUP_KEY_OR_GROUP)
    if argc == 3:
        return pending_summary(g, ctx.nil_array)
    cdef Consumer only = None
    if consumer_name is not None:
        only = g.lookup_consumer(consumer_name)
        if only is None:
            return []
    return pending_range(ctx, g, only, &start, &end, count, min_idle)


cdef list pending_summary(ConsumerGroup g, object nil_array):
    cdef RadixIter it
    cdef StreamID lo, hi
    if g.pending_count() == 0:
        return [0, None, None, nil_array]
    radix_iter_init(&it, g.pel)
    radix_seek(&it, RADIX_FIRST, NULL)
    id_decode(it.key, &lo)
    radix_seek(&it, RADIX_LAST, NULL)
    id_decode(it.key, &hi)
    owners = []
    for name in sorted(g.consumers):
        c = <Consumer>g.consumers[name]
        if c.pending_count() and name != NACK_OWNER:     # XNACKed entries: no owner
            owners.append([name, str(c.pending_count()).encode()])
    return [g.pending_count(), id_format(&lo), id_format(&hi), owners]


cdef list pending_range(CommandContext ctx, ConsumerGroup g, Consumer only,
                        const StreamID* start, const StreamID* end, int64_t count,
                        int64_t min_idle):
    cdef RadixIter it
    cdef uint8_t key[16]
    cdef StreamID sid
    cdef PendingEntry* pe
    cdef int64_t idle
    cdef list out = []
    cdef bytes owner
    id_encode(start, key)
    radix_iter_init(&it, only.pel if only is not None else g.pel)
    cdef int ok = radix_seek(&it, RADIX_GE, key)
    while count and ok:
        id_decode(it.key, &sid)
        if id_cmp(&sid, end) > 0:
            break
        pe = g.owned_entry(only, it.key) if only is not None else <PendingEntry*>it.value
        if pe == NULL:              # a key another consumer has claimed since
            ok = radix_next(&it)
            continue
        idle = ctx.now - <int64_t>pe_time(pe)
        if min_idle and idle < min_idle:
            ok = radix_next(&it)
            continue
        owner = g.owner_of(pe).name
        if pe_time(pe) == 0 and owner == NACK_OWNER:
            idle = -1                # XNACKed (newest Redis: idle -1 for those)
        elif idle < 0:
            idle = 0
        out.append([id_format(&sid), owner, idle, pe_count(pe)])
        count -= 1
        ok = radix_next(&it)
    return out


# -- XCLAIM / XAUTOCLAIM -------------------------------------------------------------

cdef void drop_vanished(CommandContext ctx, bytes key, ConsumerGroup g,
                        const StreamID* id) except *:
    """A pending entry whose stream entry is gone leaves the PEL (logged as XACK)."""
    g.remove_pending(id)
    ctx.propagate([b"XACK", key, g.name, id_format(id)])


cdef void claim_one(CommandContext ctx, ConsumerGroup g, Consumer c, const StreamID* id,
                    uint64_t delivery_time, int64_t count) except *:
    g.update_pending(id, c, delivery_time, count)
    c.active_time = ctx.now


@command("xclaim")
def xclaim(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef ConsumerGroup g = group_or_error(ctx, key, argv[2], NOGROUP_KEY_OR_GROUP)
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    cdef int64_t min_idle = parse_int(argv[4], b"ERR Invalid min-idle-time argument for XCLAIM")
    if min_idle < 0:
        min_idle = 0
    cdef StreamID one, last_id
    cdef Py_ssize_t j = 5, argc = len(argv), last_id_arg
    ids = []
    while j < argc:
        try:
            parse_id(argv[j], &one, 0, True)
        except ResponseError:
            break
        ids.append((one.ms, one.seq))
        j += 1
    cdef bint force = False, justid = False
    cdef int64_t retrycount = -1, delivery_time = -1
    last_id.ms = last_id.seq = 0
    while j < argc:
        more = argc - 1 - j
        opt = (<bytes>argv[j]).lower()
        if opt == b"force":
            force = True
        elif opt == b"justid":
            justid = True
        elif opt == b"idle" and more:
            j += 1
            delivery_time = ctx.now - parse_int(argv[j], b"ERR Invalid IDLE option argument for XCLAIM")
        elif opt == b"time" and more:
            j += 1
            delivery_time = parse_int(argv[j], b"ERR Invalid TIME option argument for XCLAIM")
        elif opt == b"retrycount" and more:
            j += 1
            retrycount = parse_int(argv[j], b"ERR Invalid RETRYCOUNT option argument for XCLAIM")
        elif opt == b"lastid" and more:
            j += 1
            parse_id(argv[j], &last_id, 0, True)
        else:
            raise ResponseError("ERR Unrecognized XCLAIM option '%s'"
                                % arg_text(argv[j]))
        j += 1
    cdef bint moved_last_id = False
    if id_cmp(&last_id, &g.last_id) > 0:
        g.last_id = last_id
        moved_last_id = True
    # A replayed log's TIME is the delivery time as it was, even one in the future
    # (RESTORE takes those): only a client's is capped at now, as Redis does.
    if delivery_time < 0 or (delivery_time > ctx.now and not ctx.db.loading):
        delivery_time = ctx.now
    # Newer Redis creates (and marks seen) the consumer even if nothing is claimed.
    cdef Consumer c = consumer_for(ctx, key, g, argv[3])
    cdef PendingEntry* pe
    cdef int64_t count
    cdef EntryPos where
    cdef EntryReply reply = entry_reply(ctx)
    reply.begin_entries()
    for ms, seq in ids:
        one.ms = ms
        one.seq = seq
        pe = g.find_pending(&one)
        if not s.locate(&one, &where):
            if pe != NULL:
                drop_vanished(ctx, key, g, &one)
            continue
        if pe == NULL:
            if not force:
                continue
            g.add_pending(&one, c, ctx.now, 1)
            pe = g.find_pending(&one)
        elif min_idle and ctx.now - <int64_t>pe_time(pe) < min_idle:
            continue
        count = pe_count(pe)
        if retrycount >= 0:
            count = retrycount
        elif not justid:
            count += 1
        claim_one(ctx, g, c, &one, delivery_time, count)
        claimed(reply, &one, &where, justid)
        propagate_delivery(ctx, key, g, &one)
        moved_last_id = False
    if moved_last_id:
        propagate_group_position(ctx, key, g)
    return reply.end_entries()


cdef inline int claimed(EntryReply reply, const StreamID* id, const EntryPos* where,
                        bint justid) except -1:
    """What XCLAIM/XAUTOCLAIM return for one claimed entry."""
    if justid:
        return reply.entry_id(id)
    return reply.entry(id, where.node, where.off)


@command("xautoclaim")
def xautoclaim(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef int64_t min_idle = parse_int(argv[4], b"ERR Invalid min-idle-time argument for XAUTOCLAIM")
    if min_idle < 0:
        min_idle = 0
    cdef StreamID start
    cdef bint start_ex
    parse_bound(argv[5], &start, 0, &start_ex)
    if start_ex and not id_incr(&start):
        raise ResponseError("ERR invalid start ID for the interval")
    cdef int64_t count = 100
    cdef bint justid = False
    cdef Py_ssize_t j = 6, argc = len(argv)
    while j < argc:
        opt = (<bytes>argv[j]).lower()
        if opt == b"count" and argc - 1 - j:
            count = parse_int(argv[j + 1], b"ERR COUNT must be > 0")
            if count < 1 or count > 0x7fffffffffffffff // 16:
                raise ResponseError("ERR COUNT must be > 0")
            j += 1
        elif opt == b"justid":
            justid = True
        else:
            raise ResponseError(SYNTAX)
        j += 1
    cdef ConsumerGroup g = group_or_error(ctx, key, argv[2], NOGROUP_KEY_OR_GROUP)
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    return autoclaim(ctx, key, s, g, argv[3], min_idle, &start, count, justid)


cdef object autoclaim(CommandContext ctx, bytes key, Stream s, ConsumerGroup g, bytes name,
                      int64_t min_idle, const StreamID* start, int64_t count, bint justid):
    """Scans the PEL from `start` in ID order: at most count*10 entries examined,
    at most `count` claimed or found deleted. Returns [cursor, claimed, deleted]."""
    cdef int64_t attempts = count * 10
    cdef RadixIter it
    cdef uint8_t key_buf[16]
    cdef StreamID sid, cursor
    cdef PendingEntry* pe
    cdef Consumer c = consumer_for(ctx, key, g, name)
    cdef list deleted = []
    cdef EntryPos where
    cdef EntryReply reply = entry_reply(ctx)
    reply.begin_entries()
    id_encode(start, key_buf)
    radix_iter_init(&it, g.pel)
    cdef int ok = radix_seek(&it, RADIX_GE, key_buf)
    while attempts > 0 and count > 0 and ok:
        attempts -= 1
        id_decode(it.key, &sid)
        pe = <PendingEntry*>it.value
        if not s.locate(&sid, &where):
            drop_vanished(ctx, key, g, &sid)
            deleted.append(id_format(&sid))
            count -= 1
        elif not min_idle or ctx.now - <int64_t>pe_time(pe) >= min_idle:
            claim_one(ctx, g, c, &sid, ctx.now, pe_count(pe) + (0 if justid else 1))
            claimed(reply, &sid, &where, justid)
            propagate_delivery(ctx, key, g, &sid)
            count -= 1
        ok = radix_next(&it)
    if ok:
        id_decode(it.key, &cursor)
    else:
        cursor.ms = cursor.seq = 0
    return reply.end_autoclaim(&cursor, deleted)


# -- XNACK ---------------------------------------------------------------------------

# XNACK (Redis 8.8) hands pending entries back to the group: owned by no consumer and
# delivered at time 0, the head of pel_by_time, so that XREADGROUP ... CLAIM, XCLAIM
# and XAUTOCLAIM take them first and at once (any min-idle-time), while a plain `>`
# read does not deliver them again. Sluice keeps "owned by no consumer" as owned by
# the consumer named "" (NACK_OWNER): the PEL stays one structure, and the state is
# logged as every other PEL change is (XCLAIM ... TIME 0 RETRYCOUNT n FORCE JUSTID),
# which Redis 7.0 loads as it is.
NACK_OWNER = b""
# FATAL's count: LLONG_MAX in Redis, the largest count a PendingEntry holds here.
cdef int64_t NACK_FATAL_COUNT = 0x7fffffffffffffff
cdef int64_t NUMIDS_MAX = 0x7fffffff


@command("xnack")
def xnack(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef ConsumerGroup g = group_or_error(ctx, key, argv[2], NOGROUP_KEY_OR_GROUP)
    cdef bytes mode = (<bytes>argv[3]).lower()
    if mode != b"silent" and mode != b"fail" and mode != b"fatal":
        raise ResponseError("ERR mode must be SILENT, FAIL, or FATAL")
    cdef Py_ssize_t j = 4, argc = len(argv), ids_at = 0
    cdef int64_t numids = 0, retrycount = -1
    cdef bint force = False
    while j < argc:
        opt = (<bytes>argv[j]).lower()
        if opt == b"ids" and j + 1 < argc:
            numids = parse_int(argv[j + 1], b"ERR numids must be a positive integer")
            if numids < 1 or numids > NUMIDS_MAX:
                raise ResponseError("ERR numids must be a positive integer")
            ids_at = j + 2
            if argc - ids_at < numids:
                raise ResponseError("ERR number of IDs doesn't match numids")
            j = ids_at + numids
        elif opt == b"retrycount" and j + 1 < argc:
            retrycount = parse_int(argv[j + 1], NULL)
            if retrycount < 0:
                raise ResponseError("ERR Invalid RETRYCOUNT value, must be >= 0")
            j += 2
        elif opt == b"force":
            force = True
            j += 1
        else:
            raise ResponseError("ERR Unrecognized XNACK option '%s'" % arg_text(argv[j]))
    if ids_at == 0:
        raise ResponseError("ERR syntax error, expected IDS keyword")
    cdef StreamID* ids = <StreamID*>malloc(numids * sizeof(StreamID))
    if ids == NULL:
        raise MemoryError()
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    cdef Consumer owner = None
    cdef PendingEntry* pe
    cdef EntryPos where
    cdef int64_t count, nacked = 0
    try:
        for j in range(numids):
            parse_id(argv[ids_at + j], &ids[j], 0, True)
        for j in range(numids):
            # An entry gone from the stream is left alone: a claim of it would drop it.
            if not s.locate(&ids[j], &where):
                continue
            pe = g.find_pending(&ids[j])
            if pe == NULL and not force:
                continue
            if retrycount >= 0:
                count = retrycount
            elif mode == b"fatal":
                count = NACK_FATAL_COUNT
            elif pe == NULL:
                count = 0
            elif mode == b"silent":
                count = pe_count(pe) - 1 if pe_count(pe) > 0 else 0
            else:
                count = pe_count(pe)
            if owner is None:
                owner = g.lookup_consumer(NACK_OWNER)
                if owner is None:
                    owner = g.create_consumer(NACK_OWNER, ctx.now)
            if pe == NULL:
                g.add_pending(&ids[j], owner, 0, count)
            else:
                g.update_pending(&ids[j], owner, 0, count)
            propagate_delivery(ctx, key, g, &ids[j])
            nacked += 1
    finally:
        free(ids)
    if nacked and ctx.tracking:
        ctx.woken.append(key)       # readers blocked on CLAIM may take them at once
    return nacked
