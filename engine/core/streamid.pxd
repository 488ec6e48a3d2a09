# Stream entry IDs: <milliseconds>-<sequence>, two unsigned 64-bit integers.
# Encoded as 16 big-endian bytes for radix keys, so memcmp order is ID order.

from libc.stdint cimport uint8_t, uint64_t

ctypedef struct StreamID:
    uint64_t ms
    uint64_t seq

cdef extern from *:
    """
    static const char sluice_digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899";
    static const unsigned long long sluice_pow10[20] = {
        1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL, 10000000ULL,
        100000000ULL, 1000000000ULL, 10000000000ULL, 100000000000ULL,
        1000000000000ULL, 10000000000000ULL, 100000000000000ULL,
        1000000000000000ULL, 10000000000000000ULL, 100000000000000000ULL,
        1000000000000000000ULL, 10000000000000000000ULL};
    /* Decimal digits of v: from its bit length, then one compare. */
    static inline int sluice_u64_digits(unsigned long long v) {
        int n = ((64 - __builtin_clzll(v | 1)) * 1233) >> 12;
        return n + ((v | 1) >= sluice_pow10[n]);
    }
    """
    const char* sluice_digit_pairs
    int sluice_u64_digits(uint64_t v) nogil

cdef inline Py_ssize_t u64_write(char* out, uint64_t v) noexcept nogil:
    """Decimal digits of v at out (at most 20); returns how many. Written from the
    end two digits at a time (IDs format on every entry of every reply)."""
    cdef Py_ssize_t n = sluice_u64_digits(v)
    cdef char* p = out + n
    cdef uint64_t i
    while v >= 100:
        i = (v % 100) * 2
        v //= 100
        p -= 2
        p[0] = sluice_digit_pairs[i]
        p[1] = sluice_digit_pairs[i + 1]
    if v >= 10:
        p -= 2
        p[0] = sluice_digit_pairs[v * 2]
        p[1] = sluice_digit_pairs[v * 2 + 1]
    else:
        p -= 1
        p[0] = <char>(48 + v)
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
