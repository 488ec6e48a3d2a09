# Counted allocation: every C allocation of stored data goes through these, so the
# engine can report the bytes it holds (INFO's used_memory) exactly.

cdef void* mem_alloc(size_t size) except NULL
cdef void* mem_realloc(void* ptr, size_t size) except NULL
cdef void mem_free(void* ptr) noexcept
cdef size_t mem_used() noexcept
