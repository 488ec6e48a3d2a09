"""List commands: LPUSH, RPUSH, LPUSHX, RPUSHX, LPOP, RPOP, LRANGE, LLEN, LINDEX, LSET,
LINSERT, LREM, LTRIM, LPOS, LMOVE, RPOPLPUSH, LMPOP and the blocking BLPOP, BRPOP,
BLMOVE, BRPOPLPUSH, BLMPOP. A list is an engine/core/list_value.pyx ListValue, changed
with the engine's encoding limits (ctx.limits); a list emptied by a command is removed
(`del` event).

Blocking: when every key is empty or missing, BLPOP & co. leave a BlockRequest
(reads.pyx) for the caller to park (the server, the embedded client); the command
runs again when one of its keys holds a list, oldest waiter first; `0` waits
forever. Inside MULTI or a script they answer nil at once.

Effects replay the outcome, as Redis propagates it: the blocking pops as the
non-blocking ones (BLPOP -> LPOP key, BLMOVE -> LMOVE, BRPOPLPUSH -> RPOPLPUSH),
LMPOP/BLMPOP as LPOP/RPOP key <count popped>; a command that changed nothing logs
nothing.
"""
from libc.stdint cimport int64_t, INT64_MAX

from engine.commands.context cimport CommandContext
from engine.commands.collection cimport (settle, mpop_args, rank_range, block_timeout,
                                         block_or_nil)
from engine.commands.parsing cimport parse_int, parse_int_range, is_option
from engine.commands.collection import length_handler
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX, NO_SUCH_KEY, wrong_arity
from engine.core.list_value cimport ListValue
from engine.resp.reply import OK as OK_REPLY


# getRangeLongFromObjectOrReply's text for -LONG_MAX..LONG_MAX (LPOS RANK, newest Redis).
OUT_OF_RANGE = ("ERR value is out of range, value must between -9223372036854775807 and "
                "9223372036854775807")


cdef inline ListValue list_at(CommandContext ctx, bytes key):
    """The list at key, None if absent; WRONGTYPE for any other type."""
    return <ListValue>ctx.db.lookup_typed(key, ctx.now, ListValue)


cdef inline bint parse_end(object arg) except -1:
    """LEFT (True) or RIGHT (False), else a syntax error."""
    if is_option(arg, b"left"):
        return True
    if is_option(arg, b"right"):
        return False
    raise ResponseError(SYNTAX)


cdef inline bytes end_event(bint left, bytes verb):
    return (b"l" if left else b"r") + verb


# -- pushing ---------------------------------------------------------------------------

cdef object push(CommandContext ctx, list argv, bint left, bint existing_only):
    cdef bytes key = argv[1]
    cdef ListValue value = list_at(ctx, key)
    if value is None:
        if existing_only:
            return 0
        value = ListValue()
        value.push_all(argv, 2, left, ctx.limits)
        ctx.db.store(key, value)
    else:
        value.push_all(argv, 2, left, ctx.limits)
        ctx.db.resized(key)
    ctx.touch(key, "l", end_event(left, b"push"))
    ctx.propagate([b"LPUSH" if left else b"RPUSH", key] + argv[2:], len(argv) - 2)
    return value.length


def push_handler(bint left, bint existing_only):
    """The handler of LPUSH (`left`) and RPUSH, and of their X forms (`existing_only`)."""
    def handler(CommandContext ctx, list argv):
        return push(ctx, argv, left, existing_only)
    return handler


command("lpush")(push_handler(True, False))
command("rpush")(push_handler(False, False))
command("lpushx")(push_handler(True, True))
command("rpushx")(push_handler(False, True))


# -- popping ---------------------------------------------------------------------------

cdef list pop_from(CommandContext ctx, bytes key, ListValue value, int64_t count, bint left):
    """Pops up to count elements of the list `value` at key, with its events; the
    effect is LPOP/RPOP key <count popped>."""
    cdef list out = []
    value.take(count, left, out)
    value.shrink_check(ctx.limits)
    ctx.touch(key, "l", end_event(left, b"pop"))
    settle(ctx, key, value)
    return out


cdef object pop_command(CommandContext ctx, list argv, bint left):
    cdef Py_ssize_t argc = len(argv)
    cdef int64_t count = 1
    if argc > 3:
        raise wrong_arity("lpop" if left else "rpop")
    if argc == 3:
        count = parse_int_range(argv[2], 0, INT64_MAX,
                                b"ERR value is out of range, must be positive")
    cdef bytes key = argv[1]
    cdef ListValue value = list_at(ctx, key)
    if value is None:
        ctx.null_array = argc == 3
        return None
    if argc == 3 and count == 0:
        return []
    cdef list out = pop_from(ctx, key, value, count, left)
    cdef bytes name = b"LPOP" if left else b"RPOP"
    if argc == 3:
        ctx.propagate([name, key, str(len(out)).encode()], len(out))
        return out
    ctx.propagate([name, key])
    return out[0]


@command("lpop")
def lpop(CommandContext ctx, list argv):
    return pop_command(ctx, argv, True)


@command("rpop")
def rpop(CommandContext ctx, list argv):
    return pop_command(ctx, argv, False)


cdef object block_pop(CommandContext ctx, list argv, bint left):
    """BLPOP/BRPOP key [key ...] timeout: [key, element] from the first non-empty key."""
    cdef int64_t timeout = block_timeout(ctx, argv[len(argv) - 1])
    cdef list keys = argv[1:len(argv) - 1]
    cdef bytes key
    cdef ListValue value
    for key in keys:
        value = list_at(ctx, key)
        if value is not None:
            out = pop_from(ctx, key, value, 1, left)
            ctx.propagate([b"LPOP" if left else b"RPOP", key])
            return [key, out[0]]
    return block_or_nil(ctx, keys, timeout, argv, b"list", True)


@command("blpop")
def blpop(CommandContext ctx, list argv):
    return block_pop(ctx, argv, True)


@command("brpop")
def brpop(CommandContext ctx, list argv):
    return block_pop(ctx, argv, False)


cdef object mpop(CommandContext ctx, list argv, Py_ssize_t numkeys_at, bint blocking):
    """LMPOP/BLMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count]."""
    cdef bint right
    cdef int64_t count
    cdef list keys = mpop_args(argv, numkeys_at, b"left", b"right", &right, &count)
    cdef int64_t timeout = block_timeout(ctx, argv[1]) if blocking else 0   # checked last
    cdef bint left = not right
    cdef bytes key
    cdef ListValue value
    for key in keys:
        value = list_at(ctx, key)
        if value is not None:
            out = pop_from(ctx, key, value, count, left)
            ctx.propagate([b"LPOP" if left else b"RPOP", key, str(len(out)).encode()],
                          len(out))
            return [key, out]
    if blocking:
        return block_or_nil(ctx, keys, timeout, argv, b"list", True)
    ctx.null_array = True
    return None


@command("lmpop")
def lmpop(CommandContext ctx, list argv):
    return mpop(ctx, argv, 1, False)


@command("blmpop")
def blmpop(CommandContext ctx, list argv):
    return mpop(ctx, argv, 2, True)


# -- moving ----------------------------------------------------------------------------

cdef object move(CommandContext ctx, bytes src, bytes dst, bint from_left, bint to_left):
    """One element from src's end to dst's end; None when src is missing (the effect
    is the caller's)."""
    cdef ListValue value = list_at(ctx, src)
    if value is None:
        return None
    cdef ListValue target = list_at(ctx, dst)          # WRONGTYPE before anything moves
    cdef list out = []
    value.take(1, from_left, out)
    value.shrink_check(ctx.limits)
    if target is None:
        target = ListValue()
        target.push_all(out, 0, to_left, ctx.limits)
        ctx.db.store(dst, target)
    else:
        target.push_all(out, 0, to_left, ctx.limits)
        ctx.db.resized(dst)
    element = out[0]
    ctx.touch(dst, "l", end_event(to_left, b"push"))
    ctx.touch(src, "l", end_event(from_left, b"pop"))
    settle(ctx, src, value)
    return element


cdef bytes end_name(bint left):
    return b"LEFT" if left else b"RIGHT"


@command("lmove")
def lmove(CommandContext ctx, list argv):
    cdef bint from_left = parse_end(argv[3]), to_left = parse_end(argv[4])
    element = move(ctx, argv[1], argv[2], from_left, to_left)
    if element is not None:
        ctx.propagate([b"LMOVE", argv[1], argv[2], end_name(from_left), end_name(to_left)])
    return element


@command("rpoplpush")
def rpoplpush(CommandContext ctx, list argv):
    element = move(ctx, argv[1], argv[2], False, True)
    if element is not None:
        ctx.propagate([b"RPOPLPUSH", argv[1], argv[2]])
    return element


@command("blmove")
def blmove(CommandContext ctx, list argv):
    cdef bint from_left = parse_end(argv[3]), to_left = parse_end(argv[4])
    cdef int64_t timeout = block_timeout(ctx, argv[5])
    element = move(ctx, argv[1], argv[2], from_left, to_left)
    if element is None:
        return block_or_nil(ctx, [argv[1]], timeout, argv, b"list", False)
    ctx.propagate([b"LMOVE", argv[1], argv[2], end_name(from_left), end_name(to_left)])
    return element


@command("brpoplpush")
def brpoplpush(CommandContext ctx, list argv):
    cdef int64_t timeout = block_timeout(ctx, argv[3])
    element = move(ctx, argv[1], argv[2], False, True)
    if element is None:
        return block_or_nil(ctx, [argv[1]], timeout, argv, b"list", False)
    ctx.propagate([b"RPOPLPUSH", argv[1], argv[2]])
    return element


# -- reading ---------------------------------------------------------------------------

command("llen")(length_handler(ListValue))


@command("lrange")
def lrange(CommandContext ctx, list argv):
    cdef int64_t start = parse_int(argv[2], NULL), end = parse_int(argv[3], NULL)
    cdef ListValue value = list_at(ctx, argv[1])
    if value is None or not rank_range(value.length, &start, &end):
        return []
    return value.range(start, end)


cdef int64_t normal_index(int64_t index, int64_t n) noexcept:
    """A list index (negative from the tail) as 0..n-1, or -1 when out of range."""
    if index < 0:
        index += n
    return index if 0 <= index < n else -1


@command("lindex")
def lindex(CommandContext ctx, list argv):
    cdef ListValue value = list_at(ctx, argv[1])
    if value is None:
        return None
    cdef int64_t index = normal_index(parse_int(argv[2], NULL), value.length)
    return None if index < 0 else value.get(index)


@command("lset")
def lset(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    cdef ListValue value = list_at(ctx, key)
    if value is None:
        raise ResponseError(NO_SUCH_KEY)
    cdef int64_t index = normal_index(parse_int(argv[2], NULL), value.length)
    if index < 0:
        raise ResponseError("ERR index out of range")
    value.set_at(index, argv[3], ctx.limits)
    ctx.db.resized(key)
    ctx.touch(key, "l", b"lset")
    ctx.propagate([b"LSET", key, str(index).encode(), argv[3]])
    return OK_REPLY


@command("linsert")
def linsert(CommandContext ctx, list argv):
    cdef bint after
    if is_option(argv[2], b"after"):
        after = True
    elif is_option(argv[2], b"before"):
        after = False
    else:
        raise ResponseError(SYNTAX)
    cdef bytes key = argv[1], pivot = argv[3]
    cdef ListValue value = list_at(ctx, key)
    if value is None:
        return 0
    if value.insert_at_pivot(pivot, argv[4], after, ctx.limits) < 0:
        return -1
    ctx.db.resized(key)
    ctx.touch(key, "l", b"linsert")
    ctx.propagate([b"LINSERT", key, b"AFTER" if after else b"BEFORE", pivot, argv[4]])
    return value.length


@command("lrem")
def lrem(CommandContext ctx, list argv):
    cdef int64_t count = parse_int(argv[2], NULL)
    cdef bytes key = argv[1], element = argv[3]
    cdef ListValue value = list_at(ctx, key)
    if value is None:
        return 0
    cdef int64_t removed = value.remove_matches(element, count, ctx.limits)
    if removed:
        ctx.touch(key, "l", b"lrem")
        settle(ctx, key, value)
        ctx.propagate([b"LREM", key, argv[2], element], removed)
    return removed


@command("ltrim")
def ltrim(CommandContext ctx, list argv):
    cdef int64_t start = parse_int(argv[2], NULL), end = parse_int(argv[3], NULL)
    cdef bytes key = argv[1]
    cdef ListValue value = list_at(ctx, key)
    if value is None:
        return OK_REPLY
    cdef int64_t n = value.length, drop_head, drop_tail
    if rank_range(n, &start, &end):
        drop_head, drop_tail = start, n - end - 1
    else:
        drop_head, drop_tail = n, 0
    value.trim(drop_head, drop_tail, ctx.limits)
    ctx.touch(key, "l", b"ltrim")
    settle(ctx, key, value)
    if drop_head or drop_tail:
        ctx.propagate([b"LTRIM", key, argv[2], argv[3]], drop_head + drop_tail)
    return OK_REPLY


@command("lpos")
def lpos(CommandContext ctx, list argv):
    cdef int64_t rank = 1, count = -1, maxlen = 0
    cdef Py_ssize_t j = 3, argc = len(argv)
    while j < argc:
        more = j + 1 < argc
        if is_option(argv[j], b"rank") and more:
            rank = parse_int(argv[j + 1], NULL)
            if rank == -INT64_MAX - 1:
                raise ResponseError(OUT_OF_RANGE)
            if rank == 0:
                raise ResponseError("ERR RANK can't be zero: use 1 to start from the first "
                                    "match, 2 from the second ... or use negative to start "
                                    "from the end of the list")
        elif is_option(argv[j], b"count") and more:
            count = parse_int_range(argv[j + 1], 0, INT64_MAX, b"ERR COUNT can't be negative")
        elif is_option(argv[j], b"maxlen") and more:
            maxlen = parse_int_range(argv[j + 1], 0, INT64_MAX, b"ERR MAXLEN can't be negative")
        else:
            raise ResponseError(SYNTAX)
        j += 2
    cdef ListValue value = list_at(ctx, argv[1])
    if value is None:
        return [] if count != -1 else None
    cdef list found = value.positions(argv[2], rank, 1 if count == -1 else count, maxlen)
    if count != -1:
        return found
    return found[0] if found else None
