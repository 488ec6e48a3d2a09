from libc.stdint cimport int64_t
from engine.core.keyspace cimport Database

# Chooses the keys maxmemory evicts (see eviction.pyx).
cdef class Evictor:
    cdef readonly str policy
    cdef public int samples
    cdef bint volatile, lru, lfu, ttl
    cdef list pool
    cdef int next_db

    cdef Py_ssize_t candidates(self, Database db)
    cdef object sample(self, Database db)
    cdef int64_t score(self, Database db, bytes key, object value, int64_t now)
    cpdef tuple victim(self, list databases, int64_t now)
    cdef void offer(self, int64_t score, int index, bytes key)
