"""Argument parsing shared by the command families (see parsing.pxd)."""
from libc.stdint cimport int64_t, uint64_t, INT64_MAX, INT64_MIN
from libc.string cimport strlen
from libc.stdlib cimport strtod, strtold, strtoull
from libc.math cimport HUGE_VAL, isnan
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

from engine.resp.numbers cimport string2ll
from engine.core.errors import ResponseError, NOT_INTEGER, SYNTAX

cdef extern from "<ctype.h>":
    int isspace(int c) nogil

cdef extern from *:
    """
    #include <errno.h>
    static inline void sluice_clear_errno(void) { errno = 0; }
    static inline int sluice_erange(void) { return errno == ERANGE; }
    """
    void clear_errno "sluice_clear_errno"() noexcept nogil
    bint erange "sluice_erange"() noexcept nogil

cdef enum:
    MAX_LONG_DOUBLE_CHARS = 5 * 1024    # Redis's limit on a float argument's text


cdef inline object _error(const char* message, str default):
    if message == NULL:
        return ResponseError(default)
    return ResponseError((<bytes>message).decode("utf-8", "replace"))


cdef int64_t parse_int(object arg, const char* message) except? -1:
    cdef bytes b = <bytes>arg
    cdef int64_t value
    if not string2ll(PyBytes_AS_STRING(b), PyBytes_GET_SIZE(b), &value):
        raise _error(message, NOT_INTEGER)
    return value


cdef int64_t parse_int_range(object arg, int64_t lo, int64_t hi,
                             const char* message) except? -1:
    cdef int64_t value = parse_int(arg, message)
    if value < lo or value > hi:
        raise _error(message, NOT_INTEGER)
    return value


cdef long double parse_long_double(object arg, const char* message) except? -1:
    cdef bytes b = <bytes>arg
    cdef Py_ssize_t n = PyBytes_GET_SIZE(b)
    cdef const char* s = PyBytes_AS_STRING(b)
    cdef char* end
    cdef long double value
    # Like Redis, the whole argument must be the number: an embedded NUL (where
    # strtold stops) makes it invalid.
    if n == 0 or n >= MAX_LONG_DOUBLE_CHARS:
        raise _error(message, "ERR value is not a valid float")
    clear_errno()
    value = strtold(s, &end)
    if (isspace(<unsigned char>s[0]) or end != s + n
            or (erange() and (value == HUGE_VAL or value == -HUGE_VAL
                                     or value == 0))
            or isnan(<double>value)):
        raise _error(message, "ERR value is not a valid float")
    return value


cdef double parse_double(object arg, const char* message) except? -1:
    cdef bytes b = <bytes>arg
    cdef Py_ssize_t n = PyBytes_GET_SIZE(b)
    cdef const char* s = PyBytes_AS_STRING(b)
    cdef char* end
    cdef double value
    clear_errno()
    value = strtod(s, &end)
    if (n == 0 or isspace(<unsigned char>s[0]) or end - s != n
            or (erange() and (value == HUGE_VAL or value == -HUGE_VAL or value == 0))
            or isnan(value)):
        raise _error(message, "ERR value is not a valid float")
    return value


cdef int64_t parse_timeout(object arg, int64_t now, bint seconds) except? -1:
    cdef int64_t tval
    cdef long double ftval
    if seconds:
        ftval = parse_long_double(arg, b"ERR timeout is not a float or out of range")
        ftval = ftval * 1000.0
        # C's (long long) cast of an out-of-range long double is undefined; x86
        # yields INT64_MIN, which Redis then reports as negative.
        if ftval != ftval or ftval >= 9223372036854775808.0 or ftval < -9223372036854775808.0:
            tval = INT64_MIN
        else:
            tval = <int64_t>ftval
            if tval == 0 and ftval > 0:
                # under a millisecond (0.001 itself is 0.99999... ms here) waits one,
                # as Redis rounds up: 0 would mean forever
                tval = 1
    else:
        tval = parse_int(arg, b"ERR timeout is not an integer or out of range")
    if tval < 0:
        raise ResponseError("ERR timeout is negative")
    if tval > 0:
        if tval > INT64_MAX - now:
            raise ResponseError("ERR timeout is out of range")
        tval += now
    return tval


cdef uint64_t parse_cursor(object arg) except? 0xffffffffffffffff:
    cdef bytes b = <bytes>arg
    cdef const char* s = PyBytes_AS_STRING(b)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(b)
    cdef char* end
    cdef uint64_t value
    clear_errno()
    value = strtoull(s, &end, 10)
    if isspace(<unsigned char>s[0]) or end[0] != 0 or erange():
        raise ResponseError("ERR invalid cursor")
    return value


cdef bint is_option(object arg, const char* lower) noexcept:
    cdef bytes b = <bytes>arg
    cdef Py_ssize_t n = PyBytes_GET_SIZE(b), i
    cdef const char* s = PyBytes_AS_STRING(b)
    cdef unsigned char c
    if <size_t>n != strlen(lower):
        return 0
    for i in range(n):
        c = <unsigned char>s[i]
        if c >= 65 and c <= 90:
            c += 32
        if c != <unsigned char>lower[i]:
            return 0
    return 1


# Python entry points to the parsers above, for tests and the handlers written in
# Python (engine/api/persistence_commands.py).

def py_parse_int(bytes arg):
    return parse_int(arg, NULL)


def py_parse_timeout(bytes arg, int64_t now, bint seconds):
    return parse_timeout(arg, now, seconds)


def py_parse_cursor(bytes arg):
    return parse_cursor(arg)


def py_is_option(bytes arg, bytes lower):
    return is_option(arg, lower)


cdef tuple scan_options(list argv, Py_ssize_t i, ScanExtra extra):
    cdef Py_ssize_t argc = len(argv)
    cdef int64_t count = 10
    cdef object pattern = None, extra_value = None
    while i < argc:
        if is_option(argv[i], b"count") and argc - i >= 2:
            count = parse_int(argv[i + 1], NULL)
            if count < 1:
                raise ResponseError(SYNTAX)
            i += 2
        elif is_option(argv[i], b"match") and argc - i >= 2:
            pattern = argv[i + 1]
            if pattern == b"*":
                pattern = None
            i += 2
        elif extra == SCAN_TYPE and is_option(argv[i], b"type") and argc - i >= 2:
            extra_value = (<bytes>argv[i + 1]).lower()
            i += 2
        elif extra == SCAN_NOVALUES and is_option(argv[i], b"novalues"):
            extra_value = True
            i += 1
        else:
            raise ResponseError(SYNTAX)
    return count, pattern, extra_value
