# cython: boundscheck=False, wraparound=False
"""LZF, both ways: Redis compresses the strings of RDB files and DUMP payloads with
LZF (rdbcompression, strings of more than 20 bytes), so reading a payload that
redis-server made needs it, and lists compress their interior nodes with it
(list-compress-depth). The format: a control byte below 32 starts a literal run
of that many plus one bytes; any other is a back reference whose top three bits hold
the length minus two (7: one more length byte follows) and whose low five bits, with
the next byte, the distance minus one."""
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from libc.string cimport memcpy, memset

DEF HASH_LOG = 13
DEF MAX_LITERAL = 32
DEF MAX_OFFSET = 8192
DEF MAX_REF = 264           # the longest back reference: 7 + 255 + 2 bytes


cdef inline unsigned int _hash(const unsigned char* p) noexcept:
    cdef unsigned int v = (p[0] << 16) | (p[1] << 8) | p[2]
    return ((v * 2654435761u) >> (32 - HASH_LOG)) & ((1 << HASH_LOG) - 1)


cdef size_t lzf_compress(const unsigned char* src, size_t n, unsigned char* dst,
                         size_t cap) noexcept:
    """Greedy LZF: each position's three bytes hashed to the last position that had
    them; a match at most MAX_OFFSET back becomes a back reference."""
    cdef size_t table[1 << HASH_LOG]
    cdef size_t ip = 0, op = 1, lit = 0, ref, off, length, maxlen
    cdef unsigned int h
    if cap == 0:
        return 0
    memset(table, 0, sizeof(table))       # 0: no position (positions are stored + 1)
    while ip < n:
        if ip + 2 < n:
            h = _hash(src + ip)
            ref = table[h]
            table[h] = ip + 1
            if ref:
                ref -= 1
                off = ip - ref - 1
                if (off < MAX_OFFSET and src[ref] == src[ip] and src[ref + 1] == src[ip + 1]
                        and src[ref + 2] == src[ip + 2]):
                    maxlen = n - ip
                    if maxlen > MAX_REF:
                        maxlen = MAX_REF
                    length = 3
                    while length < maxlen and src[ref + length] == src[ip + length]:
                        length += 1
                    if op + 3 + 1 >= cap:
                        return 0
                    dst[op - lit - 1] = <unsigned char>(lit - 1)    # close the literal run
                    if lit == 0:
                        op -= 1                                   # (an empty one is dropped)
                    length -= 2
                    if length < 7:
                        dst[op] = <unsigned char>((off >> 8) + (length << 5))
                        op += 1
                    else:
                        dst[op] = <unsigned char>((off >> 8) + (7 << 5))
                        dst[op + 1] = <unsigned char>(length - 7)
                        op += 2
                    dst[op] = <unsigned char>(off & 0xFF)
                    op += 2                                       # and open the next run
                    lit = 0
                    ip += length + 2
                    continue
        if op >= cap:
            return 0
        dst[op] = src[ip]
        op += 1
        ip += 1
        lit += 1
        if lit == MAX_LITERAL:
            dst[op - lit - 1] = <unsigned char>(lit - 1)
            lit = 0
            op += 1
    if lit:
        dst[op - lit - 1] = <unsigned char>(lit - 1)
    else:
        op -= 1
    return op


cdef bint lzf_decompress_to(const unsigned char* src, size_t n, unsigned char* dst,
                            size_t expected) noexcept:
    cdef size_t ip = 0, op = 0, length, back
    cdef unsigned int ctrl
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:
            length = ctrl + 1
            if op + length > expected or ip + length > n:
                return False                   # a literal run past the end
            memcpy(dst + op, src + ip, length)
            op += length
            ip += length
            continue
        length = ctrl >> 5
        if length == 7:
            if ip >= n:
                return False
            length += src[ip]
            ip += 1
        if ip >= n:
            return False
        back = ((ctrl & 0x1f) << 8) + src[ip] + 1
        ip += 1
        length += 2
        if back > op or op + length > expected:
            return False
        while length:                          # byte by byte: the source may overlap
            dst[op] = dst[op - back]
            op += 1
            length -= 1
    return op == expected


def lzf_decompress(const unsigned char[:] src, Py_ssize_t expected) -> bytes:
    """The `expected` bytes that `src` decompresses to; ValueError if it does not."""
    cdef const unsigned char* p = &src[0] if src.shape[0] else NULL
    if expected < 0:
        raise ValueError("negative LZF length")
    cdef bytes out = PyBytes_FromStringAndSize(NULL, expected)
    if not lzf_decompress_to(p, src.shape[0], <unsigned char*>PyBytes_AS_STRING(out), expected):
        raise ValueError("LZF data does not decompress to its stated length")
    return out


def lzf_compress_bytes(bytes data) -> bytes:
    """data compressed (for tests and tools); None when it does not shrink."""
    cdef size_t n = len(data)
    cdef bytes out = PyBytes_FromStringAndSize(NULL, n + 1)
    cdef size_t k = lzf_compress(<const unsigned char*>PyBytes_AS_STRING(data), n,
                                 <unsigned char*>PyBytes_AS_STRING(out), n)
    return None if k == 0 else out[:k]
