"""What the collection families share (see collection.pxd).

HSCAN/SSCAN/ZSCAN answer with every matching item and cursor 0 whatever COUNT
says: Redis does so for its small encodings (listpack, intset) and allows it for
any size (COUNT is a hint); a single answer needs no cursor that survives changes
made between calls."""
from libc.stdint cimport int64_t, INT64_MAX
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.core.glob cimport stringmatchlen
from engine.core.errors import ResponseError, SYNTAX


cdef void settle(CommandContext ctx, bytes key, object value) except *:
    if len(value) == 0:
        ctx.db.remove(key)
        ctx.notify(key, "g", b"del")
    else:
        ctx.db.resized(key)


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
    cdef Py_ssize_t i = 3, argc = len(argv), step = 2 if pairs else 1
    cdef bytes pattern = None
    cdef bint novalues = False
    while i < argc:
        if is_option(argv[i], b"count") and argc - i >= 2:
            if parse_int(argv[i + 1], NULL) < 1:
                raise ResponseError(SYNTAX)
            i += 2
        elif is_option(argv[i], b"match") and argc - i >= 2:
            pattern = argv[i + 1]
            if pattern == b"*":
                pattern = None
            i += 2
        elif novalues_ok and is_option(argv[i], b"novalues"):
            novalues = True
            i += 1
        else:
            raise ResponseError(SYNTAX)
    cdef list out = []
    cdef bytes item
    for j in range(0, len(items), step):
        item = items[j]
        if pattern is not None and not stringmatchlen(
                PyBytes_AS_STRING(pattern), PyBytes_GET_SIZE(pattern),
                PyBytes_AS_STRING(item), PyBytes_GET_SIZE(item), 0):
            continue
        out.append(item)
        if pairs and not novalues:
            out.append(items[j + 1])
    return [b"0", out]
