"""XDELEX and XACKDEL (Redis 8.2): deleting entries with a policy for the consumer
groups' references to them (stream_args.pxd: RefPolicy).

Each ID gets a code: 1 deleted (XACKDEL: acknowledged, and deleted or already gone),
2 kept because a group still references it (ACKED), -1 no such entry (XACKDEL: not
pending in the group). Effects are commands Redis 7.0 has: `XACK` for every
reference given up (the named group's, and with DELREF every group's), then `XDEL`
for the entries removed.
"""
from libc.stdint cimport int64_t

from engine.core.streamid cimport StreamID, id_format
from engine.core.stream cimport Stream
from engine.core.groups cimport ConsumerGroup, entry_referenced, drop_references
from engine.commands.context cimport CommandContext
from engine.commands.stream_args cimport (parse_id, ref_policy_word, RefPolicy, REF_KEEP,
                                          REF_DEL, REF_ACKED)
from engine.commands.streams cimport delete_entry, log_acks
from engine.commands.parsing cimport parse_int
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX

DELETED = 1
STILL_REFERENCED = 2
NO_SUCH_ID = -1


cdef list parse_ids(list argv, Py_ssize_t first, Py_ssize_t n):
    """Every ID, strictly, before the key is looked at (so a bad ID is an error even
    for a missing key) and before anything changes: (ms, seq) pairs."""
    cdef StreamID id
    cdef list out = []
    for j in range(first, first + n):
        parse_id(argv[j], &id, 0, True)
        out.append((id.ms, id.seq))
    return out


cdef tuple parse_ids_block(list argv, Py_ssize_t i):
    """[KEEPREF | DELREF | ACKED] IDS numids id... (in either order, from argv[i]) as
    (policy, the IDs as parse_ids gives them), with Redis's errors."""
    cdef int policy = -1, word
    cdef Py_ssize_t first = -1, argc = len(argv)
    cdef int64_t numids = 0
    cdef bytes opt
    while i < argc:
        opt = argv[i]
        word = ref_policy_word(opt)
        if word >= 0 and policy < 0:
            policy = word
            i += 1
        elif len(opt) == 3 and opt.lower() == b"ids" and i + 1 < argc:
            try:
                numids = parse_int(argv[i + 1], NULL)
            except ResponseError:
                numids = 0
            if numids <= 0:
                raise ResponseError("ERR Number of IDs must be a positive integer")
            if numids > argc - i - 2:
                raise ResponseError("ERR The `numids` parameter must match the number "
                                    "of arguments")
            first = i + 2
            i = first + numids
        else:
            raise ResponseError(SYNTAX)
    if first < 0:
        raise ResponseError("ERR IDS option is required")
    return REF_KEEP if policy < 0 else policy, parse_ids(argv, first, numids)


cdef int64_t delete_with_policy(Stream s, const StreamID* id, RefPolicy policy,
                                dict acks, list deleted) except -2:
    """One ID's deletion under `policy`: DELREF gives up every group's reference
    first (recorded in acks), ACKED keeps an entry some group references."""
    if policy == REF_ACKED and entry_referenced(s, id):
        return STILL_REFERENCED
    cdef ConsumerGroup g
    if policy == REF_DEL:
        for g in drop_references(s, id):
            acks.setdefault(g.name, []).append(id_format(id))
    if delete_entry(s, id):
        deleted.append(id_format(id))
        return DELETED
    return NO_SUCH_ID


cdef void log_deletions(CommandContext ctx, bytes key, dict acks, list deleted) except *:
    log_acks(ctx, key, acks)
    if deleted:
        if ctx.logs():
            ctx.effects.append([b"XDEL", key] + deleted)
        ctx.touch(key, "t", b"xdel")


cdef list delete_ids(CommandContext ctx, bytes key, Stream s, ConsumerGroup g,
                     RefPolicy policy, list ids):
    """XDELEX (g None) and XACKDEL's work on each of `ids`: XACKDEL first acknowledges
    it in g (an ID not pending there is -1 and stays), then both delete it under
    `policy`. Their codes; the effects are XACK for g, those of log_deletions."""
    cdef StreamID id
    cdef dict acks = {}
    cdef list deleted = []
    cdef list codes = []
    cdef list acked = []
    for ms, seq in ids:
        id.ms = ms
        id.seq = seq
        if g is None:
            codes.append(delete_with_policy(s, &id, policy, acks, deleted))
            continue
        if not g.remove_pending(&id):
            codes.append(NO_SUCH_ID)
            continue
        acked.append(id_format(&id))
        if delete_with_policy(s, &id, policy, acks, deleted) == STILL_REFERENCED:
            codes.append(STILL_REFERENCED)
        else:
            codes.append(DELETED)
    if acked and ctx.logs():
        ctx.effects.append([b"XACK", key, g.name] + acked)
    log_deletions(ctx, key, acks, deleted)
    return codes


@command("xdelex")
def xdelex(CommandContext ctx, list argv):
    policy, ids = parse_ids_block(argv, 2)
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    if s is None:
        return [NO_SUCH_ID] * len(ids)
    return delete_ids(ctx, key, s, None, policy, ids)


@command("xackdel")
def xackdel(CommandContext ctx, list argv):
    policy, ids = parse_ids_block(argv, 3)
    cdef bytes key = argv[1]
    cdef Stream s = ctx.db.lookup_stream(key, ctx.now)
    cdef ConsumerGroup g = None if s is None else s.groups.get(argv[2])
    if g is None:
        return [NO_SUCH_ID] * len(ids)
    return delete_ids(ctx, key, s, g, policy, ids)
