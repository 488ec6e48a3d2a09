"""Glob matching exactly as Redis's stringmatchlen (util.c, 7.0).

  *        any run of bytes (also empty)
  ?        any single byte
  [abc]    one of the listed bytes; [^abc] none of them
  [a-z]    a range (reversed ranges like [z-a] work the same); a '\\' inside
           brackets escapes the next byte; an unterminated '[' matches like a
           class ending at the end of the pattern
  \\x       the byte x literally

Quirks kept on purpose for byte-exact compatibility: bytes are compared as C
`char` (signed), which matters for ranges with bytes >= 0x80; `nocase` folds only
ASCII letters (C locale tolower), and never applies to escaped bytes inside
brackets. Matching runs in C without allocations; the skip-longer-matches cut
keeps patterns like "*a*a*a*...b" linear-ish, and, as in Redis, a match that would
nest more than MAX_NESTING stars deep fails (the C stack stays bounded).
"""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE


cdef inline int _lower(int c) noexcept:
    if c >= 65 and c <= 90:
        return c + 32
    return c


cdef inline int _at(const char* p, Py_ssize_t n) noexcept:
    # p[0] as a signed char, or 0 when nothing is left (the C code reads the NUL
    # terminator there).
    if n <= 0:
        return 0
    return <signed char>p[0]


DEF MAX_NESTING = 1000


cdef bint _match(const char* pattern, Py_ssize_t plen, const char* string,
                 Py_ssize_t slen, bint nocase, bint* skip_longer, int nesting) noexcept:
    cdef bint negate, matched
    cdef int start, end, c, t
    if nesting > MAX_NESTING:
        return 0
    while plen > 0 and slen > 0:
        c = <signed char>pattern[0]
        if c == 42:  # '*'
            while plen > 1 and pattern[1] == 42:
                pattern += 1
                plen -= 1
            if plen == 1:
                return 1
            while slen > 0:
                if _match(pattern + 1, plen - 1, string, slen, nocase, skip_longer,
                          nesting + 1):
                    return 1
                if skip_longer[0]:
                    return 0
                string += 1
                slen -= 1
            skip_longer[0] = 1
            return 0
        elif c == 63:  # '?'
            string += 1
            slen -= 1
        elif c == 91:  # '['
            pattern += 1
            plen -= 1
            negate = _at(pattern, plen) == 94  # '^'
            if negate:
                pattern += 1
                plen -= 1
            matched = 0
            while True:
                c = _at(pattern, plen)
                if c == 92 and plen >= 2:  # '\\'
                    pattern += 1
                    plen -= 1
                    if pattern[0] == string[0]:
                        matched = 1
                elif c == 93:  # ']'
                    break
                elif plen <= 0:
                    pattern -= 1
                    plen += 1
                    break
                elif plen >= 3 and pattern[1] == 45:
                    start = <signed char>pattern[0]
                    end = <signed char>pattern[2]
                    c = <signed char>string[0]
                    if start > end:
                        t = start
                        start = end
                        end = t
                    if nocase:
                        start = _lower(start)
                        end = _lower(end)
                        c = _lower(c)
                    pattern += 2
                    plen -= 2
                    if c >= start and c <= end:
                        matched = 1
                else:
                    if not nocase:
                        if pattern[0] == string[0]:
                            matched = 1
                    elif _lower(<signed char>pattern[0]) == _lower(<signed char>string[0]):
                        matched = 1
                pattern += 1
                plen -= 1
            if negate:
                matched = not matched
            if not matched:
                return 0
            string += 1
            slen -= 1
        else:
            if c == 92 and plen >= 2:  # '\\' escapes the next byte
                pattern += 1
                plen -= 1
            if not nocase:
                if pattern[0] != string[0]:
                    return 0
            elif _lower(<signed char>pattern[0]) != _lower(<signed char>string[0]):
                return 0
            string += 1
            slen -= 1
        pattern += 1
        plen -= 1
        if slen == 0:
            while plen > 0 and pattern[0] == 42:
                pattern += 1
                plen -= 1
            break
    return plen == 0 and slen == 0


cdef bint stringmatchlen(const char* pattern, Py_ssize_t plen, const char* string,
                         Py_ssize_t slen, bint nocase) noexcept:
    cdef bint skip_longer = 0
    return _match(pattern, plen, string, slen, nocase, &skip_longer, 0)


cpdef bint match(bytes pattern, bytes string, bint nocase=False):
    """True if `string` matches the glob `pattern` (Redis semantics)."""
    return stringmatchlen(PyBytes_AS_STRING(pattern), PyBytes_GET_SIZE(pattern),
                          PyBytes_AS_STRING(string), PyBytes_GET_SIZE(string), nocase)
