# A database: keys mapped to values (a Stream, bytes for plain strings, or a collection
# of engine/core/value_types.py), with
# millisecond expiry. Expired keys are removed lazily on access and by the active
# sweep; each removal is recorded in `expired` so the command layer can log a DEL
# and notify `expired` (the keyspace knows nothing of logs or clients).
#
# The index lives in C memory (engine/core/hashtable.pyx, counted allocation): one
# table maps each key, stored inline in its entry, to a KeySlot (its access metadata,
# then a string of up to 44 bytes itself, or a strong reference to the value and for
# a collection the bytes counted for it);
# a second table maps each key with a TTL to its absolute expiry in ms (the active
# sweep walks it with a cursor; volatile-* eviction picks from it at random).
#
# A small collection (a listpack or intset encoding) is kept packed in its key's entry,
# with no value object (engine/core/packed.pxd). A lookup makes its object and the
# entry holds that instead (the key becomes "loose"); every few lookups or stores of
# collections, the loose keys whose object nothing else holds are packed again.

from libc.stdint cimport int64_t, uint64_t
from cpython.object cimport PyObject
from engine.core.hashtable cimport HTable, HEntry
from engine.core.memory cimport MemoryAccount

# The value part of a key's entry. A string of up to INLINE_MAX bytes is kept in the
# entry itself, after `access` (which then carries the INLINE bit), as Redis's embstr;
# any other value is a reference. `counted` is there only for collections (the
# entry is then SLOT_COUNTED bytes long, SLOT_PLAIN otherwise): the footprint last
# added to object_bytes, since a collection changes in place.
cdef struct KeySlot:
    int64_t access              # ms of the last lookup or store, or LFU metadata
    PyObject* value             # a strong reference
    int64_t counted

# How Redis would have encoded a string a command made (OBJECT ENCODING, REFCOUNT):
# as its stored bytes say (an integer in 0..9999 shared), or as an sds Redis edited in
# place (APPEND, SETRANGE: raw), made as text (INCRBYFLOAT: embstr), or an integer
# object of its own (COPY of a shared one).
cpdef enum:
    ENCODED_AS_STORED = 0
    ENCODED_AS_RAW = 1
    ENCODED_AS_TEXT = 2
    ENCODED_AS_OWN_INT = 3

cdef class Database:
    cdef readonly int index
    cdef HTable* table             # key -> KeySlot
    cdef HTable* volatile          # key -> absolute expiry in ms (int64)
    cdef uint64_t sweep_cursor     # where the active sweep goes on in `volatile`
    cdef uint64_t version          # bumped by every add or removal (iteration check)
    cdef public list expired       # keys removed by expiry, drained by the caller
    cdef public list added         # keys a store created, drained by the caller; None
                                   # when nobody listens (notify-keyspace-events n)
    cdef readonly int64_t object_bytes  # Python-side bytes of the values
    cdef public bint lfu           # access slots hold LFU metadata (an LFU maxmemory-policy)
    cdef public int lfu_log_factor # lfu-log-factor, lfu-decay-time
    cdef public int lfu_decay_time
    cdef public int64_t last_now   # the `now` of the latest lookup (stores use it)
    cdef public bint loading       # replaying a log: nothing expires (as Redis while
                                   # loading; due keys go once the load is over)
    cdef list loose                # keys whose collection may be packed again
    cdef Py_ssize_t settle_at      # the length of `loose` that packs them
    cdef int64_t packed_bytes      # the collections' bytes in packed entries
    cdef public bint expiry_held   # CLIENT PAUSE: a due key reads as absent but stays

    cdef HEntry* entry(self, bytes key) noexcept
    # The object of e's packed collection, which the entry then holds.
    cdef object attach(self, bytes key, HEntry* e)
    cdef int loosened(self, bytes key) except -1
    # Packs the loose keys' collections that nothing else holds.
    cdef int settle(self) except -1
    # Packs key's small collection into its entry; False while something else holds it.
    cdef bint pack(self, bytes key) except -1
    cdef object lookup(self, bytes key, int64_t now)
    cdef object lookup_stream(self, bytes key, int64_t now)
    # The value at key if it is of type `cls`, None if absent; WRONGTYPE otherwise.
    cpdef object lookup_typed(self, bytes key, int64_t now, type cls)
    # The value at key, None if absent, whether due or not, its access untouched; to
    # read only (a packed collection's is a copy: its entry stays packed).
    cpdef object peek(self, bytes key)
    # A collection at key changed in place: its footprint is counted again.
    cpdef void mark_encoding(self, bytes key, int mark)
    cpdef int encoding_mark(self, bytes key)
    cpdef void resized(self, bytes key)
    cpdef void store(self, bytes key, object value)
    cdef Py_ssize_t append(self, bytes key, bytes tail) except -1
    cdef bint remove(self, bytes key)
    # Absolute expiry in ms, or -1 when the key has none.
    cpdef int64_t expire_at(self, bytes key) except? -2
    cpdef void set_expire(self, bytes key, int64_t when)
    cdef bint persist(self, bytes key)
    # How many keys have a TTL.
    cpdef Py_ssize_t volatile_count(self)
    # The bytes of the index's C tables (key -> slot, key -> expiry): their bucket
    # arrays and entries (keys, slots and inline strings are in the entries), not their
    # fixed headers, made with the database (startup memory, outside used_memory).
    cpdef int64_t main_table_bytes(self)
    cpdef int64_t expires_table_bytes(self)
    # When key (holding value) was last looked up or stored, in ms; set_access sets it.
    cpdef int64_t access_of(self, bytes key, object value) except? -1
    # What key (holding value) costs: its entries in the tables, its value's objects
    # (a stream's or a collection's C memory too) and its TTL's (MEMORY USAGE).
    cpdef int64_t usage(self, bytes key, object value)
    # The LFU counter of key (holding value), decayed to `now` (OBJECT FREQ).
    cpdef int64_t frequency(self, bytes key, object value, int64_t now) except? -1
    cpdef void set_access(self, bytes key, object value, int64_t when)
    # Up to about `count` keys from `cursor` on (0 = start) and the cursor to go on
    # with (0 = done): Redis's reverse-binary cursor, so a key present for the whole
    # scan is returned at least once; keys may be logically expired (the caller looks
    # them up).
    cpdef tuple scan(self, uint64_t cursor, Py_ssize_t count)
    # A key chosen uniformly at random (possibly logically expired), or None.
    cpdef object random_key(self)
    # A key with a TTL chosen at random, or None.
    cpdef object random_volatile_key(self)
    # Up to `limit` absolute expiries (ms), in table order (INFO's avg_ttl estimate).
    cpdef list expiries(self, Py_ssize_t limit)
    # Every key (a list: the caller may change the database while it goes through it).
    cpdef list keys(self)


# The engine's keyspace as a whole: what a command sees of the engine beyond its own
# database (SELECT, COPY ... DB, MOVE, FLUSHALL: every database; MEMORY: the memory
# account; IDMP: the stream-idmp-* defaults). Commands never see the Engine.
cdef class Keyspace:
    cdef readonly list databases
    cdef readonly MemoryAccount memory   # the C allocations of the stored data
    cdef public int stream_idmp_duration # a new stream's IDMP settings until XCFGSET
    cdef public int stream_idmp_maxsize
    cdef readonly int64_t peak_memory    # the highest used_memory seen
    # The engine's EVAL script cache and FUNCTION libraries once made (engine/api's
    # Scripting and Functions), or None: MEMORY STATS reads their cache_bytes().
    cdef public object scripting
    cdef public object functions
    # Bytes held for stored data (INFO's used_memory): the counted C allocations plus
    # the Python objects of keys and strings.
    cpdef int64_t used_memory(self)
