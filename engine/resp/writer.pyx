# cython: language_level=3
"""RESP writing primitives (all inline, in resp_writer.pxd) and EncodedReply."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdlib cimport free


cdef class RespBuffer:

    def __cinit__(self):
        self.b.data = NULL
        self.b.len = 0
        self.b.cap = 0

    def __dealloc__(self):
        free(self.b.data)
        self.b.data = NULL

    def __len__(self):
        return self.b.len


cdef class EncodedReply(RespBuffer):

    def __bytes__(self):
        return PyBytes_FromStringAndSize(self.b.data, self.b.len)

    def __repr__(self):
        return "EncodedReply(%r)" % bytes(self)
