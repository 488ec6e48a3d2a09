"""Keys, types and expiry for one database (SELECT index), indexed in C memory."""
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.string cimport memcpy
from cpython.bytes cimport (PyBytes_AS_STRING, PyBytes_GET_SIZE,
                            PyBytes_FromStringAndSize)
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_DECREF
from libc.stdlib cimport malloc, free
import sys
from random import random

from engine.core.errors import ResponseError, WRONGTYPE
from engine.core.hashtable cimport (
    HTable, HEntry, HIter, ht_new, ht_free, ht_clear, ht_count, ht_bytes, ht_key, ht_value,
    ht_find, ht_set, ht_delete, ht_random, ht_scan, ht_iter_init, ht_iter_next)
from engine.core.memory cimport MemoryAccount
from engine.core.packed cimport packed_form, unpacked
from engine.core.stream cimport Stream
from engine.core.groups cimport ConsumerGroup
from engine.core.value_types import COLLECTION_CLASSES

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil


cdef extern from *:
    """
    /* A bytes object that nothing else references, regrown to n bytes by realloc.
       NULL when there is no memory (v is then unchanged). A big block grows by
       remapping its pages (glibc's realloc uses mremap), without copying them. */
    static PyObject* sluice_bytes_regrow(PyObject* v, Py_ssize_t n) {
        PyBytesObject* w = (PyBytesObject*)PyObject_Realloc(
            v, offsetof(PyBytesObject, ob_sval) + (size_t)n + 1);
        if (w == NULL) return NULL;
        Py_SET_SIZE(w, n);
        w->ob_sval[n] = '\\0';
        w->ob_shash = -1;
        return (PyObject*)w;
    }
    """
    PyObject* sluice_bytes_regrow(PyObject* v, Py_ssize_t n)


# Python-side cost of a value, counted where it is paid (the keys and the index are
# counted C memory): a string's bytes object (CPython's header plus its length,
# rounded to pymalloc's 16-byte blocks); a stream's object and its (usually empty)
# groups dict, its entries being counted C memory; a collection says what it takes
# (footprint()), remembered in its slot since it changes in place. Measured against
# RSS growth for 1M string keys by tests/core/test_memory_accounting.py.
cdef enum:
    BYTES_HEADER = 33
    SLOT_PLAIN = 16                # KeySlot without `counted`
    SLOT_COUNTED = 24
    BUCKET = 8                     # a key's share of a bucket array (load factor 1)
    SCAN_VISITS = 10               # buckets a SCAN visits per key asked for, at most
    SWEEP_VISITS = 20              # buckets the active sweep visits per key it may remove
    INLINE_MAX = 44                # longest string kept in its entry (Redis's embstr)
    ACCESS_SIZE = 8
    LOOSE_MAX = 32                 # loose keys (keyspace.pxd) that make a database settle
    PACK_SLACK = 48                # bytes a packed entry may keep beyond its value
    PACK_SHIFT = 57
# In `access`: the value follows it in the entry, a string or (PACKS not 0) a packed
# collection of that kind (engine/core/packed.pxd).
cdef int64_t INLINE = 1LL << 62
cdef int64_t PACKS = 7LL << PACK_SHIFT
# In `access` too: how Redis would have encoded a string that a command made other than
# by storing it (OBJECT ENCODING / REFCOUNT); a store clears it (ENCODED_AS_* in keyspace.pxd).
cdef int64_t MARK_SHIFT = 60
cdef int64_t MARKS = 3LL << MARK_SHIFT
cdef int64_t FLAGS = INLINE | MARKS | PACKS
cdef int64_t STREAM_OBJECT = sys.getsizeof(Stream()) + sys.getsizeof({})

# What a database frees when it is dropped goes here: the garbage collector may drop
# it while another engine runs a command, whose account must not pay for it.
cdef MemoryAccount dropped = MemoryAccount()

# While set, lookups leave keys' access times alone: the command running is one of a
# client in CLIENT NO-TOUCH mode (engine/api/road.pyx process_command sets it).
cdef bint untouched = False


def set_untouched(bint on) -> bool:
    """Sets the mode; returns the one it replaces (a script's nested calls restore it)."""
    global untouched
    cdef bint previous = untouched
    untouched = on
    return previous


cdef inline int64_t bytes_object(Py_ssize_t length):
    return (BYTES_HEADER + length + 15) & ~15


cdef inline int64_t footprint(object value):
    if type(value) is bytes:
        return bytes_object(PyBytes_GET_SIZE(value))
    if type(value) is Stream:
        return STREAM_OBJECT
    return <int64_t>value.footprint()


cdef inline int64_t entry_estimate(size_t size) noexcept:
    """The usable bytes malloc gives for `size` (glibc's 16-byte chunks, 8 of header)."""
    cdef size_t chunk = (size + 8 + 15) & ~(<size_t>15)
    return <int64_t>(chunk if chunk > 32 else 32) - 8


cdef inline bint fits(const HEntry* e, size_t vlen, size_t slack) noexcept:
    """Whether the entry's allocation holds a value of vlen bytes with at most `slack`
    bytes to spare: the value can then change there, its length with it (the table
    counts allocations, which stay), without a new entry and the key hashed again."""
    cdef size_t need = sizeof(HEntry) + e.klen + vlen
    cdef size_t have = malloc_usable_size(<void*>e)
    return need <= have <= need + slack


cdef inline int64_t head(const HTable* t, const HEntry* e) noexcept:
    """The slot's `access` field, INLINE bit included."""
    # Entries keep their value right after the key, unaligned: copied, never cast.
    cdef int64_t h
    memcpy(&h, ht_value(t, e), ACCESS_SIZE)
    return h


cdef inline void set_head(const HTable* t, HEntry* e, int64_t h) noexcept:
    memcpy(<void*>ht_value(t, e), &h, ACCESS_SIZE)


cdef inline void read_slot(const HTable* t, const HEntry* e, KeySlot* s) noexcept:
    """The slot of an entry holding a reference (not INLINE)."""
    s.counted = 0
    memcpy(s, ht_value(t, e), e.vlen)


cdef inline void write_slot(const HTable* t, HEntry* e, const KeySlot* s) noexcept:
    memcpy(<void*>ht_value(t, e), s, e.vlen)


cdef inline bint inlined(object value) noexcept:
    return type(value) is bytes and PyBytes_GET_SIZE(value) <= INLINE_MAX


cdef object value_of(const HTable* t, const HEntry* e):
    """The value of an entry: a new bytes object for an inline string, a new value
    object (the entry unchanged) for a packed collection."""
    cdef KeySlot s
    cdef int64_t h = head(t, e)
    if h & PACKS:
        return unpacked(<int>((h & PACKS) >> PACK_SHIFT), ht_value(t, e) + ACCESS_SIZE,
                        e.vlen - ACCESS_SIZE)
    if h & INLINE:
        return PyBytes_FromStringAndSize(<const char*>ht_value(t, e) + ACCESS_SIZE,
                                         e.vlen - ACCESS_SIZE)
    read_slot(t, e, &s)
    return <object>s.value


cdef int64_t counted_of(const HTable* t, const HEntry* e) except? -1:
    """What object_bytes holds for the entry's value."""
    cdef KeySlot s
    if head(t, e) & INLINE:
        return 0
    read_slot(t, e, &s)
    return s.counted if e.vlen == SLOT_COUNTED else footprint(<object>s.value)


cdef inline bytes key_of(const HTable* t, const HEntry* e):
    return PyBytes_FromStringAndSize(<const char*>ht_key(t, e), e.klen)


cdef int collect_key(void* out, HTable* t, HEntry* e) except -1:
    (<list>out).append(key_of(t, e))
    return 0


cdef struct DueKeys:
    PyObject* out               # a list
    int64_t now


cdef int collect_due(void* ctx, HTable* t, HEntry* e) except -1:
    cdef DueKeys* due = <DueKeys*>ctx
    cdef int64_t when
    memcpy(&when, ht_value(t, e), sizeof(int64_t))
    if when <= due.now:
        (<list>due.out).append(key_of(t, e))
    return 0


cdef void release_values(HTable* t) noexcept:
    """Drops the table's reference to every value (before the table is freed)."""
    cdef HIter it
    cdef HEntry* e
    cdef KeySlot s
    ht_iter_init(t, &it)
    while True:
        e = ht_iter_next(t, &it)
        if e == NULL:
            return
        if not head(t, e) & INLINE:
            read_slot(t, e, &s)
            Py_DECREF(<object>s.value)


# LFU access metadata, Redis's: a key's one integer holds the minute of its last
# access (16 bits) and a logarithmic access counter (8 bits). LRU metadata is the
# access time in ms (far above 2**24), so each reading can tell a value left by the
# other policy (after CONFIG SET maxmemory-policy): an LRU time reads as counter 0.
cdef enum:
    LFU_INIT_VAL = 5
    LFU_LIMIT = 1 << 24


cdef inline int64_t lfu_minutes(int64_t now_ms) noexcept:
    return (now_ms // 60000) & 0xFFFF


cdef int64_t lfu_decayed(int64_t meta, int64_t now_ms, int decay_time) noexcept:
    """The counter of `meta` less one per `decay_time` minutes since its last access."""
    if meta < 0 or meta >= LFU_LIMIT:
        return 0            # an access time of LRU: Redis's reading of it decays to 0 too
    cdef int64_t counter = meta & 0xFF, last = meta >> 8, now = lfu_minutes(now_ms)
    cdef int64_t elapsed = now - last if now >= last else 0xFFFF - last + now
    cdef int64_t periods = elapsed // decay_time if decay_time > 0 else 0
    return 0 if periods > counter else counter - periods


cdef int64_t lfu_touched(int64_t meta, int64_t now_ms, int log_factor,
                         int decay_time) noexcept:
    """`meta` after one more access: decayed, then incremented with probability
    1 / ((counter - LFU_INIT_VAL) * log_factor + 1), as Redis's LFULogIncr."""
    cdef int64_t counter = lfu_decayed(meta, now_ms, decay_time)
    cdef int64_t base = counter - LFU_INIT_VAL
    if counter < 255:
        if base < 0:
            base = 0
        if random() < 1.0 / (base * log_factor + 1):
            counter += 1
    return (lfu_minutes(now_ms) << 8) | counter



cdef class Database:
    def __cinit__(self, int index=0):
        self.table = ht_new(True)
        self.volatile = ht_new(True)

    def __init__(self, int index=0):
        self.index = index
        self.expired = []
        self.loose = []
        self.settle_at = LOOSE_MAX
        self.lfu_log_factor = 10
        self.lfu_decay_time = 1

    def __dealloc__(self):
        cdef MemoryAccount previous = dropped.enter()
        if self.table != NULL:
            release_values(self.table)
            ht_free(self.table)
        if self.volatile != NULL:
            ht_free(self.volatile)
        dropped.leave(previous)

    cdef HEntry* entry(self, bytes key) noexcept:
        return ht_find(self.table, <const unsigned char*>PyBytes_AS_STRING(key),
                       PyBytes_GET_SIZE(key))

    cdef object attach(self, bytes key, HEntry* e):
        cdef int64_t h = head(self.table, e)
        cdef object value = value_of(self.table, e)
        cdef int64_t size = e.vlen - ACCESS_SIZE
        cdef KeySlot s
        s.access = h & ~(INLINE | PACKS)
        s.value = <PyObject*>value
        s.counted = footprint(value)
        if fits(e, SLOT_COUNTED, <size_t>-1 >> 1):  # until packed again, in its place
            e.vlen = SLOT_COUNTED
            write_slot(self.table, e, &s)
        else:
            ht_set(self.table, <const unsigned char*>PyBytes_AS_STRING(key),
                   PyBytes_GET_SIZE(key), <const unsigned char*>&s, SLOT_COUNTED)
        Py_INCREF(value)                           # the entry's reference
        self.packed_bytes -= size
        self.object_bytes += s.counted
        self.loosened(key)
        return value

    cdef int loosened(self, bytes key) except -1:
        self.loose.append(key)
        if len(self.loose) >= self.settle_at:
            self.settle()
        return 0

    cdef int settle(self) except -1:
        cdef list keys = self.loose
        cdef list held = []
        self.loose = held
        for key in keys:
            if not self.pack(key):
                held.append(key)
        self.settle_at = len(held) + LOOSE_MAX
        return 0

    cdef bint pack(self, bytes key) except -1:
        cdef HEntry* e = self.entry(key)
        cdef KeySlot s
        cdef const unsigned char* p
        cdef size_t n
        cdef int kind
        cdef int64_t h
        cdef unsigned char* buf
        if e == NULL or head(self.table, e) & INLINE:
            return True
        read_slot(self.table, e, &s)
        if s.value.ob_refcnt != 1:                 # not the entry's alone
            return False
        kind = packed_form(<object>s.value, &p, &n)
        if kind == 0:
            return True
        h = s.access | INLINE | (<int64_t>kind << PACK_SHIFT)
        if fits(e, ACCESS_SIZE + n, PACK_SLACK):    # its entry from before the lookup
            e.vlen = <uint32_t>(ACCESS_SIZE + n)
            set_head(self.table, e, h)
            memcpy(<unsigned char*>ht_value(self.table, e) + ACCESS_SIZE, p, n)
        else:
            buf = <unsigned char*>malloc(ACCESS_SIZE + n)
            if buf == NULL:
                raise MemoryError()
            memcpy(buf, &h, ACCESS_SIZE)
            memcpy(buf + ACCESS_SIZE, p, n)
            try:
                ht_set(self.table, <const unsigned char*>PyBytes_AS_STRING(key),
                       PyBytes_GET_SIZE(key), buf, ACCESS_SIZE + n)
            finally:
                free(buf)
        self.packed_bytes += n
        self.object_bytes -= s.counted
        Py_DECREF(<object>s.value)                 # the old entry's: the object goes
        return True

    cdef object lookup(self, bytes key, int64_t now):
        """The live value of key, or None; an expired key is removed here (unless
        expiry is held)."""
        cdef HEntry* e = self.entry(key)
        cdef KeySlot s
        self.last_now = now
        if e == NULL:
            return None
        if ht_count(self.volatile) and not self.loading and 0 <= self.expire_at(key) <= now:
            if self.expiry_held:
                return None
            self.remove(key)
            self.expired.append(key)
            return None
        cdef object value
        cdef int64_t h
        if head(self.table, e) & PACKS:
            value = self.attach(key, e)
            e = self.entry(key)
        else:
            value = value_of(self.table, e)
        if untouched:
            return value
        if type(value) is Stream:
            if self.lfu:
                (<Stream>value).access_time = lfu_touched(
                    (<Stream>value).access_time, now, self.lfu_log_factor, self.lfu_decay_time)
            else:
                (<Stream>value).access_time = now
            return value
        h = head(self.table, e)
        set_head(self.table, e, (h & FLAGS) | (
            lfu_touched(h & ~FLAGS, now, self.lfu_log_factor, self.lfu_decay_time)
            if self.lfu else now))
        return value

    cdef object lookup_stream(self, bytes key, int64_t now):
        """The stream at key, None if absent; WRONGTYPE for any other type."""
        cdef object value = self.lookup(key, now)
        if value is not None and type(value) is not Stream:
            raise ResponseError(WRONGTYPE)
        return value

    cpdef object lookup_typed(self, bytes key, int64_t now, type cls):
        """The value at key if it is a `cls`, None if absent; WRONGTYPE otherwise."""
        cdef object value = self.lookup(key, now)
        if value is not None and type(value) is not cls:
            raise ResponseError(WRONGTYPE)
        return value

    cpdef object peek(self, bytes key):
        cdef HEntry* e = self.entry(key)
        return value_of(self.table, e) if e != NULL else None

    cpdef void store(self, bytes key, object value):
        cdef HEntry* e = self.entry(key)
        cdef KeySlot s, old
        cdef object previous = None
        cdef bint inline = inlined(value)
        cdef bint collection = type(value) in COLLECTION_CLASSES
        cdef int64_t h
        cdef uint32_t vlen
        cdef unsigned char buf[ACCESS_SIZE + INLINE_MAX]
        if e == NULL:
            s.access = (((lfu_minutes(self.last_now) << 8) | LFU_INIT_VAL) if self.lfu
                        else self.last_now)
        else:
            h = head(self.table, e)
            self.object_bytes -= counted_of(self.table, e)
            if h & PACKS:
                self.packed_bytes -= e.vlen - ACCESS_SIZE
            if not h & INLINE:
                read_slot(self.table, e, &old)
                previous = <object>old.value      # held until the entry lets it go
            # A replaced key keeps its LFU count.
            s.access = (self.last_now if not self.lfu else
                        (<Stream>previous).access_time if type(previous) is Stream
                        else h & ~FLAGS)
        if inline:
            vlen = ACCESS_SIZE + PyBytes_GET_SIZE(value)
            h = s.access | INLINE
            memcpy(buf, &h, ACCESS_SIZE)
            memcpy(buf + ACCESS_SIZE, PyBytes_AS_STRING(value), vlen - ACCESS_SIZE)
            s.counted = 0
        else:
            vlen = SLOT_COUNTED if collection else SLOT_PLAIN
            s.value = <PyObject*>value
            s.counted = footprint(value)
            memcpy(buf, &s, vlen)
        if (e != NULL and e.vlen == vlen
                and (head(self.table, e) & INLINE) == (INLINE if inline else 0)):
            memcpy(<void*>ht_value(self.table, e), buf, vlen)    # the same entry serves
        else:
            ht_set(self.table, <const unsigned char*>PyBytes_AS_STRING(key),
                   PyBytes_GET_SIZE(key), buf, vlen)
        if not inline:
            Py_INCREF(value)                       # the entry's reference
        if previous is not None:
            Py_DECREF(previous)                    # the old entry's
        if e == NULL:
            self.version += 1
            if self.added is not None:
                self.added.append(key)
        if type(value) is Stream:
            (<Stream>value).access_time = s.access
        self.object_bytes += s.counted
        if collection:
            self.loosened(key)

    cdef Py_ssize_t append(self, bytes key, bytes tail) except -1:
        """Appends tail to the string at key (present, a bytes value); its new length.
        When the keyspace holds the only reference to the string it grows in place,
        so appends in a row cost what they add, not a copy of the whole string each
        (Redis's strings keep spare room for this); otherwise, a new string."""
        cdef HEntry* e = self.entry(key)
        cdef KeySlot s
        cdef object value
        if head(self.table, e) & INLINE:        # a short string: stored again, longer
            value = value_of(self.table, e) + tail
            self.store(key, value)
            return PyBytes_GET_SIZE(value)
        read_slot(self.table, e, &s)
        cdef PyObject* old = s.value
        cdef Py_ssize_t size = PyBytes_GET_SIZE(<object>old), n = PyBytes_GET_SIZE(tail)
        cdef PyObject* regrown
        self.object_bytes -= bytes_object(size)
        if old.ob_refcnt == 1:                     # the entry's only
            regrown = sluice_bytes_regrow(old, size + n)
            if regrown == NULL:                    # unchanged
                self.object_bytes += bytes_object(size)
                raise MemoryError()
            s.value = regrown                      # the entry's reference moved with it
            memcpy(PyBytes_AS_STRING(<object>regrown) + size, PyBytes_AS_STRING(tail), n)
        else:
            value = <object>old + tail
            Py_INCREF(value)
            s.value = <PyObject*>value
            Py_DECREF(<object>old)
        if not self.lfu:
            s.access = self.last_now
        write_slot(self.table, e, &s)
        self.object_bytes += bytes_object(size + n)
        return size + n

    cpdef void mark_encoding(self, bytes key, int mark):
        """Records how Redis would have encoded the string just stored at key (an
        ENCODED_AS_* mark), until the next store."""
        cdef HEntry* e = self.entry(key)
        if e != NULL:
            set_head(self.table, e, (head(self.table, e) & ~MARKS)
                     | ((<int64_t>mark << MARK_SHIFT) & MARKS))

    cpdef int encoding_mark(self, bytes key):
        """The ENCODED_AS_* mark of key (ENCODED_AS_STORED when none, or absent)."""
        cdef HEntry* e = self.entry(key)
        return 0 if e == NULL else <int>((head(self.table, e) & MARKS) >> MARK_SHIFT)

    cpdef void resized(self, bytes key):
        cdef HEntry* e = self.entry(key)
        cdef KeySlot s
        cdef int64_t size
        if e != NULL and e.vlen == SLOT_COUNTED and not head(self.table, e) & INLINE:
            read_slot(self.table, e, &s)
            size = footprint(<object>s.value)
            self.object_bytes += size - s.counted
            s.counted = size
            write_slot(self.table, e, &s)

    cdef bint remove(self, bytes key):
        cdef HEntry* e = self.entry(key)
        cdef KeySlot s
        cdef const unsigned char* k = <const unsigned char*>PyBytes_AS_STRING(key)
        if e == NULL:
            return False
        cdef object value = None
        self.object_bytes -= counted_of(self.table, e)
        if head(self.table, e) & PACKS:
            self.packed_bytes -= e.vlen - ACCESS_SIZE
        if not head(self.table, e) & INLINE:
            read_slot(self.table, e, &s)
            value = <object>s.value                # keeps it alive past the entry
        ht_delete(self.table, k, PyBytes_GET_SIZE(key))
        if value is not None:
            Py_DECREF(value)                       # the entry's reference
        if ht_count(self.volatile):
            ht_delete(self.volatile, k, PyBytes_GET_SIZE(key))
        self.version += 1
        return True

    cpdef int64_t expire_at(self, bytes key) except? -2:
        cdef HEntry* e
        cdef int64_t when
        if ht_count(self.volatile) == 0:
            return -1
        e = ht_find(self.volatile, <const unsigned char*>PyBytes_AS_STRING(key),
                    PyBytes_GET_SIZE(key))
        if e == NULL:
            return -1
        memcpy(&when, ht_value(self.volatile, e), sizeof(int64_t))
        return when

    cpdef void set_expire(self, bytes key, int64_t when):
        ht_set(self.volatile, <const unsigned char*>PyBytes_AS_STRING(key),
               PyBytes_GET_SIZE(key), <const unsigned char*>&when, sizeof(int64_t))

    cdef bint persist(self, bytes key):
        return ht_delete(self.volatile, <const unsigned char*>PyBytes_AS_STRING(key),
                         PyBytes_GET_SIZE(key))

    cpdef Py_ssize_t volatile_count(self):
        return ht_count(self.volatile)

    cpdef int64_t main_table_bytes(self):
        return ht_bytes(self.table) - sizeof(HTable) - self.packed_bytes

    cpdef int64_t expires_table_bytes(self):
        return ht_bytes(self.volatile) - sizeof(HTable)

    cpdef int64_t usage(self, bytes key, object value):
        cdef HEntry* e = self.entry(key)
        cdef HEntry* v
        cdef const unsigned char* p
        cdef size_t n
        cdef int64_t size
        if packed_form(value, &p, &n):             # what its packed entry holds
            size = entry_estimate(sizeof(HEntry) + PyBytes_GET_SIZE(key) + ACCESS_SIZE
                                  + n) + BUCKET
        else:
            size = 0 if e != NULL and head(self.table, e) & INLINE else footprint(value)
            if type(value) is Stream:              # its nodes, their index, its groups' PELs
                size += <int64_t>(<Stream>value).memory_bytes()
                for group in (<Stream>value).groups.values():
                    size += <int64_t>(<ConsumerGroup>group).memory_bytes()
            elif type(value) is not bytes and hasattr(value, "memory_bytes"):
                size += <int64_t>value.memory_bytes()     # what it holds in C memory
            if e != NULL:
                size += malloc_usable_size(e) + BUCKET
        if ht_count(self.volatile):
            v = ht_find(self.volatile, <const unsigned char*>PyBytes_AS_STRING(key),
                        PyBytes_GET_SIZE(key))
            if v != NULL:
                size += malloc_usable_size(v) + BUCKET
        return size

    cpdef int64_t frequency(self, bytes key, object value, int64_t now) except? -1:
        return lfu_decayed(self.access_of(key, value), now, self.lfu_decay_time)

    cpdef int64_t access_of(self, bytes key, object value) except? -1:
        cdef HEntry* e
        cdef KeySlot s
        if type(value) is Stream:
            return (<Stream>value).access_time
        e = self.entry(key)
        if e == NULL:
            return self.last_now
        return head(self.table, e) & ~FLAGS

    cpdef void set_access(self, bytes key, object value, int64_t when):
        cdef HEntry* e
        cdef KeySlot s
        if type(value) is Stream:
            (<Stream>value).access_time = when
            return
        e = self.entry(key)
        if e != NULL:
            set_head(self.table, e, (head(self.table, e) & FLAGS) | (when & ~FLAGS))

    def sweep_expired(self, int64_t now, int limit=200) -> list:
        """Active expiry: removes expired keys found by walking the TTL table from
        where the last sweep stopped, a few buckets per key it may remove, and
        returns them (also recorded in `expired`)."""
        cdef list due_keys = [], gone = []
        cdef DueKeys due
        cdef uint64_t cursor = self.sweep_cursor
        cdef Py_ssize_t visits = 0, budget = <Py_ssize_t>limit * SWEEP_VISITS
        if ht_count(self.volatile) == 0:
            return gone
        cdef bint wrapped = cursor == 0
        due.out = <PyObject*>due_keys
        due.now = now
        while True:
            cursor = ht_scan(self.volatile, cursor, collect_due, &due)
            visits += 1
            if len(due_keys) >= limit or visits >= budget:
                break
            if cursor == 0:
                if wrapped:             # a whole pass done
                    break
                wrapped = True          # started mid-table: one pass from the start
        self.sweep_cursor = cursor
        for key in due_keys:
            if self.remove(key):        # a wrapped pass may see a key twice
                gone.append(key)
        self.expired.extend(gone)
        return gone

    def __len__(self):
        return ht_count(self.table)

    def __contains__(self, bytes key):
        return self.entry(key) != NULL

    def clear(self):
        release_values(self.table)
        ht_clear(self.table)
        ht_clear(self.volatile)
        self.object_bytes = self.packed_bytes = 0
        self.loose = []
        self.settle_at = LOOSE_MAX
        self.sweep_cursor = 0
        self.version += 1

    def take(self, Database src) -> None:
        """Takes src's keys, TTLs and counts in place of its own (src is left empty):
        a loaded snapshot goes into the database sessions hold."""
        self.table, src.table = src.table, self.table
        self.volatile, src.volatile = src.volatile, self.volatile
        self.object_bytes, src.object_bytes = src.object_bytes, self.object_bytes
        self.packed_bytes, src.packed_bytes = src.packed_bytes, self.packed_bytes
        self.loose, src.loose = src.loose, self.loose
        self.settle_at = src.settle_at
        src.clear()
        self.expired = []
        self.sweep_cursor = 0
        self.version += 1

    def swap(self, Database other) -> None:
        """Exchanges keys, TTLs and counts with other (SWAPDB): each keeps its index,
        and the sessions holding it see the other's keys."""
        self.table, other.table = other.table, self.table
        self.volatile, other.volatile = other.volatile, self.volatile
        self.object_bytes, other.object_bytes = other.object_bytes, self.object_bytes
        self.packed_bytes, other.packed_bytes = other.packed_bytes, self.packed_bytes
        self.loose, other.loose = other.loose, self.loose
        self.settle_at, other.settle_at = other.settle_at, self.settle_at
        self.sweep_cursor = other.sweep_cursor = 0
        self.version += 1
        other.version += 1

    def items(self):
        """(key, value, expiry in ms or None) for every key, in table order. The
        database must not gain or lose keys meanwhile (SAVE, a rewrite)."""
        cdef HIter it
        cdef HEntry* e
        cdef uint64_t version = self.version
        cdef HTable* table = self.table
        cdef int64_t when
        ht_iter_init(table, &it)
        while True:
            if version != self.version or table != self.table:
                raise RuntimeError("the database changed during iteration")
            e = ht_iter_next(table, &it)
            if e == NULL:
                return
            key = key_of(table, e)
            when = self.expire_at(key)
            yield key, value_of(table, e), (when if when >= 0 else None)

    cpdef list expiries(self, Py_ssize_t limit):
        cdef list out = []
        cdef HIter it
        cdef HEntry* e
        cdef int64_t when
        ht_iter_init(self.volatile, &it)
        while len(out) < limit:
            e = ht_iter_next(self.volatile, &it)
            if e == NULL:
                break
            memcpy(&when, ht_value(self.volatile, e), sizeof(int64_t))
            out.append(when)
        return out

    cpdef list keys(self):
        cdef list out = []
        cdef HIter it
        cdef HEntry* e
        ht_iter_init(self.table, &it)
        while True:
            e = ht_iter_next(self.table, &it)
            if e == NULL:
                return out
            out.append(key_of(self.table, e))

    cpdef tuple scan(self, uint64_t cursor, Py_ssize_t count):
        cdef list out = []
        cdef Py_ssize_t visits = 0
        cdef Py_ssize_t budget = count * SCAN_VISITS if count < (1 << 40) else count
        if ht_count(self.table) == 0:
            return 0, out
        while True:
            cursor = ht_scan(self.table, cursor, collect_key, <void*>out)
            visits += 1
            if cursor == 0 or len(out) >= count or visits >= budget:
                return cursor, out

    cpdef object random_key(self):
        cdef HEntry* e = ht_random(self.table)
        return key_of(self.table, e) if e != NULL else None

    cpdef object random_volatile_key(self):
        cdef HEntry* e = ht_random(self.volatile)
        return key_of(self.volatile, e) if e != NULL else None


cdef class Keyspace:
    """Every database of an engine and what they hold in memory (keyspace.pxd)."""

    def __init__(self, int databases, MemoryAccount memory, int stream_idmp_duration,
                 int stream_idmp_maxsize):
        self.databases = [Database(i) for i in range(databases)]
        self.memory = memory
        self.stream_idmp_duration = stream_idmp_duration
        self.stream_idmp_maxsize = stream_idmp_maxsize

    cpdef int64_t used_memory(self):
        cdef int64_t used = <int64_t>self.memory.bytes
        cdef Database db
        for db in self.databases:
            used += db.object_bytes
        if used > self.peak_memory:
            self.peak_memory = used
        return used
