"""What the collection families share (see collection.pxd), and the handler of
LLEN/HLEN/SCARD/ZCARD (length_handler).

HSCAN/SSCAN/ZSCAN answer with every matching item and cursor 0 whatever COUNT
says: Redis does so for its small encodings (listpack, intset) and allows it for
any size (COUNT is a hint); a single answer needs no cursor that survives changes
made between calls."""
from libc.stdint cimport int64_t, INT64_MAX
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport (parse_int, parse_int_range, parse_timeout, is_option,
                                      scan_options, SCAN_PLAIN, SCAN_NOVALUES)
from engine.core.glob cimport stringmatchlen
from engine.commands.reads import BlockRequest
from engine.core.errors import ResponseError, SYNTAX


cdef void settle(CommandContext ctx, bytes key, object value) except *:
    if len(value) == 0:
        ctx.db.remove(key)
        ctx.notify(key, "g", b"del")
    else:
        ctx.db.resized(key)


cdef Py_ssize_t remove_each(CommandContext ctx, list argv, object value, object remove,
                            str cls, bytes event) except -1:
    if value is None:
        return 0
    cdef bytes key = argv[1]
    cdef list gone = [item for item in argv[2:] if remove(value, item)]  # a repeat: gone
    if gone:
        ctx.touch(key, cls, event)
        settle(ctx, key, value)
        if ctx.logs(len(gone)):
            ctx.effects.append([event.upper(), key] + gone)
    return len(gone)


def length_handler(type cls):
    """The handler of LLEN, HLEN, SCARD or ZCARD: the items of the `cls` value at
    argv[1], 0 for a missing key (WRONGTYPE for another type)."""
    def handler(CommandContext ctx, list argv):
        value = ctx.db.lookup_typed(argv[1], ctx.now, cls)
        return 0 if value is None else len(value)
    return handler


cdef int64_t random_count(object arg) except? -1:
    cdef int64_t count = parse_int(arg, NULL)
    if count < -INT64_MAX:
        raise ResponseError("ERR value is out of range, value must between "
                            "-9223372036854775807 and 9223372036854775807")
    return count


# The largest reply a negative random count may build: 512 MB, Redis's
# proto-max-bulk-len default (the largest single string it accepts).
DEF RANDOM_REPLY_MAX = 512 * 1024 * 1024
# What one item adds to the reply beyond its bytes: its RESP header and a list slot.
DEF ITEM_OVERHEAD = 16


cdef void check_repeats(int64_t picks, object value, int extra) except *:
    cdef double mean = <double>value.nbytes / len(value) + extra + ITEM_OVERHEAD
    if picks * mean > RANDOM_REPLY_MAX:
        raise ResponseError("ERR value is out of range")


cdef list scan_items(list argv, list items, bint pairs, bint novalues_ok):
    if items is None:
        return [b"0", []]
    cdef Py_ssize_t step = 2 if pairs else 1
    cdef bytes pattern
    _, pattern, novalues = scan_options(argv, 3, SCAN_NOVALUES if novalues_ok else SCAN_PLAIN)
    cdef list out = []
    cdef bytes item
    for j in range(0, len(items), step):
        item = items[j]
        if pattern is not None and not stringmatchlen(
                PyBytes_AS_STRING(pattern), PyBytes_GET_SIZE(pattern),
                PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item), 0):
            continue
        out.append(item)
        if pairs and novalues is None:
            out.append(items[j + 1])
    return [b"0", out]


cdef list mpop_args(list argv, Py_ssize_t numkeys_at, bytes first_end, bytes second_end,
                    bint* second, int64_t* count):
    cdef int64_t numkeys = parse_int_range(argv[numkeys_at], 1, INT64_MAX,
                                           b"ERR numkeys should be greater than 0")
    cdef Py_ssize_t argc = len(argv)
    if numkeys >= argc - numkeys_at - 1:       # no room for the keys and the end
        raise ResponseError(SYNTAX)
    cdef Py_ssize_t where_at = numkeys_at + 1 + numkeys, j = where_at + 1
    if is_option(argv[where_at], first_end):
        second[0] = False
    elif is_option(argv[where_at], second_end):
        second[0] = True
    else:
        raise ResponseError(SYNTAX)
    count[0] = -1
    while j < argc:
        if count[0] == -1 and is_option(argv[j], b"count") and j + 1 < argc:
            count[0] = parse_int_range(argv[j + 1], 1, INT64_MAX,
                                       b"ERR count should be greater than 0")
            j += 2
        else:
            raise ResponseError(SYNTAX)
    if count[0] == -1:
        count[0] = 1
    return argv[numkeys_at + 1:where_at]


cdef int64_t block_timeout(CommandContext ctx, object arg) except -1:
    cdef int64_t deadline = parse_timeout(arg, ctx.now, True)
    return deadline - ctx.now if deadline else 0


cdef object block_or_nil(CommandContext ctx, list keys, int64_t timeout, list argv,
                         bytes key_type, bint null_array):
    ctx.block = BlockRequest(keys, timeout, argv, -1, key_type)
    ctx.null_array = null_array
    return None


cdef bint rank_range(int64_t n, int64_t* start, int64_t* end) noexcept:
    if start[0] < 0:
        start[0] += n
    if end[0] < 0:
        end[0] += n
    if start[0] < 0:
        start[0] = 0
    if start[0] > end[0] or start[0] >= n:
        return False
    if end[0] >= n:
        end[0] = n - 1
    return True
