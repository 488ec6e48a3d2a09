"""Counted C allocation: the engine's `used_memory` is the sum of what these hold.

Counting uses the allocator's real block sizes (malloc_usable_size), so the figure
includes rounding and matches what the process pays for stored data.
"""
from libc.stdlib cimport malloc, realloc, free

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

cdef size_t _used = 0


cdef void* mem_alloc(size_t size) except NULL:
    global _used
    cdef void* p = malloc(size if size else 1)
    if p == NULL:
        raise MemoryError()
    _used += malloc_usable_size(p)
    return p


cdef void* mem_realloc(void* ptr, size_t size) except NULL:
    global _used
    cdef size_t old = malloc_usable_size(ptr) if ptr != NULL else 0
    cdef void* p = realloc(ptr, size if size else 1)
    if p == NULL:
        raise MemoryError()
    _used += malloc_usable_size(p) - old
    return p


cdef void mem_free(void* ptr) noexcept:
    global _used
    if ptr != NULL:
        _used -= malloc_usable_size(ptr)
        free(ptr)


cdef size_t mem_used() noexcept:
    return _used


def used_bytes() -> int:
    """Bytes currently allocated for stored data (streams, indexes, strings)."""
    return _used
