# RESP writing primitives, the one home for them: the server's reply buffer, the
# command layer's pre-encoded replies (EncodedReply), the AOF's command log and the
# RESP base of a rewrite all append to a WBuf with these inline functions.
#
# Each put_* reserves the room it needs itself, so callers only pick the shape.
# A header whose count is known only after its elements were written (an array of
# entries filtered on the way) is opened with wb_mark() and closed with
# put_hdr_at(), which moves the elements up to make room for it.

from libc.stdlib cimport realloc
from libc.string cimport memcpy, memmove


cdef struct WBuf:
    char* data
    Py_ssize_t len
    Py_ssize_t cap


cdef inline int wb_grow(WBuf* b, Py_ssize_t need) except -1:
    cdef Py_ssize_t newcap = b.cap * 2 if b.cap else 256
    cdef char* p
    while newcap < b.len + need:
        newcap *= 2
    p = <char*>realloc(b.data, newcap)
    if p == NULL:
        raise MemoryError()
    b.data = p
    b.cap = newcap
    return 0


cdef inline int wb_reserve(WBuf* b, Py_ssize_t need) except -1:
    if b.len + need > b.cap:
        return wb_grow(b, need)
    return 0


cdef inline int ll_text(char* tmp, long long v) noexcept:
    """Writes v in decimal at the END of tmp[24]; returns where it starts."""
    cdef int i = 24
    cdef unsigned long long u
    if v < 0:
        u = <unsigned long long>(-(v + 1)) + 1
    else:
        u = <unsigned long long>v
    while True:
        i -= 1
        tmp[i] = <char>(c'0' + <int>(u % 10))
        u //= 10
        if u == 0:
            break
    if v < 0:
        i -= 1
        tmp[i] = c'-'
    return i


cdef inline void put_ll(WBuf* b, long long v) noexcept:
    """Decimal v, written in place (no copy through a temporary: a variable-length
    memcpy is a call); the caller reserved 21 bytes."""
    cdef char* p = b.data + b.len
    cdef unsigned long long u, t
    cdef int n = 1
    if v < 0:
        p[0] = c'-'
        p += 1
        u = <unsigned long long>(-(v + 1)) + 1
    else:
        u = <unsigned long long>v
    t = u
    while t >= 10:
        t //= 10
        n += 1
    p += n
    b.len = p - b.data
    while True:
        p -= 1
        p[0] = <char>(c'0' + <int>(u % 10))
        u //= 10
        if u == 0:
            break


cdef inline int put_hdr(WBuf* b, char t, long long n) except -1:
    """<t><n>\\r\\n: an array (*), map (%), integer (:) ... header."""
    cdef char* d
    wb_reserve(b, 24)
    b.data[b.len] = t
    b.len += 1
    put_ll(b, n)
    d = b.data + b.len
    d[0] = c'\r'
    d[1] = c'\n'
    b.len += 2
    return 0


cdef inline Py_ssize_t wb_mark(WBuf* b) noexcept:
    return b.len


cdef inline int wb_insert(WBuf* b, Py_ssize_t at, const char* s, Py_ssize_t n) except -1:
    """Inserts s[:n] at offset `at` (from wb_mark), before what was written since."""
    wb_reserve(b, n)
    memmove(b.data + at + n, b.data + at, b.len - at)
    memcpy(b.data + at, s, n)
    b.len += n
    return 0


cdef inline int put_hdr_at(WBuf* b, Py_ssize_t at, char t, long long n) except -1:
    """Inserts the header <t><n>\\r\\n at offset `at` (from wb_mark)."""
    cdef char tmp[27]
    cdef int i = ll_text(tmp, n)
    tmp[i - 1] = t
    tmp[24] = c'\r'
    tmp[25] = c'\n'
    return wb_insert(b, at, tmp + i - 1, 24 - i + 3)


cdef inline int put_lit(WBuf* b, const char* s, Py_ssize_t n) except -1:
    wb_reserve(b, n)
    memcpy(b.data + b.len, s, n)
    b.len += n
    return 0


cdef inline int put_bulk(WBuf* b, const char* s, Py_ssize_t n) except -1:
    cdef char* d
    wb_reserve(b, n + 26)
    b.data[b.len] = c'$'
    b.len += 1
    put_ll(b, n)
    d = b.data + b.len
    d[0] = c'\r'
    d[1] = c'\n'
    memcpy(d + 2, s, n)
    d[n + 2] = c'\r'
    d[n + 3] = c'\n'
    b.len += n + 4
    return 0


cdef inline int put_simple(WBuf* b, char t, const char* s, Py_ssize_t n) except -1:
    cdef char* d
    wb_reserve(b, n + 3)
    d = b.data + b.len
    d[0] = t
    memcpy(d + 1, s, n)
    d[n + 1] = c'\r'
    d[n + 2] = c'\n'
    b.len += n + 3
    return 0


cdef class RespBuffer:
    """A WBuf owned by a Python object (freed with it)."""
    cdef WBuf b


cdef class EncodedReply(RespBuffer):
    """A reply already in RESP (for the protocol of the context that made it): the
    server's encoder copies it out as is. Commands return one instead of Python
    values when the context asks for it (CommandContext.encode_replies)."""
    pass
