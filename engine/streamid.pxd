# Stream entry IDs: <milliseconds>-<sequence>, two unsigned 64-bit integers.
# Encoded as 16 big-endian bytes for radix keys, so memcmp order is ID order.

from libc.stdint cimport uint8_t, uint64_t

ctypedef struct StreamID:
    uint64_t ms
    uint64_t seq

cdef inline Py_ssize_t u64_write(char* out, uint64_t v) noexcept nogil:
    """Decimal digits of v at out (at most 20); returns how many."""
    cdef char tmp[20]
    cdef Py_ssize_t n = 0, i
    while True:
        tmp[n] = <char>(48 + v % 10)
        n += 1
        v //= 10
        if v == 0:
            break
    for i in range(n):
        out[i] = tmp[n - 1 - i]
    return n

cdef inline Py_ssize_t id_write(char* out, const StreamID* sid) noexcept nogil:
    """<ms>-<seq> at out (at most 41 bytes); returns the length."""
    cdef Py_ssize_t n = u64_write(out, sid.ms)
    out[n] = 45  # '-'
    return n + 1 + u64_write(out + n + 1, sid.seq)

cdef inline int id_cmp(const StreamID* a, const StreamID* b) noexcept nogil:
    if a.ms != b.ms:
        return -1 if a.ms < b.ms else 1
    if a.seq != b.seq:
        return -1 if a.seq < b.seq else 1
    return 0

cdef inline bint id_is_zero(const StreamID* a) noexcept nogil:
    return a.ms == 0 and a.seq == 0

cdef extern from *:
    """
    #include <string.h>
    static inline void sluice_store_be64(unsigned char *out, unsigned long long v) {
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
    #endif
        memcpy(out, &v, 8);
    }
    static inline unsigned long long sluice_load_be64(const unsigned char *p) {
        unsigned long long v;
        memcpy(&v, p, 8);
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        v = __builtin_bswap64(v);
    #endif
        return v;
    }
    """
    void sluice_store_be64(uint8_t* out, uint64_t v) nogil
    uint64_t sluice_load_be64(const uint8_t* p) nogil

cdef inline void u64_to_be(uint64_t v, uint8_t* out) noexcept nogil:
    sluice_store_be64(out, v)

cdef inline uint64_t u64_from_be(const uint8_t* p) noexcept nogil:
    return sluice_load_be64(p)

cdef inline void id_encode(const StreamID* sid, uint8_t* out) noexcept nogil:
    u64_to_be(sid.ms, out)
    u64_to_be(sid.seq, out + 8)

cdef inline void id_decode(const uint8_t* p, StreamID* sid) noexcept nogil:
    sid.ms = u64_from_be(p)
    sid.seq = u64_from_be(p + 8)

# Successor / predecessor; return 0 (and leave *sid unchanged) on overflow/underflow.
cdef inline bint id_incr(StreamID* sid) noexcept nogil:
    if sid.seq == <uint64_t>0xffffffffffffffff:
        if sid.ms == <uint64_t>0xffffffffffffffff:
            return 0
        sid.ms += 1
        sid.seq = 0
    else:
        sid.seq += 1
    return 1

cdef inline bint id_decr(StreamID* sid) noexcept nogil:
    if sid.seq == 0:
        if sid.ms == 0:
            return 0
        sid.ms -= 1
        sid.seq = <uint64_t>0xffffffffffffffff
    else:
        sid.seq -= 1
    return 1

cdef bytes id_format(const StreamID* sid)
# Parses "ms-seq" or "ms" (missing seq -> missing_seq). Returns 0 on a syntax error.
# When seq_star is not NULL, "ms-*" is accepted and *seq_star set to 1.
cdef bint id_parse(object arg, StreamID* out, uint64_t missing_seq, bint* seq_star) except -1
