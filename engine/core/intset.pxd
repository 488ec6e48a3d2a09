# A sorted array of distinct integers in the narrowest width that holds them all (2, 4
# or 8 bytes each), widened when a value needs it and never narrowed (as Redis's
# intset). One counted allocation; functions that change it take its address.

from libc.stdint cimport uint32_t, int64_t

cdef struct IntSet:
    uint32_t width                   # bytes per element: 2, 4 or 8
    uint32_t length                  # elements; the array follows the header

cdef IntSet* is_new() except NULL
cdef void is_free(IntSet* s) noexcept
cdef uint32_t is_len(const IntSet* s) noexcept
cdef size_t is_bytes(const IntSet* s) noexcept
cdef int64_t is_get(const IntSet* s, uint32_t index) noexcept
cdef bint is_find(const IntSet* s, int64_t value) noexcept
cdef int is_add(IntSet** sp, int64_t value) except -1
cdef bint is_remove(IntSet** sp, int64_t value) except -1
cdef IntSet* is_copy(const IntSet* s) except NULL
