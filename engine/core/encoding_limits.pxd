# The thresholds at which collections change encoding (Redis's set-max-intset-entries,
# set-max-listpack-entries/-value, hash-max-listpack-entries/-value,
# zset-max-listpack-entries/-value). One per engine:
# its commands pass it to the value classes, which read it on each change.
from libc.stdint cimport int64_t

cdef class EncodingLimits:
    cdef public int64_t set_max_intset_entries
    cdef public int64_t set_max_listpack_entries
    cdef public int64_t set_max_listpack_value
    cdef public int64_t hash_max_listpack_entries
    cdef public int64_t hash_max_listpack_value
    cdef public int64_t zset_max_listpack_entries
    cdef public int64_t zset_max_listpack_value

# The defaults, for values made with no engine around them (tests, tools).
cdef EncodingLimits DEFAULT_LIMITS
