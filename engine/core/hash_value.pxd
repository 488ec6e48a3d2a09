# A hash value in C memory, in the encoding Redis would have for the same history: a
# listpack of field, value pairs in insertion order while the hash is small and its
# strings short, then a hash table of field -> value; never back.
from libc.stdint cimport int64_t

from engine.core.encoding_limits cimport EncodingLimits
from engine.core.hashtable cimport HTable

cdef class HashValue:
    cdef unsigned char* lp           # a listpack of pairs, NULL once a hash table
    cdef HTable* table
    cdef readonly int64_t nbytes     # the fields' and values' bytes

    cdef object lookup(self, const unsigned char* f, size_t n)
    cdef int store(self, bytes field, bytes value, EncodingLimits limits) except -1
    cdef int convert(self) except -1
    cdef object random_one(self)

# A listpack-encoded hash owning lp, a listpack of its field, value pairs.
cdef HashValue hash_of_listpack(unsigned char* lp)
