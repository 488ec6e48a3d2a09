# Counted allocation: every C allocation of stored data goes through these, so each
# engine can report the bytes it holds (INFO's used_memory) exactly.

cdef class MemoryAccount:
    # size_t arithmetic modulo 2**64: a free counted to another account than its
    # allocation (a value dropped outside its engine's call) wraps and comes back.
    cdef public size_t bytes
    cdef public size_t limit     # maxmemory: the bytes of used_memory writes may reach (0: none)
    cpdef MemoryAccount enter(self)
    cpdef void leave(self, MemoryAccount previous)

cdef void* mem_alloc(size_t size) except NULL
cdef void* mem_realloc(void* ptr, size_t size) except NULL
cdef void mem_free(void* ptr) noexcept
cdef size_t mem_used() noexcept
