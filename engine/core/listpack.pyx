"""The packed entry buffer (see listpack.pxd for the contract).

Entry layout: a tag byte, the entry's data, then its back-length (the size of tag and
data, 7 bits per byte, written so that the rightmost byte holds the low bits and a
high bit of 1 means one more byte to its left).

    0xxxxxxx                    integer 0..127 (no data)
    10llllll <l bytes>          string of 0..63 bytes
    110vvvvv vvvvvvvv           integer -4096..4095 (13 bits, two's complement)
    1110llll llllllll <bytes>   string of 64..4095 bytes
    0xF0 <uint32 length> <bytes> longer string
    0xF1/0xF2/0xF3/0xF4         integer in 2/3/4/8 little-endian bytes
    0xFF                        the end of the buffer
"""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.string cimport memcmp, memcpy, memmove

from engine.core.memory cimport mem_alloc, mem_realloc, mem_free

cdef enum:
    LP_EOF = 0xFF


cdef bint parse_int64(const unsigned char* s, size_t n, int64_t* out) noexcept:
    """Whether s is the canonical text of a 64-bit integer (no sign on 0, no '+', no
    leading zeros or spaces), and its value."""
    cdef size_t i = 0
    cdef bint neg = False
    cdef uint64_t v = 0, d
    if n == 0 or n > 20:
        return False
    if s[0] == c'-':
        neg = True
        i = 1
        if n == 1:
            return False
    if s[i] == c'0':
        if n == 1:
            out[0] = 0
            return True
        return False
    while i < n:
        if s[i] < c'0' or s[i] > c'9':
            return False
        d = s[i] - c'0'
        if v > (<uint64_t>0xFFFFFFFFFFFFFFFF - d) // 10:
            return False
        v = v * 10 + d
        i += 1
    if neg:
        if v > (<uint64_t>1 << 63):
            return False
        out[0] = <int64_t>(0 - v)
    else:
        if v > <uint64_t>0x7FFFFFFFFFFFFFFF:
            return False
        out[0] = <int64_t>v
    return True


cdef inline uint32_t _get_u32(const unsigned char* p) noexcept:
    return p[0] | (<uint32_t>p[1] << 8) | (<uint32_t>p[2] << 16) | (<uint32_t>p[3] << 24)


cdef inline void _set_u32(unsigned char* p, uint32_t v) noexcept:
    p[0] = v & 0xFF
    p[1] = (v >> 8) & 0xFF
    p[2] = (v >> 16) & 0xFF
    p[3] = (v >> 24) & 0xFF


cdef inline uint32_t _backlen_size(uint32_t l) noexcept:
    if l < 128:
        return 1
    if l < 16384:
        return 2
    if l < 2097152:
        return 3
    if l < 268435456:
        return 4
    return 5


cdef inline void _write_backlen(unsigned char* q, uint32_t l) noexcept:
    cdef uint32_t k = _backlen_size(l), i
    for i in range(k):
        q[k - 1 - i] = ((l >> (7 * i)) & 127) | (128 if i + 1 < k else 0)


cdef inline uint32_t _read_backlen(const unsigned char* p, uint32_t* size) noexcept:
    """The back-length ending at p (its rightmost byte); size gets its byte count."""
    cdef uint32_t v = 0, shift = 0, k = 0
    while True:
        v |= <uint32_t>(p[0] & 127) << shift
        k += 1
        if not (p[0] & 128):
            break
        shift += 7
        p -= 1
    size[0] = k
    return v


cdef inline uint32_t _element_size(const unsigned char* p) noexcept:
    """Bytes of tag and data of the entry starting at p."""
    cdef unsigned char t = p[0]
    if t < 0x80:
        return 1
    if t < 0xC0:
        return 1 + (t & 0x3F)
    if t < 0xE0:
        return 2
    if t < 0xF0:
        return 2 + (((t & 0x0F) << 8) | p[1])
    if t == 0xF0:
        return 5 + _get_u32(p + 1)
    if t == 0xF1:
        return 3
    if t == 0xF2:
        return 4
    if t == 0xF3:
        return 5
    return 9


cdef inline uint32_t _entry_size(const unsigned char* p) noexcept:
    cdef uint32_t l = _element_size(p)
    return l + _backlen_size(l)


cdef inline uint32_t _int_element_size(int64_t v) noexcept:
    if 0 <= v <= 127:
        return 1
    if -4096 <= v <= 4095:
        return 2
    if -32768 <= v <= 32767:
        return 3
    if -8388608 <= v <= 8388607:
        return 4
    if -2147483648 <= v <= 2147483647:
        return 5
    return 9


cdef inline void _write_int(unsigned char* q, int64_t v, uint32_t l) noexcept:
    cdef uint64_t u = <uint64_t>v
    cdef uint32_t i
    if l == 1:
        q[0] = <unsigned char>v
    elif l == 2:
        u &= 0x1FFF
        q[0] = 0xC0 | <unsigned char>(u >> 8)
        q[1] = u & 0xFF
    else:
        q[0] = 0xF1 if l == 3 else 0xF2 if l == 4 else 0xF3 if l == 5 else 0xF4
        for i in range(l - 1):
            q[1 + i] = (u >> (8 * i)) & 0xFF


cdef inline uint32_t _str_element_size(size_t n) noexcept:
    if n < 64:
        return 1 + <uint32_t>n
    if n < 4096:
        return 2 + <uint32_t>n
    return 5 + <uint32_t>n


cdef inline void _write_str(unsigned char* q, const unsigned char* s, uint32_t n) noexcept:
    if n < 64:
        q[0] = 0x80 | n
        q += 1
    elif n < 4096:
        q[0] = 0xE0 | (n >> 8)
        q[1] = n & 0xFF
        q += 2
    else:
        q[0] = 0xF0
        _set_u32(q + 1, n)
        q += 5
    memcpy(q, s, n)


cdef unsigned char* lp_new() except NULL:
    cdef unsigned char* lp = <unsigned char*>mem_alloc(LP_HEADER + 1)
    _set_u32(lp, LP_HEADER + 1)
    _set_u32(lp + 4, 0)
    lp[LP_HEADER] = LP_EOF
    return lp


cdef void lp_free(unsigned char* lp) noexcept:
    mem_free(lp)


cdef unsigned char* lp_copy(const unsigned char* lp) except NULL:
    cdef unsigned char* out = <unsigned char*>mem_alloc(lp_bytes(lp))
    memcpy(out, lp, lp_bytes(lp))
    return out


cdef uint32_t lp_count(const unsigned char* lp) noexcept:
    return _get_u32(lp + 4)


cdef uint32_t lp_bytes(const unsigned char* lp) noexcept:
    return _get_u32(lp)


cdef size_t lp_end(const unsigned char* lp) noexcept:
    return _get_u32(lp) - 1


cdef size_t lp_first(const unsigned char* lp) noexcept:
    return LP_HEADER if lp[LP_HEADER] != LP_EOF else 0


cdef size_t lp_last(const unsigned char* lp) noexcept:
    return lp_prev(lp, lp_end(lp))


cdef size_t lp_next(const unsigned char* lp, size_t off) noexcept:
    off += _entry_size(lp + off)
    return 0 if lp[off] == LP_EOF else off


cdef size_t lp_prev(const unsigned char* lp, size_t off) noexcept:
    cdef uint32_t k, l
    if off <= LP_HEADER:
        return 0
    l = _read_backlen(lp + off - 1, &k)
    return off - k - l


cdef size_t lp_seek(const unsigned char* lp, long index) noexcept:
    """The entry at index (negative: from the end), walking from the nearer end."""
    cdef long count = lp_count(lp)
    cdef size_t off
    if index < 0:
        index += count
    if index < 0 or index >= count:
        return 0
    if index < count // 2:
        off = LP_HEADER
        while index > 0:
            off += _entry_size(lp + off)
            index -= 1
    else:
        off = lp_end(lp)
        index = count - index
        while index > 0:
            off = lp_prev(lp, off)
            index -= 1
    return off


cdef void lp_get(const unsigned char* lp, size_t off, LpEntry* e) noexcept:
    cdef const unsigned char* p = lp + off
    cdef unsigned char t = p[0]
    cdef uint64_t u = 0
    cdef uint32_t i, nb
    e.s = NULL
    e.slen = 0
    if t < 0x80:
        e.ival = t
    elif t < 0xC0:
        e.s = p + 1
        e.slen = t & 0x3F
    elif t < 0xE0:
        u = ((t & 0x1F) << 8) | p[1]
        e.ival = <int64_t>u - 8192 if u >= 4096 else <int64_t>u
    elif t < 0xF0:
        e.s = p + 2
        e.slen = ((t & 0x0F) << 8) | p[1]
    elif t == 0xF0:
        e.s = p + 5
        e.slen = _get_u32(p + 1)
    else:
        nb = 2 if t == 0xF1 else 3 if t == 0xF2 else 4 if t == 0xF3 else 8
        for i in range(nb):
            u |= <uint64_t>p[1 + i] << (8 * i)
        if nb < 8 and (u >> (8 * nb - 1)) & 1:
            u |= <uint64_t>0xFFFFFFFFFFFFFFFF << (8 * nb)
        e.ival = <int64_t>u


cdef const unsigned char* lp_string(LpEntry* e, uint32_t* n) noexcept:
    """The entry's bytes: a string's own, or an integer's decimal text in e.buf."""
    cdef uint64_t u
    cdef int i = 21
    if e.s != NULL:
        n[0] = e.slen
        return e.s
    u = <uint64_t>(0 - <uint64_t>e.ival) if e.ival < 0 else <uint64_t>e.ival
    while True:
        i -= 1
        e.buf[i] = c'0' + u % 10
        u //= 10
        if u == 0:
            break
    if e.ival < 0:
        i -= 1
        e.buf[i] = c'-'
    n[0] = 21 - i
    return e.buf + i


cdef int64_t lp_text_bytes(const unsigned char* lp, uint32_t stride) noexcept:
    cdef size_t off = lp_first(lp)
    cdef uint32_t i = 0, n
    cdef int64_t total = 0
    cdef LpEntry e
    while off:
        if i % stride == 0:
            lp_get(lp, off, &e)
            lp_string(&e, &n)
            total += n
        i += 1
        off = lp_next(lp, off)
    return total


cdef object lp_get_bytes(const unsigned char* lp, size_t off):
    cdef LpEntry e
    cdef uint32_t n
    cdef const unsigned char* s
    lp_get(lp, off, &e)
    s = lp_string(&e, &n)
    return PyBytes_FromStringAndSize(<const char*>s, n)


cdef inline bint _matches(const unsigned char* p, const unsigned char* s, size_t n,
                          bint is_int, int64_t v) noexcept:
    cdef LpEntry e
    lp_get(p, 0, &e)
    if e.s == NULL:
        return is_int and e.ival == v
    return not is_int and e.slen == n and memcmp(e.s, s, n) == 0


cdef bint lp_equals(const unsigned char* lp, size_t off, const unsigned char* s, size_t n) noexcept:
    cdef int64_t v = 0
    cdef bint is_int = parse_int64(s, n, &v)
    return _matches(lp + off, s, n, is_int, v)


cdef size_t lp_find(const unsigned char* lp, size_t off, const unsigned char* s, size_t n,
                    uint32_t skip) noexcept:
    """The first entry from off on (then every skip+1-th) equal to s; 0 if none."""
    cdef int64_t v = 0
    cdef bint is_int = parse_int64(s, n, &v)
    cdef uint32_t i
    if off == 0:
        return 0
    while lp[off] != LP_EOF:
        if _matches(lp + off, s, n, is_int, v):
            return off
        off += _entry_size(lp + off)
        i = 0
        while i < skip and lp[off] != LP_EOF:
            off += _entry_size(lp + off)
            i += 1
    return 0


cdef inline uint32_t _encoded_size(const unsigned char* s, size_t n, int64_t* v, bint* is_int):
    is_int[0] = parse_int64(s, n, v)
    return _int_element_size(v[0]) if is_int[0] else _str_element_size(n)


cdef inline void _write_entry(unsigned char* q, const unsigned char* s, size_t n,
                              bint is_int, int64_t v, uint32_t l) noexcept:
    if is_int:
        _write_int(q, v, l)
    else:
        _write_str(q, s, <uint32_t>n)
    _write_backlen(q + l, l)


cdef int _resize(unsigned char** lpp, size_t at, size_t old_len, size_t new_len) except -1:
    """Makes the bytes [at, at + old_len) of the buffer new_len long, moving the rest."""
    cdef unsigned char* lp = lpp[0]
    cdef size_t total = lp_bytes(lp)
    cdef size_t new_total = total - old_len + new_len
    if new_total > LP_MAX_BYTES:
        raise MemoryError("listpack too large")
    if new_len < old_len:
        memmove(lp + at + new_len, lp + at + old_len, total - at - old_len)
        lp = <unsigned char*>mem_realloc(lp, new_total)
    elif new_len > old_len:
        lp = <unsigned char*>mem_realloc(lp, new_total)
        memmove(lp + at + new_len, lp + at + old_len, total - at - old_len)
    _set_u32(lp, <uint32_t>new_total)
    lpp[0] = lp
    return 0


cdef int _put_entry(unsigned char** lpp, size_t off, size_t old_len, const unsigned char* s,
                    size_t n) except -1:
    """Writes s as the entry at off in place of old_len bytes (0: an insertion)."""
    cdef int64_t v = 0
    cdef bint is_int
    cdef uint32_t l
    if n > LP_MAX_BYTES:
        raise MemoryError("listpack entry too large")
    l = _encoded_size(s, n, &v, &is_int)
    _resize(lpp, off, old_len, l + _backlen_size(l))
    _write_entry(lpp[0] + off, s, n, is_int, v, l)
    return 0


cdef int lp_insert(unsigned char** lpp, size_t off, const unsigned char* s, size_t n) except -1:
    _put_entry(lpp, off, 0, s, n)
    _set_u32(lpp[0] + 4, lp_count(lpp[0]) + 1)
    return 0


cdef int lp_append(unsigned char** lpp, const unsigned char* s, size_t n) except -1:
    return lp_insert(lpp, lp_end(lpp[0]), s, n)


cdef int lp_replace(unsigned char** lpp, size_t off, const unsigned char* s, size_t n) except -1:
    return _put_entry(lpp, off, _entry_size(lpp[0] + off), s, n)


cdef int lp_delete(unsigned char** lpp, size_t off, uint32_t count) except -1:
    """Deletes up to count entries starting at off."""
    cdef unsigned char* lp = lpp[0]
    cdef size_t end = off
    cdef uint32_t done = 0
    while done < count and lp[end] != LP_EOF:
        end += _entry_size(lp + end)
        done += 1
    _resize(lpp, off, end - off, 0)
    _set_u32(lpp[0] + 4, lp_count(lpp[0]) - done)
    return 0
