# Parsing of stream-command arguments (IDs, range bounds, trim options) with
# Redis's error replies.
from libc.stdint cimport uint64_t, int64_t
from engine.core.streamid cimport StreamID
from engine.core.stream cimport TrimStrategy

# "ms-seq" / "ms" (seq = missing_seq); "-" and "+" unless strict.
cdef int parse_id(object arg, StreamID* out, uint64_t missing_seq, bint strict) except -1
# XADD's ID: like strict parse_id, plus "ms-*" (*seq_given set to 0).
cdef int parse_add_id(object arg, StreamID* out, bint* seq_given) except -1
# A range bound; "(" makes it exclusive (then the ID must be strict).
cdef int parse_bound(object arg, StreamID* out, uint64_t missing_seq, bint* exclusive) except -1

# What deleting an entry does to the consumer groups' references to it (Redis 8.2+):
# KEEPREF leaves the PELs alone, DELREF removes the entry from every PEL, ACKED
# deletes only entries that no group still needs (groups.pxd: entry_referenced).
cdef enum RefPolicy:
    REF_KEEP
    REF_DEL
    REF_ACKED

# KEEPREF / DELREF / ACKED as a RefPolicy, or -1 for any other word.
cdef int ref_policy_word(bytes arg)

cdef struct TrimArgs:
    TrimStrategy strategy
    RefPolicy policy
    uint64_t maxlen
    StreamID minid
    bint approx
    int64_t limit
    bint nomkstream
    bint id_given
    bint seq_given
    StreamID id
    Py_ssize_t next_arg      # XADD: position of the ID argument
    Py_ssize_t idmp_pid      # XADD IDMP / IDMPAUTO: position of the producer ID, else 0
    Py_ssize_t idmp_iid      # XADD IDMP: position of the idempotent ID (0: IDMPAUTO)

# XADD (xadd=1) / XTRIM options (KEEPREF | DELREF | ACKED at most once), as Redis parses them; node_max_entries sets the
# default LIMIT of approximate trimming.
cdef int parse_trim_args(list argv, TrimArgs* args, bint xadd,
                         uint64_t node_max_entries) except -1
