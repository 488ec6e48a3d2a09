"""Redis's strict integer syntax (see numbers.pxd), for C callers and for Python."""
from typing import Optional

from libc.stdint cimport int64_t, uint64_t, INT64_MAX
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

cdef enum:
    LONG_STR_SIZE = 21                  # Redis's limit on an integer's text


cdef bint string2ll(const char* s, Py_ssize_t slen, int64_t* out) noexcept:
    cdef Py_ssize_t i = 0
    cdef bint negative = 0
    cdef uint64_t v
    cdef unsigned char d
    if slen == 0 or slen >= LONG_STR_SIZE:
        return 0
    if slen == 1 and s[0] == 48:
        out[0] = 0
        return 1
    if s[0] == 45:
        negative = 1
        i = 1
        if i == slen:
            return 0
    d = <unsigned char>s[i]
    if d >= 49 and d <= 57:
        v = d - 48
        i += 1
    else:
        return 0
    while i < slen:
        d = <unsigned char>s[i]
        if d < 48 or d > 57:
            return 0
        if v > 0xffffffffffffffff // 10:
            return 0
        v *= 10
        if v > 0xffffffffffffffff - (d - 48):
            return 0
        v += d - 48
        i += 1
    if negative:
        if v > (<uint64_t>INT64_MAX) + 1:
            return 0
        out[0] = <int64_t>(0 - v)
    else:
        if v > <uint64_t>INT64_MAX:
            return 0
        out[0] = <int64_t>v
    return 1


def strict_int(bytes text) -> Optional[int]:
    """`text` as an int64 if it is one in Redis's strict syntax (string2ll), else None:
    the rule for integers in config files and CONFIG SET as well as in commands."""
    cdef int64_t value
    if string2ll(PyBytes_AS_STRING(text), PyBytes_GET_SIZE(text), &value):
        return value
    return None
