# cython: boundscheck=False, wraparound=False
"""CRC-64 as Redis computes it (Jones polynomial, reflected, initial value 0, no final
xor): the checksum that closes a DUMP payload (FUNCTION DUMP, and DUMP of keys), so
payloads move between redis-server and Sluice and either side can check the other's.
Table-driven, one byte per step."""
from libc.stdint cimport uint64_t
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_SIMPLE

cdef uint64_t POLY = 0x95ac9329ac4bc9b5ULL     # Jones's polynomial, bit-reflected
cdef uint64_t TABLE[256]


cdef void _fill_table():
    cdef uint64_t crc
    cdef int i, bit
    for i in range(256):
        crc = i
        for bit in range(8):
            crc = (crc >> 1) ^ POLY if crc & 1 else crc >> 1
        TABLE[i] = crc


_fill_table()


cpdef uint64_t crc64(const unsigned char[:] data, uint64_t crc=0):
    """The CRC-64 of `data` (any bytes-like object), continuing from `crc`."""
    cdef Py_ssize_t i
    for i in range(data.shape[0]):
        crc = TABLE[(crc ^ data[i]) & 0xff] ^ (crc >> 8)
    return crc
