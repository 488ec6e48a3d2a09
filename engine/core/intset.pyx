"""The packed integer set (see intset.pxd): binary search over a sorted array whose
element width grows (16 -> 32 -> 64 bits) when a value outside it is added."""
from libc.stdint cimport int16_t, int32_t, int64_t, uint32_t
from libc.string cimport memcpy, memmove

from engine.core.memory cimport mem_alloc, mem_realloc, mem_free


cdef inline size_t _data_size(const IntSet* s) noexcept:
    return <size_t>s.width * s.length


cdef inline int64_t _at(const IntSet* s, uint32_t i, uint32_t width) noexcept:
    cdef const char* a = <const char*>(s + 1)
    if width == 2:
        return (<const int16_t*>a)[i]
    if width == 4:
        return (<const int32_t*>a)[i]
    return (<const int64_t*>a)[i]


cdef inline void _put(IntSet* s, uint32_t i, int64_t v, uint32_t width) noexcept:
    cdef char* a = <char*>(s + 1)
    if width == 2:
        (<int16_t*>a)[i] = <int16_t>v
    elif width == 4:
        (<int32_t*>a)[i] = <int32_t>v
    else:
        (<int64_t*>a)[i] = v


cdef inline uint32_t _width_of(int64_t v) noexcept:
    if -32768 <= v <= 32767:
        return 2
    if -2147483648 <= v <= 2147483647:
        return 4
    return 8


cdef IntSet* is_new() except NULL:
    cdef IntSet* s = <IntSet*>mem_alloc(sizeof(IntSet))
    s.width = 2
    s.length = 0
    return s


cdef void is_free(IntSet* s) noexcept:
    mem_free(s)


cdef uint32_t is_len(const IntSet* s) noexcept:
    return s.length


cdef size_t is_bytes(const IntSet* s) noexcept:
    return sizeof(IntSet) + _data_size(s)


cdef int64_t is_get(const IntSet* s, uint32_t index) noexcept:
    return _at(s, index, s.width)


cdef inline bint _search(const IntSet* s, int64_t v, uint32_t* pos) noexcept:
    """Whether v is present; pos gets its index, or where it would go."""
    cdef long lo = 0, hi = <long>s.length - 1, mid
    cdef int64_t cur
    while lo <= hi:
        mid = (lo + hi) >> 1
        cur = _at(s, <uint32_t>mid, s.width)
        if cur < v:
            lo = mid + 1
        elif cur > v:
            hi = mid - 1
        else:
            pos[0] = <uint32_t>mid
            return True
    pos[0] = <uint32_t>lo
    return False


cdef bint is_find(const IntSet* s, int64_t value) noexcept:
    cdef uint32_t pos
    if _width_of(value) > s.width:
        return False
    return _search(s, value, &pos)


cdef int _widen(IntSet** sp, int64_t value) except -1:
    """Widens to value's width and adds it: outside the old range, it goes first
    (negative) or last (positive)."""
    cdef IntSet* s = sp[0]
    cdef uint32_t old = s.width, new = _width_of(value), n = s.length, i
    s = <IntSet*>mem_realloc(s, sizeof(IntSet) + <size_t>new * (n + 1))
    i = n
    while i > 0:
        i -= 1
        _put(s, i + (1 if value < 0 else 0), _at(s, i, old), new)
    s.width = new
    _put(s, 0 if value < 0 else n, value, new)
    s.length = n + 1
    sp[0] = s
    return 0


cdef inline void _move_tail(IntSet* s, uint32_t src, uint32_t dst) noexcept:
    """Moves the elements from index src to the end so that they start at dst."""
    cdef char* a = <char*>(s + 1)
    memmove(a + <size_t>dst * s.width, a + <size_t>src * s.width,
            <size_t>(s.length - src) * s.width)


cdef int is_add(IntSet** sp, int64_t value) except -1:
    """Adds value; 1 when it is new, 0 when it was there."""
    cdef IntSet* s = sp[0]
    cdef uint32_t pos
    if s.length >= 0xFFFFFFFE:
        raise MemoryError("intset too large")
    if _width_of(value) > s.width:
        _widen(sp, value)
        return 1
    if _search(s, value, &pos):
        return 0
    s = <IntSet*>mem_realloc(s, sizeof(IntSet) + <size_t>s.width * (s.length + 1))
    _move_tail(s, pos, pos + 1)
    _put(s, pos, value, s.width)
    s.length += 1
    sp[0] = s
    return 1


cdef bint is_remove(IntSet** sp, int64_t value) except -1:
    cdef IntSet* s = sp[0]
    cdef uint32_t pos
    if _width_of(value) > s.width or not _search(s, value, &pos):
        return False
    _move_tail(s, pos + 1, pos)
    s.length -= 1
    sp[0] = <IntSet*>mem_realloc(s, is_bytes(s))
    return True


cdef IntSet* is_copy(const IntSet* s) except NULL:
    cdef IntSet* out = <IntSet*>mem_alloc(is_bytes(s))
    memcpy(out, s, is_bytes(s))
    return out
