# cython: boundscheck=False, wraparound=False
"""LZF decompression: Redis compresses the strings of RDB files and DUMP payloads with
LZF (rdbcompression, strings of more than 20 bytes), so reading a payload that
redis-server made needs it. The format: a control byte below 32 starts a literal run
of that many plus one bytes; any other is a back reference whose top three bits hold
the length minus two (7: one more length byte follows) and whose low five bits, with
the next byte, the distance minus one."""
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING


def lzf_decompress(const unsigned char[:] src, Py_ssize_t expected) -> bytes:
    """The `expected` bytes that `src` decompresses to; ValueError if it does not."""
    cdef bytes out = PyBytes_FromStringAndSize(NULL, expected)
    cdef unsigned char* dst = <unsigned char*>PyBytes_AS_STRING(out)
    cdef Py_ssize_t ip = 0, op = 0, n = src.shape[0], length, ref
    cdef unsigned int ctrl
    while ip < n:
        ctrl = src[ip]
        ip += 1
        if ctrl < 32:
            length = ctrl + 1
            if op + length > expected or ip + length > n:
                raise ValueError("LZF literal run past the end")
            for _ in range(length):
                dst[op] = src[ip]
                op += 1
                ip += 1
            continue
        length = ctrl >> 5
        if length == 7:
            if ip >= n:
                raise ValueError("LZF back reference cut short")
            length += src[ip]
            ip += 1
        if ip >= n:
            raise ValueError("LZF back reference cut short")
        ref = op - ((ctrl & 0x1f) << 8) - src[ip] - 1
        ip += 1
        length += 2
        if ref < 0 or op + length > expected:
            raise ValueError("LZF back reference out of range")
        for _ in range(length):       # byte by byte: the source may overlap the output
            dst[op] = dst[ref]
            op += 1
            ref += 1
    if op != expected:
        raise ValueError("LZF data shorter than its stated length")
    return out
