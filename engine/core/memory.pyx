"""Counted C allocation: an engine's `used_memory` is the sum of what these hold for it.

Counting uses the allocator's real block sizes (malloc_usable_size), so the figure
includes rounding and matches what the process pays for stored data. Each engine owns
a `MemoryAccount`; the engine makes its account the current one while it runs a
command or loads (MemoryAccount.enter/leave), so two engines in one process never
share a figure. Allocations outside any engine go to the process's default account.
"""
from libc.stdint cimport int64_t
from libc.stdlib cimport malloc, realloc, free

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

cdef MemoryAccount _default = MemoryAccount()
cdef MemoryAccount _current = _default


cdef class MemoryAccount:
    """The bytes of counted C allocations made while this account was current."""

    cpdef MemoryAccount enter(self):
        """Makes this account current; returns the one it replaces (give it to leave)."""
        global _current
        cdef MemoryAccount previous = _current
        _current = self
        return previous

    cpdef void leave(self, MemoryAccount previous):
        global _current
        _current = previous if previous is not None else _default

    @property
    def used(self) -> int:
        """Signed: an account that freed what another allocated reads negative."""
        return <int64_t>self.bytes


cdef void* mem_alloc(size_t size) except NULL:
    cdef void* p = malloc(size if size else 1)
    if p == NULL:
        raise MemoryError()
    _current.bytes += malloc_usable_size(p)
    return p


cdef void* mem_realloc(void* ptr, size_t size) except NULL:
    cdef size_t old = malloc_usable_size(ptr) if ptr != NULL else 0
    cdef void* p = realloc(ptr, size if size else 1)
    if p == NULL:
        raise MemoryError()
    _current.bytes += malloc_usable_size(p) - old
    return p


cdef void mem_free(void* ptr) noexcept:
    if ptr != NULL:
        _current.bytes -= malloc_usable_size(ptr)
        free(ptr)


cdef size_t mem_used() noexcept:
    return _current.bytes


def used_bytes() -> int:
    """Bytes currently counted to the current account (streams, indexes, strings);
    signed, so differences of two readings are exact."""
    return <int64_t>_current.bytes
