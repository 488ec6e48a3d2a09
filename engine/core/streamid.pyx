"""Parsing and formatting of stream IDs (the inline arithmetic lives in streamid.pxd)."""
from libc.stdint cimport uint64_t
from libc.string cimport memchr

cdef bytes id_format(const StreamID* sid):
    cdef char buf[48]
    return buf[:id_write(buf, sid)]


cdef inline bint _isspace(unsigned char c) noexcept:
    return c == 32 or 9 <= c <= 13


cdef bint _parse_u64(const unsigned char* s, Py_ssize_t n, uint64_t* out) noexcept:
    """Redis's string2ull: a strict decimal, or else whatever strtoull accepts whole
    (leading spaces, a sign, leading zeros; "-n" wraps modulo 2**64), no overflow.
    A strictly parsed negative number is rejected."""
    cdef uint64_t v = 0
    cdef Py_ssize_t i = 0
    cdef unsigned int d
    cdef bint negative = 0
    # string2ll's form of a negative number ("-" then 1-9...): if it fits an int64,
    # Redis reads it as negative and rejects it instead of wrapping.
    cdef bint strict_negative = n > 1 and s[0] == 45 and 49 <= s[1] <= 57
    if n == 0:
        return 0
    while i < n and _isspace(s[i]):
        i += 1
    if i < n and (s[i] == 43 or s[i] == 45):  # '+' / '-'
        negative = s[i] == 45
        i += 1
    if i == n:
        return 0
    if n - i <= 19:                 # cannot overflow
        while i < n:
            d = s[i] - 48
            if d > 9:
                return 0
            v = v * 10 + d
            i += 1
    while i < n:
        d = s[i] - 48
        if d > 9:
            return 0
        if v > (<uint64_t>0xffffffffffffffff - d) // 10:
            return 0
        v = v * 10 + d
        i += 1
    if strict_negative and v <= <uint64_t>0x8000000000000000:
        return 0
    out[0] = (~v + 1) if negative else v
    return 1


cdef bint id_parse(object arg, StreamID* out, uint64_t missing_seq, bint* seq_star) except -1:
    cdef bytes b = arg if type(arg) is bytes else bytes(arg)
    cdef const unsigned char* s = b
    cdef Py_ssize_t n = len(b), i, dash = -1
    if n > 127 or memchr(s, 0, n) != NULL:
        return 0
    for i in range(n):
        if s[i] == 45:  # '-'
            dash = i
            break
    if dash < 0:
        if not _parse_u64(s, n, &out.ms):
            return 0
        out.seq = missing_seq
        return 1
    if not _parse_u64(s, dash, &out.ms):
        return 0
    if seq_star != NULL and n - dash - 1 == 1 and s[dash + 1] == 42:  # '*'
        seq_star[0] = 1
        out.seq = 0
        return 1
    return _parse_u64(s + dash + 1, n - dash - 1, &out.seq)
