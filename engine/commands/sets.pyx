"""Set commands: SADD, SREM, SMEMBERS, SISMEMBER, SMISMEMBER, SCARD, SPOP,
SRANDMEMBER, SMOVE, SINTER, SUNION, SDIFF, SINTERSTORE, SUNIONSTORE, SDIFFSTORE,
SINTERCARD, SSCAN. A set is an engine/core/set_value.pyx SetValue, changed with the
engine's encoding limits (ctx.limits); one emptied by a command is removed (`del`
event).

Effects: SPOP replays as SREM of the members it took (as Redis propagates it; DEL
when it took them all), the rest as themselves.
"""
from libc.stdint cimport int64_t, INT64_MAX

from engine.commands.context cimport CommandContext
from engine.commands.collection cimport (settle, remove_each, scan_items, random_count,
                                         check_repeats)
from engine.commands.parsing cimport parse_int_range, parse_cursor, is_option
from engine.commands.collection import length_handler
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX
from engine.core.set_value cimport SetValue, new_set
from engine.resp.reply import SetReply

cdef enum:
    SREM_BATCH = 1024           # members per propagated SREM of a SPOP with a count


cdef inline object set_at(CommandContext ctx, bytes key):
    """The set at key, None if absent; WRONGTYPE for any other type."""
    return ctx.db.lookup_typed(key, ctx.now, SetValue)


cdef object members_reply(CommandContext ctx, list members):
    return SetReply(members) if ctx.resp3 else members


@command("sadd")
def sadd(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    value = set_at(ctx, key)
    if value is None:
        value = new_set(argv[2], len(argv) - 2, ctx.limits)
        added = value.add_all(argv[2:], ctx.limits)
        ctx.db.store(key, value)
    else:
        added = value.add_all(argv[2:], ctx.limits)
        ctx.db.resized(key)
    if added:
        ctx.touch(key, "s", b"sadd")
        ctx.propagate([b"SADD"] + argv[1:], added)
    return added


@command("srem")
def srem(CommandContext ctx, list argv):
    return remove_each(ctx, argv, set_at(ctx, argv[1]), SetValue.remove, "s", b"srem")


@command("smembers")
def smembers(CommandContext ctx, list argv):
    value = set_at(ctx, argv[1])
    return members_reply(ctx, [] if value is None else value.members())


@command("sismember")
def sismember(CommandContext ctx, list argv):
    value = set_at(ctx, argv[1])
    return int(value is not None and argv[2] in value)


@command("smismember")
def smismember(CommandContext ctx, list argv):
    value = set_at(ctx, argv[1])
    if value is None:
        return [0] * (len(argv) - 2)
    return [int(m in value) for m in argv[2:]]


command("scard")(length_handler(SetValue))


@command("spop")
def spop(CommandContext ctx, list argv):
    cdef Py_ssize_t argc = len(argv)
    if argc > 3:
        raise ResponseError(SYNTAX)
    cdef bytes key = argv[1]
    cdef int64_t count = 1
    if argc == 3:
        count = parse_int_range(argv[2], 0, INT64_MAX,
                                b"ERR value is out of range, must be positive")
    value = set_at(ctx, key)
    if value is None:
        return members_reply(ctx, []) if argc == 3 else None
    if argc == 3 and count == 0:
        return members_reply(ctx, [])
    cdef list taken = value.random_members(count)
    for member in taken:
        value.remove(member)
    ctx.touch(key, "s", b"spop")
    settle(ctx, key, value)
    if ctx.logs(len(taken)):            # one change per member taken
        if key not in ctx.db and argc == 3:
            ctx.effects.append([b"DEL", key])
        else:
            for i in range(0, len(taken), SREM_BATCH):
                ctx.effects.append([b"SREM", key] + taken[i:i + SREM_BATCH])
    if argc == 2:
        return taken[0]
    return members_reply(ctx, taken)


@command("srandmember")
def srandmember(CommandContext ctx, list argv):
    cdef Py_ssize_t argc = len(argv)
    if argc > 3:
        raise ResponseError(SYNTAX)
    if argc == 2:
        value = set_at(ctx, argv[1])
        return None if value is None else value.random_member()
    cdef int64_t count = random_count(argv[2])
    value = set_at(ctx, argv[1])
    if value is None or count == 0:
        return []
    if count > 0:
        return value.random_members(count)
    check_repeats(-count, value, 0)
    return value.random_picks(-count)


@command("smove")
def smove(CommandContext ctx, list argv):
    cdef bytes src = argv[1], dst = argv[2], member = argv[3]
    cdef bint added = True
    source = set_at(ctx, src)
    target = set_at(ctx, dst) if source is not None else None
    if source is None:
        return 0
    if src == dst:
        return int(member in source)
    if not source.remove(member):
        return 0
    ctx.touch(src, "s", b"srem")
    settle(ctx, src, source)
    if target is None:
        target = new_set(member, 1, ctx.limits)
        target.add(member, ctx.limits)
        ctx.db.store(dst, target)
        ctx.touch(dst, "s", b"sadd")
    elif target.add(member, ctx.limits):
        ctx.db.resized(dst)
        ctx.touch(dst, "s", b"sadd")
    else:
        added = False
    ctx.propagate([b"SMOVE", src, dst, member], 1 + added)     # the removal, the addition
    return 1


# -- algebra ---------------------------------------------------------------------------

cdef list operands(CommandContext ctx, list keys):
    """The sets at keys, in order (None for a missing key); WRONGTYPE first."""
    return [set_at(ctx, key) for key in keys]


cdef list intersection(list sets):
    """The members of the smallest set that every other one holds."""
    if not sets or any(s is None for s in sets):
        return []
    ordered = sorted(sets, key=len)
    rest = ordered[1:]
    return [m for m in (<SetValue>ordered[0]).members() if all(m in other for other in rest)]


cdef list combine(list sets, str op):
    if op == "inter":
        return intersection(sets)
    if op == "union":
        return list(set().union(*[(<SetValue>s).members() for s in sets if s is not None]))
    if sets[0] is None:
        return []
    rest = [s for s in sets[1:] if s is not None]
    return [m for m in (<SetValue>sets[0]).members() if not any(m in other for other in rest)]


cdef list algebra(CommandContext ctx, list keys, str op):
    return combine(operands(ctx, keys), op)


def algebra_handler(str op):
    """The handler of SINTER, SUNION or SDIFF (`op`)."""
    def handler(CommandContext ctx, list argv):
        return members_reply(ctx, algebra(ctx, argv[1:], op))
    return handler


command("sinter")(algebra_handler("inter"))
command("sunion")(algebra_handler("union"))
command("sdiff")(algebra_handler("diff"))


cdef int64_t store(CommandContext ctx, list argv, str op, bytes event):
    cdef bytes dst = argv[1]
    cdef list result = combine(operands(ctx, argv[2:]), op)
    cdef bint existed = ctx.db.lookup(dst, ctx.now) is not None
    cdef SetValue stored
    if result:
        ctx.db.persist(dst)         # replaced as Redis's setKey: no `new` key event
        stored = SetValue()         # as Redis builds it: an intset, then each member added
        for member in result:
            stored.insert(member, len(<bytes>member), ctx.limits)
        ctx.db.store(dst, stored)
        ctx.touch(dst, "s", event)
        ctx.propagate(list(argv))
    elif existed:
        ctx.db.remove(dst)
        ctx.touch(dst, "g", b"del")
        ctx.propagate([b"DEL", dst])
    return len(result)


def store_handler(str op, bytes event):
    """The handler of SINTERSTORE, SUNIONSTORE or SDIFFSTORE (`op`), firing `event`."""
    def handler(CommandContext ctx, list argv):
        return store(ctx, argv, op, event)
    return handler


command("sinterstore")(store_handler("inter", b"sinterstore"))
command("sunionstore")(store_handler("union", b"sunionstore"))
command("sdiffstore")(store_handler("diff", b"sdiffstore"))


@command("sintercard")
def sintercard(CommandContext ctx, list argv):
    cdef int64_t numkeys = parse_int_range(argv[1], 1, INT64_MAX,
                                           b"ERR numkeys should be greater than 0")
    cdef Py_ssize_t argc = len(argv), j
    if numkeys > argc - 2:
        raise ResponseError("ERR Number of keys can't be greater than number of args")
    cdef int64_t limit = 0
    j = 2 + numkeys
    while j < argc:
        if is_option(argv[j], b"limit") and j + 1 < argc:
            limit = parse_int_range(argv[j + 1], 0, INT64_MAX, b"ERR LIMIT can't be negative")
            j += 2
        else:
            raise ResponseError(SYNTAX)
    cdef int64_t n = len(intersection(operands(ctx, argv[2:2 + numkeys])))
    return n if not limit or n < limit else limit


@command("sscan")
def sscan(CommandContext ctx, list argv):
    parse_cursor(argv[2])
    value = set_at(ctx, argv[1])
    return scan_items(argv, None if value is None else value.members(), False, False)
