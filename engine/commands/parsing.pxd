# Argument parsing shared by every command family, with Redis's exact rules and
# error replies. Messages passed as `const char*` are the complete error text
# (e.g. b"ERR timeout is not an integer or out of range"); NULL means
# "ERR value is not an integer or out of range".
from libc.stdint cimport int64_t, uint64_t

# string2ll (engine/resp/numbers.pxd) on a bytes argument, or ResponseError(message).
cdef int64_t parse_int(object arg, const char* message) except? -1
# parse_int, then lo <= value <= hi, else ResponseError(message) (both cases).
cdef int64_t parse_int_range(object arg, int64_t lo, int64_t hi,
                             const char* message) except? -1
# Redis's string2ld (strtold on the whole argument; no leading space, no NaN,
# no overflow), or ResponseError(message) (NULL: "ERR value is not a valid float").
cdef long double parse_long_double(object arg, const char* message) except? -1
# Redis's string2d (strtod on the whole argument; not empty, no leading space, no
# NaN, no overflow): a double such as a sorted-set score, or ResponseError(message)
# (NULL: "ERR value is not a valid float").
cdef double parse_double(object arg, const char* message) except? -1
# Blocking timeouts (getTimeoutFromObjectOrReply): `seconds` = a float number of
# seconds (BLPOP style), else integer milliseconds (XREAD BLOCK). Returns the
# absolute deadline in ms (now + timeout), 0 for "forever"; errors "ERR timeout is
# not a float/an integer or out of range", "ERR timeout is negative",
# "ERR timeout is out of range".
cdef int64_t parse_timeout(object arg, int64_t now, bint seconds) except? -1
# SCAN-family cursor (strtoul rules: "" is 0, a leading '-' wraps), or
# "ERR invalid cursor".
cdef uint64_t parse_cursor(object arg) except? 0xffffffffffffffff
# Case-insensitive option match: arg equals `lower` (an all-lowercase ASCII name)
# ignoring ASCII case.
cdef bint is_option(object arg, const char* lower) noexcept
# What a SCAN-family command takes beside COUNT and MATCH: nothing (SSCAN, ZSCAN),
# TYPE type (SCAN) or NOVALUES (HSCAN).
cdef enum ScanExtra:
    SCAN_PLAIN, SCAN_TYPE, SCAN_NOVALUES
# SCAN/HSCAN/SSCAN/ZSCAN's options from argv[i] on, with Redis's syntax errors:
# (COUNT, 10 without it; MATCH's pattern, None for none or "*"; TYPE's type in
# lowercase or True for NOVALUES, None without it).
cdef tuple scan_options(list argv, Py_ssize_t i, ScanExtra extra)
