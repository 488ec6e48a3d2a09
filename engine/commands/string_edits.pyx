"""String commands that read or edit part of a value, or treat it as a number:
GETRANGE, SUBSTR, SETRANGE, INCRBYFLOAT, LCS (the whole-value ones are in
strings.pyx).

INCRBYFLOAT computes in C's long double, as Redis does, and prints the result
with 17 decimals, trailing zeros dropped ("-0" as "0"), so that replies agree
with Redis digit for digit. Effects: SETRANGE logs itself (it is deterministic),
INCRBYFLOAT logs `SET key <result> KEEPTTL` (a replay must not redo the float
arithmetic).
"""
from libc.stdint cimport int64_t, uint32_t, uint64_t, UINT32_MAX
from libc.stdio cimport snprintf
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy, memchr, memset
from cpython.bytes cimport (PyBytes_AS_STRING, PyBytes_GET_SIZE,
                            PyBytes_FromStringAndSize)

from engine.core.keyspace cimport Database, ENCODED_AS_RAW, ENCODED_AS_TEXT
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, parse_long_double, is_option
from engine.commands.strings cimport string_at, check_string_length
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX

cdef extern from "math.h":
    # C99's type-generic classification macros, on a long double (a cast to double
    # would turn large finite values into infinities).
    bint ld_isnan "isnan"(long double x) noexcept nogil
    bint ld_isinf "isinf"(long double x) noexcept nogil

# Redis's MAX_LONG_DOUBLE_CHARS: room for any finite long double with 17 decimals.
DEF LONG_DOUBLE_CHARS = 5 * 1024


cdef object range_of(CommandContext ctx, list argv):
    cdef int64_t start = parse_int(argv[2], NULL)
    cdef int64_t end = parse_int(argv[3], NULL)
    value = string_at(ctx, argv[1])
    if value is None:
        return b""
    cdef int64_t n = PyBytes_GET_SIZE(value)
    if start < 0 and end < 0 and start > end:
        return b""
    if start < 0:
        start += n
    if end < 0:
        end += n
    if start < 0:
        start = 0
    if end < 0:
        end = 0
    if end >= n:
        end = n - 1
    if start > end or n == 0:
        return b""
    return (<bytes>value)[start:end + 1]


@command("getrange")
def getrange(CommandContext ctx, list argv):
    return range_of(ctx, argv)


@command("substr")
def substr(CommandContext ctx, list argv):
    return range_of(ctx, argv)


@command("setrange")
def setrange(CommandContext ctx, list argv):
    cdef bytes key = argv[1], patch = argv[3]
    cdef int64_t offset = parse_int(argv[2], NULL)
    if offset < 0:
        raise ResponseError("ERR offset is out of range")
    value = string_at(ctx, key)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(patch)
    if n == 0:   # nothing to write: the length as it is
        return 0 if value is None else PyBytes_GET_SIZE(value)
    check_string_length(ctx, offset, n)
    cdef bytes old = b"" if value is None else <bytes>value
    cdef Py_ssize_t size = PyBytes_GET_SIZE(old)
    cdef Py_ssize_t total = max(size, <Py_ssize_t>offset + n)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, total)
    cdef char* p = PyBytes_AS_STRING(out)
    memcpy(p, PyBytes_AS_STRING(old), size)
    if offset > size:
        memset(p + size, 0, offset - size)
    memcpy(p + offset, PyBytes_AS_STRING(patch), n)
    ctx.db.store(key, out)   # keeps the key's TTL
    ctx.db.mark_encoding(key, ENCODED_AS_RAW)         # an sds Redis edits: raw
    ctx.touch(key, "$", b"setrange")
    ctx.propagate([b"SETRANGE", key, argv[2], patch])
    return total


cdef bytes format_long_double(long double value):
    """Redis's human-friendly long double text (ld2string, LD_STR_HUMAN)."""
    cdef char buf[LONG_DOUBLE_CHARS]
    cdef int n = snprintf(buf, LONG_DOUBLE_CHARS, "%.17Lf", value)
    if memchr(buf, ord("."), n) != NULL:
        while buf[n - 1] == b"0":
            n -= 1
        if buf[n - 1] == b".":
            n -= 1
    if n == 2 and buf[0] == b"-" and buf[1] == b"0":
        return b"0"
    return buf[:n]


@command("incrbyfloat")
def incrbyfloat(CommandContext ctx, list argv):
    cdef bytes key = argv[1]
    value = string_at(ctx, key)
    cdef long double current = 0
    if value is not None:
        current = parse_long_double(value, NULL)
    cdef long double result = current + parse_long_double(argv[2], NULL)
    if ld_isnan(result) or ld_isinf(result):
        raise ResponseError("ERR increment would produce NaN or Infinity")
    cdef bytes text = format_long_double(result)
    ctx.db.store(key, text)   # keeps the key's TTL
    ctx.db.mark_encoding(key, ENCODED_AS_TEXT)        # made from its text: embstr
    ctx.touch(key, "$", b"incrbyfloat")
    if ctx.logs():
        ctx.effects.append([b"SET", key, text, b"KEEPTTL"])
    return text


cdef object lcs_operand(CommandContext ctx, bytes key):
    value = ctx.db.lookup(key, ctx.now)
    if value is None:
        return b""
    if type(value) is not bytes:
        raise ResponseError("ERR The specified keys must contain string values")
    return value


@command("lcs")
def lcs(CommandContext ctx, list argv):
    a = lcs_operand(ctx, argv[1])
    b = lcs_operand(ctx, argv[2])
    cdef bint want_len = False, want_idx = False, with_len = False
    cdef int64_t min_len = 0
    cdef Py_ssize_t j = 3, argc = len(argv)
    while j < argc:
        opt = argv[j]
        if is_option(opt, b"idx"):
            want_idx = True
        elif is_option(opt, b"len"):
            want_len = True
        elif is_option(opt, b"withmatchlen"):
            with_len = True
        elif is_option(opt, b"minmatchlen") and j < argc - 1:
            j += 1
            min_len = max(parse_int(argv[j], NULL), 0)
        else:
            raise ResponseError(SYNTAX)
        j += 1
    if want_idx and want_len:
        raise ResponseError("ERR If you want both the length and indexes, please just use IDX.")
    # The table has a uint32 cell per pair of positions: refused when it would not
    # fit proto-max-bulk-len (Redis's limit on a command's transient memory).
    cdef size_t alen = PyBytes_GET_SIZE(a), blen = PyBytes_GET_SIZE(b)
    if alen >= UINT32_MAX - 1 or blen >= UINT32_MAX - 1:
        raise ResponseError("ERR String too long for LCS")
    if (alen + 1) * (blen + 1) > <uint64_t>ctx.max_string // sizeof(uint32_t):
        raise ResponseError(
            "ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len")
    return longest_common(a, b, want_len, want_idx, with_len, min_len, ctx.resp3)


cdef object longest_common(bytes a, bytes b, bint want_len, bint want_idx,
                           bint with_len, int64_t min_len, bint resp3):
    """LCS's reply: the classic dynamic-programming table, walked back from the end
    (the matched ranges come out last first, as Redis lists them); IDX's reply is
    a map in RESP3, a flat array in RESP2."""
    cdef uint32_t alen = PyBytes_GET_SIZE(a), blen = PyBytes_GET_SIZE(b)
    cdef const unsigned char* sa = <const unsigned char*>PyBytes_AS_STRING(a)
    cdef const unsigned char* sb = <const unsigned char*>PyBytes_AS_STRING(b)
    cdef size_t cells = (<size_t>alen + 1) * (<size_t>blen + 1)
    cdef uint32_t* dp = <uint32_t*>malloc(cells * sizeof(uint32_t))
    if dp == NULL:
        raise MemoryError()
    cdef size_t w = blen + 1
    cdef uint32_t i, k, x, y, idx
    cdef uint32_t a_start, a_end, b_start, b_end, match_len
    cdef bint emit
    cdef list matches = []
    cdef bytearray common
    try:
        for i in range(alen + 1):
            for k in range(blen + 1):
                if i == 0 or k == 0:
                    dp[i * w + k] = 0
                elif sa[i - 1] == sb[k - 1]:
                    dp[i * w + k] = dp[(i - 1) * w + k - 1] + 1
                else:
                    x = dp[(i - 1) * w + k]
                    y = dp[i * w + k - 1]
                    dp[i * w + k] = x if x > y else y
        idx = dp[alen * w + blen]
        if want_len:
            return idx
        common = bytearray(idx)
        i, k = alen, blen
        a_start = a_end = b_start = b_end = alen   # alen: no range open
        while i > 0 and k > 0:
            emit = False
            if sa[i - 1] == sb[k - 1]:
                common[idx - 1] = sa[i - 1]
                if a_start == alen:
                    a_start = a_end = i - 1
                    b_start = b_end = k - 1
                elif a_start == i and b_start == k:
                    a_start -= 1
                    b_start -= 1
                else:
                    emit = True
                if a_start == 0 or b_start == 0:
                    emit = True
                idx -= 1
                i -= 1
                k -= 1
            else:
                if dp[(i - 1) * w + k] > dp[i * w + k - 1]:
                    i -= 1
                else:
                    k -= 1
                if a_start != alen:
                    emit = True
            if emit:
                match_len = a_end - a_start + 1
                if want_idx and (min_len == 0 or match_len >= min_len):
                    match = [[a_start, a_end], [b_start, b_end]]
                    if with_len:
                        match.append(match_len)
                    matches.append(match)
                a_start = alen
    finally:
        free(dp)
    if want_idx:
        if resp3:
            return {b"matches": matches, b"len": len(common)}
        return [b"matches", matches, b"len", len(common)]
    return bytes(common)
