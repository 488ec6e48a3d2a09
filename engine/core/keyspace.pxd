# A database: keys mapped to values (a Stream, bytes for plain strings, or a collection
# of engine/core/value_types.py), with
# millisecond expiry. Expired keys are removed lazily on access and by the active
# sweep; each removal is recorded in `expired` so the command layer can log a DEL
# and notify `expired` (the keyspace knows nothing of logs or clients).

from libc.stdint cimport int64_t, uint64_t

# Every key of a database in insertion order, for SCAN and RANDOMKEY: SCAN's cursor
# is the sequence number of the next key to visit, so a key present for the whole
# scan is returned exactly once (keys keep their number until removed; new keys get
# larger numbers). Maintained by Database.store/remove/clear.
cdef class KeyOrder:
    cdef list keys              # keys by insertion; None where one was removed
    cdef list seqs              # their sequence numbers, ascending
    cdef dict seq_of            # live key -> its sequence number
    cdef readonly int64_t next_seq
    cdef Py_ssize_t dead        # None slots in `keys`

    cdef void add(self, bytes key)
    cdef void discard(self, bytes key)
    cdef void clear(self)
    cdef void sync(self, dict data)
    cdef tuple scan(self, uint64_t cursor, Py_ssize_t count)
    cdef object random(self)

cdef class Database:
    cdef readonly int index
    cdef public dict data          # key (bytes) -> Stream | bytes | a collection
    cdef public dict expires       # key (bytes) -> absolute expiry in ms
    cdef list deadlines            # min-heap of (expiry, key) for the active sweep
    cdef public list expired       # keys removed by expiry, drained by the caller
    cdef readonly int64_t object_bytes  # Python-side bytes of keys and values
    cdef public dict counted       # collection key -> its footprint in object_bytes
    cdef readonly KeyOrder order   # insertion order of `data` (SCAN, RANDOMKEY)
    cdef public dict access        # key -> ms of its last lookup or store (OBJECT
                                   # IDLETIME; RESTORE IDLETIME sets it); a stream
                                   # keeps its own (Stream.access_time)
    cdef public bint lfu           # `access` holds LFU metadata (an LFU maxmemory-policy)
    cdef public int lfu_log_factor # lfu-log-factor, lfu-decay-time
    cdef public int lfu_decay_time
    cdef public int64_t last_now   # the `now` of the latest lookup (stores use it)
    cdef public bint loading       # replaying a log: nothing expires (as Redis while
                                   # loading; due keys go once the load is over)

    cdef object lookup(self, bytes key, int64_t now)
    cdef object lookup_stream(self, bytes key, int64_t now)
    # The value at key if it is of type `cls`, None if absent; WRONGTYPE otherwise.
    cpdef object lookup_typed(self, bytes key, int64_t now, type cls)
    # A collection at key changed in place: its footprint is counted again.
    cpdef void resized(self, bytes key)
    cdef int64_t forget(self, bytes key, object old) except? -1
    cdef void store(self, bytes key, object value)
    cdef Py_ssize_t append(self, bytes key, bytes tail) except -1
    cdef bint remove(self, bytes key)
    cdef int64_t expire_at(self, bytes key) except? -2
    cdef void set_expire(self, bytes key, int64_t when)
    cdef bint persist(self, bytes key)
    # When key (holding value) was last looked up or stored, in ms; set_access sets it.
    cpdef int64_t access_of(self, bytes key, object value) except? -1
    # What key (holding value) costs: its containers' slots, its bytes, its value's
    # (a stream's C memory too) and its TTL's (MEMORY USAGE).
    cpdef int64_t usage(self, bytes key, object value)
    # The LFU counter of key (holding value), decayed to `now` (OBJECT FREQ).
    cpdef int64_t frequency(self, bytes key, object value, int64_t now) except? -1
    cpdef void set_access(self, bytes key, object value, int64_t when)
    # Up to `count` keys from `cursor` on (0 = start) in insertion order, and the
    # cursor to continue with (0 = done); keys may be logically expired (the caller
    # looks them up).
    cpdef tuple scan(self, uint64_t cursor, Py_ssize_t count)
    # A key chosen uniformly at random (possibly logically expired), or None.
    cpdef object random_key(self)
    # A key with a TTL chosen at random (through the deadline heap), or None.
    cpdef object random_volatile_key(self)
