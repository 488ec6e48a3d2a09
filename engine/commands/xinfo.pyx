"""XINFO STREAM [FULL [COUNT n]], XINFO GROUPS, XINFO CONSUMERS, XINFO HELP.

Replies are maps: flat [name, value, ...] lists in RESP2, dicts in RESP3.
"""
from libc.stdint cimport uint64_t, int64_t

from engine.core.streamid cimport StreamID, id_format, id_decode
from engine.core.stream cimport Stream
from engine.core.groups cimport (ConsumerGroup, Consumer, PendingEntry, pe_time, pe_count,
                            ENTRIES_READ_UNKNOWN, group_lag)
from engine.core.radix cimport (RadixIter, radix_iter_init, radix_seek, radix_next, RADIX_FIRST,
                           radix_node_count)
from engine.commands.context cimport CommandContext
from engine.commands.entry_reply cimport EntryReply, entry_lists
from engine.commands.parsing cimport parse_int
from engine.commands.idmp cimport idmp_info
from engine.commands.table import command
from engine.core.errors import ResponseError, NO_SUCH_KEY, arg_text, subcommand_syntax

cdef uint64_t U64_MAX = 0xffffffffffffffff



cdef object as_map(CommandContext ctx, list pairs):
    if ctx.resp3:
        return {pairs[i]: pairs[i + 1] for i in range(0, len(pairs), 2)}
    return pairs


cdef Stream stream_or_error(CommandContext ctx, bytes key):
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        raise ResponseError(NO_SUCH_KEY)
    return s


cdef object entries_read_reply(ConsumerGroup g):
    return None if g.entries_read == ENTRIES_READ_UNKNOWN else g.entries_read


@command("xinfo|consumers")
def xinfo_consumers(CommandContext ctx, list argv):
    cdef Stream s = stream_or_error(ctx, argv[2])
    cdef ConsumerGroup g = s.groups.get(argv[3])
    if g is None:
        raise ResponseError("NOGROUP No such consumer group '%s' for key name '%s'" % (
            arg_text(argv[3]), arg_text(argv[2])))
    cdef Consumer c
    out = []
    for name in sorted(g.consumers):
        c = g.consumers[name]
        idle = ctx.now - c.seen_time
        inactive = ctx.now - c.active_time if c.active_time != -1 else -1
        out.append(as_map(ctx, [b"name", c.name, b"pending", c.pending_count(),
                                b"idle", idle if idle > 0 else 0, b"inactive", inactive]))
    return out


@command("xinfo|groups")
def xinfo_groups(CommandContext ctx, list argv):
    cdef Stream s = stream_or_error(ctx, argv[2])
    cdef ConsumerGroup g
    out = []
    for name in sorted(s.groups):
        g = s.groups[name]
        out.append(as_map(ctx, [b"name", g.name, b"consumers", len(g.consumers),
                                b"pending", g.pending_count(),
                                b"last-delivered-id", id_format(&g.last_id),
                                b"entries-read", entries_read_reply(g),
                                b"lag", group_lag(s, g)]))
    return out


@command("xinfo|stream")
def xinfo_stream(CommandContext ctx, list argv):
    cdef Stream s = stream_or_error(ctx, argv[2])
    cdef bint full = False
    cdef int64_t count = 10
    if len(argv) > 3:
        if (<bytes>argv[3]).lower() != b"full":
            raise subcommand_syntax(b"xinfo", argv[1])
        full = True
        if len(argv) > 4:
            if len(argv) != 6 or (<bytes>argv[4]).lower() != b"count":
                raise subcommand_syntax(b"xinfo", argv[1])
            count = parse_int(argv[5], NULL)
            if count < 0:
                count = 10
    cdef StreamID lo, hi
    lo.ms = lo.seq = 0
    hi.ms = hi.seq = U64_MAX
    pairs = [b"length", s.length,
             b"radix-tree-keys", s.node_count(),
             b"radix-tree-nodes", radix_node_count(s.nodes),
             b"last-generated-id", id_format(&s.last_id),
             b"max-deleted-entry-id", id_format(&s.max_deleted_id),
             # a signed 64-bit counter in Redis, which wraps past its maximum
             b"entries-added", <int64_t>s.entries_added,
             b"recorded-first-entry-id", id_format(&s.first_id)] + idmp_info(ctx, s)
    if not full:
        first = entries(ctx, s, &lo, &hi, 1, False)
        last = entries(ctx, s, &lo, &hi, 1, True)
        pairs += [b"groups", len(s.groups),
                  b"first-entry", first[0] if first else None,
                  b"last-entry", last[0] if last else None]
    else:
        pairs += [b"entries", entries(ctx, s, &lo, &hi, count if count else -1, False),
                  b"groups", [full_group(ctx, s, s.groups[name], count)
                              for name in sorted(s.groups)]]
    return as_map(ctx, pairs)


cdef list entries(CommandContext ctx, Stream s, const StreamID* lo, const StreamID* hi,
                  int64_t count, bint rev):
    """[[id, [f, v, ...]], ...] of [lo, hi], at most count (< 0: all)."""
    cdef EntryReply reply = entry_lists(ctx)
    reply.begin_entries()
    reply.entry_range(s, lo, hi, count, rev)
    return reply.end_entries()


cdef object full_group(CommandContext ctx, Stream s, ConsumerGroup g, int64_t count):
    cdef RadixIter it
    cdef StreamID sid
    cdef PendingEntry* pe
    cdef Consumer c
    pending = []
    radix_iter_init(&it, g.pel)
    cdef int ok = radix_seek(&it, RADIX_FIRST, NULL)
    while ok and (count == 0 or <int64_t>len(pending) < count):
        id_decode(it.key, &sid)
        pe = <PendingEntry*>it.value
        pending.append([id_format(&sid), g.owner_of(pe).name, pe_time(pe), pe_count(pe)])
        ok = radix_next(&it)
    consumers = []
    for name in sorted(g.consumers):
        c = g.consumers[name]
        mine = []
        radix_iter_init(&it, c.pel)
        ok = radix_seek(&it, RADIX_FIRST, NULL)
        while ok and (count == 0 or <int64_t>len(mine) < count):
            pe = g.owned_entry(c, it.key)
            if pe == NULL:          # a key another consumer has claimed since
                ok = radix_next(&it)
                continue
            id_decode(it.key, &sid)
            mine.append([id_format(&sid), pe_time(pe), pe_count(pe)])
            ok = radix_next(&it)
        consumers.append(as_map(ctx, [b"name", c.name, b"seen-time", c.seen_time,
                                      b"active-time", c.active_time,
                                      b"pel-count", c.pending_count(), b"pending", mine]))
    return as_map(ctx, [b"name", g.name, b"last-delivered-id", id_format(&g.last_id),
                        b"entries-read", entries_read_reply(g), b"lag", group_lag(s, g),
                        b"pel-count", g.pending_count(), b"pending", pending,
                        b"consumers", consumers])


XINFO_HELP = [
    b"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"CONSUMERS <key> <groupname>",
    b"    Show consumers of <groupname>.",
    b"GROUPS <key>",
    b"    Show the stream consumer groups.",
    b"STREAM <key> [FULL [COUNT <count>]",
    b"    Show information about the stream.",
    b"HELP",
    b"    Print this help.",
]


@command("xinfo|help")
def xinfo_help(CommandContext ctx, list argv):
    return list(XINFO_HELP)
