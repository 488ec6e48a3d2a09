# The thresholds at which collections change encoding (Redis's set-max-intset-entries,
# set-max-listpack-entries/-value, hash-max-listpack-entries/-value,
# zset-max-listpack-entries/-value, list-max-listpack-size, list-compress-depth).
# One per engine:
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
    cdef public int list_max_listpack_size     # per node: -1..-5 = 4..64 KB, n > 0 = n entries
    cdef public int list_compress_depth        # nodes left plain at each end; 0: none compressed

# The defaults, for values made with no engine around them (tests, tools).
cdef EncodingLimits DEFAULT_LIMITS
