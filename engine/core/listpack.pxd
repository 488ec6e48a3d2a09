# A packed buffer of entries (listpack-like): one contiguous counted allocation holding
# a header (total bytes, entry count), the entries and an end byte. Each entry is an
# integer in 1-9 bytes or a byte string with its length, followed by a back-length so
# the buffer walks both ways. A byte string that is the canonical text of a 64-bit
# integer is stored as that integer and reads back as the same text.
#
# Contract:
# - A listpack is an `unsigned char*` from lp_new; functions that change it take its
#   address and may move it (realloc). Entries are addressed by byte offset; 0 means
#   "no entry" (offset 0 is the header). Offsets stay valid until the next change.
# - lp_insert(lpp, off, ...) inserts before the entry at `off`; off = lp_end(lp)
#   appends. Every allocation goes through engine.core.memory.
# - Sets store members; hashes and small sorted sets store pairs as two entries
#   (lp_find's `skip` steps over the values).

from libc.stdint cimport uint32_t, int64_t

cdef enum:
    LP_HEADER = 8                    # uint32 total bytes, uint32 count
    LP_MAX_BYTES = 0x7fffffff        # a listpack never grows past this

cdef struct LpEntry:
    const unsigned char* s           # the string's bytes; NULL for an integer entry
    uint32_t slen
    int64_t ival
    unsigned char buf[21]            # scratch for lp_string's decimal text

cdef bint parse_int64(const unsigned char* s, size_t n, int64_t* out) noexcept
cdef unsigned char* lp_new() except NULL
cdef void lp_free(unsigned char* lp) noexcept
cdef unsigned char* lp_copy(const unsigned char* lp) except NULL
cdef uint32_t lp_count(const unsigned char* lp) noexcept
cdef uint32_t lp_bytes(const unsigned char* lp) noexcept
cdef size_t lp_end(const unsigned char* lp) noexcept
cdef size_t lp_first(const unsigned char* lp) noexcept
cdef size_t lp_last(const unsigned char* lp) noexcept
cdef size_t lp_next(const unsigned char* lp, size_t off) noexcept
cdef size_t lp_prev(const unsigned char* lp, size_t off) noexcept
cdef size_t lp_seek(const unsigned char* lp, long index) noexcept
cdef void lp_get(const unsigned char* lp, size_t off, LpEntry* e) noexcept
cdef const unsigned char* lp_string(LpEntry* e, uint32_t* n) noexcept
cdef object lp_get_bytes(const unsigned char* lp, size_t off)
# The text bytes of entries 0, stride, 2 * stride... (a collection's `nbytes`).
cdef int64_t lp_text_bytes(const unsigned char* lp, uint32_t stride) noexcept
cdef bint lp_equals(const unsigned char* lp, size_t off, const unsigned char* s, size_t n) noexcept
cdef size_t lp_find(const unsigned char* lp, size_t off, const unsigned char* s, size_t n,
                    uint32_t skip) noexcept
cdef int lp_insert(unsigned char** lpp, size_t off, const unsigned char* s, size_t n) except -1
cdef int lp_append(unsigned char** lpp, const unsigned char* s, size_t n) except -1
cdef int lp_replace(unsigned char** lpp, size_t off, const unsigned char* s, size_t n) except -1
cdef int lp_delete(unsigned char** lpp, size_t off, uint32_t count) except -1
