"""Keys, types and expiry for one database (SELECT index)."""
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE
from cpython.object cimport PyObject
from cpython.ref cimport Py_INCREF, Py_DECREF
from bisect import bisect_left
from heapq import heapify, heappop, heappush
import sys
from random import randrange, random

from engine.core.errors import ResponseError, WRONGTYPE
from engine.core.stream cimport Stream
from engine.core.value_types import COLLECTION_CLASSES


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


cdef class KeyOrder:
    """Keys in insertion order with stable sequence numbers (see keyspace.pxd).

    `keys`/`seqs` are parallel lists; removal leaves a None hole (found by bisecting
    `seqs`), and the lists are compacted once holes outnumber live keys, so every
    operation is O(1) amortized except removal and a SCAN resume (O(log n))."""

    def __init__(self):
        self.keys = []
        self.seqs = []
        self.seq_of = {}
        self.next_seq = 1
        self.dead = 0

    cdef void add(self, bytes key):
        if key in self.seq_of:
            return
        self.seq_of[key] = self.next_seq
        self.keys.append(key)
        self.seqs.append(self.next_seq)
        self.next_seq += 1

    cdef void discard(self, bytes key):
        seq = self.seq_of.pop(key, None)
        if seq is None:
            return
        cdef Py_ssize_t i = bisect_left(self.seqs, seq)
        self.keys[i] = None
        self.dead += 1
        if self.dead > 32 and self.dead * 2 > len(self.keys):
            live = [(k, q) for k, q in zip(self.keys, self.seqs) if k is not None]
            self.keys = [k for k, _ in live]
            self.seqs = [q for _, q in live]
            self.dead = 0

    cdef void clear(self):
        # next_seq keeps growing: a cursor from before the flush stays meaningful.
        self.keys = []
        self.seqs = []
        self.seq_of = {}
        self.dead = 0

    cdef void sync(self, dict data):
        """Repairs the order after writes that bypassed Database.store/remove."""
        if len(self.seq_of) == len(data):
            return
        for key in [k for k in self.seq_of if k not in data]:
            self.discard(key)
        for key in data:
            if key not in self.seq_of:
                self.add(key)

    cdef tuple scan(self, uint64_t cursor, Py_ssize_t count):
        cdef list keys = self.keys, out = []
        cdef Py_ssize_t n = len(keys)
        cdef Py_ssize_t i = bisect_left(self.seqs, cursor) if cursor else 0
        while i < n and len(out) < count:
            key = keys[i]
            i += 1
            if key is not None:
                out.append(key)
        while i < n and keys[i] is None:
            i += 1
        return (self.seqs[i] if i < n else 0), out

    cdef object random(self):
        if not self.seq_of:
            return None
        cdef list keys = self.keys
        while True:
            key = keys[randrange(len(keys))]
            if key is not None:
                return key


# Python-side cost of a key, counted where it is paid: its bytes object (CPython's
# header plus its length, rounded to pymalloc's 16-byte blocks), and one slot in each
# container that keeps a key: `data`, `access` and KeyOrder's `seq_of` (a dict slot
# is about 48 bytes with the table's slack), KeyOrder's two lists (8 bytes each plus
# over-allocation) and the int objects of its sequence number and its access time.
# A stream's entries live in counted C memory, so only its object and its (usually
# empty) groups dict count here; a collection says what it takes (footprint()),
# remembered in Database.counted since it changes in place. Measured against RSS
# growth for 1M string keys by tests/core/test_memory_accounting.py.
cdef enum:
    BYTES_HEADER = 33
    DICT_SLOT = 48
    LIST_SLOT = 9
    INT_OBJECT = 32
    KEY_CONTAINERS = 3 * DICT_SLOT + 2 * LIST_SLOT + 2 * INT_OBJECT
    # A TTL: its slot in `expires` and its int, its (expiry, key) tuple in `deadlines`
    # with that list's slot and the tuple's own int.
    TTL_COST = DICT_SLOT + 2 * INT_OBJECT + 64 + LIST_SLOT
cdef int64_t STREAM_OBJECT = sys.getsizeof(Stream()) + sys.getsizeof({})

# While set, lookups leave keys' access times alone: the command running is one of a
# client in CLIENT NO-TOUCH mode (engine/api/session.py Session.call sets it).
cdef bint untouched = False


def set_untouched(bint on) -> bool:
    """Sets the mode; returns the one it replaces (a script's nested calls restore it)."""
    global untouched
    cdef bint previous = untouched
    untouched = on
    return previous


cdef inline int64_t bytes_object(Py_ssize_t length):
    return (BYTES_HEADER + length + 15) & ~15


cdef inline int64_t footprint(bytes key, object value):
    cdef int64_t size = bytes_object(len(key)) + KEY_CONTAINERS
    if type(value) is bytes:
        return size + bytes_object(len(<bytes>value))
    if type(value) is Stream:
        return size + STREAM_OBJECT
    return size + <int64_t>value.footprint()


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
    def __init__(self, int index=0):
        self.index = index
        self.data = {}
        self.expires = {}
        self.deadlines = []
        self.expired = []
        self.order = KeyOrder()
        self.access = {}
        self.counted = {}
        self.lfu_log_factor = 10
        self.lfu_decay_time = 1

    cdef object lookup(self, bytes key, int64_t now):
        """The live value of key, or None; an expired key is removed here."""
        cdef object value = self.data.get(key)
        self.last_now = now
        if value is None:
            return None
        if (self.expires and key in self.expires and <int64_t>self.expires[key] <= now
                and not self.loading):
            self.remove(key)
            self.expired.append(key)
            return None
        if untouched:
            return value
        if self.lfu:
            self.set_access(key, value, lfu_touched(self.access_of(key, value), now,
                                                    self.lfu_log_factor, self.lfu_decay_time))
        elif type(value) is Stream:
            (<Stream>value).access_time = now
        else:
            self.access[key] = now
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

    cdef int64_t forget(self, bytes key, object old) except? -1:
        """The bytes counted for key's value `old`."""
        if type(old) is bytes or type(old) is Stream:
            return footprint(key, old)
        return self.counted.pop(key, 0)    # 0: stored behind store()'s back

    cdef void store(self, bytes key, object value):
        cdef object old = self.data.get(key)
        cdef int64_t size
        self.data[key] = value
        if not self.lfu:
            self.set_access(key, value, self.last_now)
        elif old is None:       # a new key starts at LFU_INIT_VAL; a replaced one keeps its count
            self.set_access(key, value, (lfu_minutes(self.last_now) << 8) | LFU_INIT_VAL)
        else:
            self.set_access(key, value, self.access_of(key, old))
        if old is None:
            self.order.add(key)
        else:
            self.object_bytes -= self.forget(key, old)
        size = footprint(key, value)
        if type(value) in COLLECTION_CLASSES:
            self.counted[key] = size
        self.object_bytes += size

    cdef Py_ssize_t append(self, bytes key, bytes tail) except -1:
        """Appends tail to the string at key (present, a bytes value); its new length.
        When the keyspace holds the only reference to the string it grows in place,
        so appends in a row cost what they add, not a copy of the whole string each
        (Redis's strings keep spare room for this); otherwise, a new string."""
        cdef object value = self.data[key]
        cdef Py_ssize_t size = PyBytes_GET_SIZE(value), n = PyBytes_GET_SIZE(tail)
        cdef PyObject* grown
        cdef PyObject* regrown
        self.object_bytes -= footprint(key, value)
        if (<PyObject*>value).ob_refcnt == 2:          # the dict's and `value`'s
            grown = <PyObject*>value
            Py_INCREF(value)                            # grown's own reference
            self.data[key] = None
            value = None                                # grown's is the only one now
            regrown = sluice_bytes_regrow(grown, size + n)
            if regrown == NULL:                         # unchanged: put it back
                value = <object>grown
                Py_DECREF(value)
                self.data[key] = value
                self.object_bytes += footprint(key, value)
                raise MemoryError()
            value = <object>regrown
            Py_DECREF(value)                            # `value` holds it now
            memcpy(PyBytes_AS_STRING(value) + size, PyBytes_AS_STRING(tail), n)
        else:
            value = value + tail
        self.data[key] = value
        self.set_access(key, value, self.last_now)
        self.object_bytes += footprint(key, value)
        return size + n

    cpdef void resized(self, bytes key):
        cdef object old = self.counted.get(key)
        if old is not None:
            self.counted[key] = size = footprint(key, self.data[key])
            self.object_bytes += size - <int64_t>old

    cdef bint remove(self, bytes key):
        cdef object old = self.data.pop(key, None)
        if old is None:
            return False
        self.object_bytes -= self.forget(key, old)
        self.access.pop(key, None)
        if self.expires and self.expires.pop(key, None) is not None:
            self.object_bytes -= TTL_COST
        self.order.discard(key)
        return True

    cdef int64_t expire_at(self, bytes key) except? -2:
        """Absolute expiry in ms, or -1 when the key has none."""
        return self.expires.get(key, -1)

    cdef void set_expire(self, bytes key, int64_t when):
        if key not in self.expires:
            self.object_bytes += TTL_COST
        self.expires[key] = when
        heappush(self.deadlines, (when, key))
        if len(self.deadlines) > 2 * len(self.expires) + 1024:
            # Too many stale deadlines (TTLs renewed or removed): rebuild.
            self.deadlines = [(w, k) for k, w in self.expires.items()]
            heapify(self.deadlines)

    cpdef int64_t usage(self, bytes key, object value):
        cdef int64_t size = footprint(key, value)
        if type(value) is not bytes and hasattr(value, "memory_bytes"):
            size += <int64_t>value.memory_bytes()     # what it holds in C memory
        if key in self.expires:
            size += TTL_COST
        return size

    cpdef int64_t frequency(self, bytes key, object value, int64_t now) except? -1:
        return lfu_decayed(self.access_of(key, value), now, self.lfu_decay_time)

    cpdef int64_t access_of(self, bytes key, object value) except? -1:
        if type(value) is Stream:
            return (<Stream>value).access_time
        return self.access.get(key, self.last_now)

    cpdef void set_access(self, bytes key, object value, int64_t when):
        if type(value) is Stream:
            (<Stream>value).access_time = when
        else:
            self.access[key] = when

    cdef bint persist(self, bytes key):
        if self.expires.pop(key, None) is None:
            return False
        self.object_bytes -= TTL_COST
        return True

    def sweep_expired(self, int64_t now, int limit=200) -> list:
        """Active expiry: removes up to `limit` expired keys, oldest deadline first,
        and returns them (also recorded in `expired`). O(log n) per key: deadlines
        sit in a min-heap; entries made stale by PERSIST/DEL/a new TTL are skipped."""
        cdef list gone = []
        cdef list heap = self.deadlines
        while heap and len(gone) < limit:
            when, key = heap[0]
            if <int64_t>when > now:
                break
            heappop(heap)
            if self.expires.get(key) == when:
                self.remove(key)
                gone.append(key)
        self.expired.extend(gone)
        return gone

    def __len__(self):
        return len(self.data)

    def clear(self):
        self.data.clear()
        self.expires.clear()
        self.access.clear()
        self.deadlines = []
        self.object_bytes = 0
        self.counted = {}
        self.order.clear()

    cpdef tuple scan(self, uint64_t cursor, Py_ssize_t count):
        self.order.sync(self.data)
        return self.order.scan(cursor, count)

    cpdef object random_volatile_key(self):
        cdef list heap = self.deadlines
        cdef Py_ssize_t tries
        for tries in range(8):      # a stale deadline (TTL renewed or gone): another
            if not heap:
                return None
            when, key = heap[randrange(len(heap))]
            if self.expires.get(key) == when:
                return key
        return None

    cpdef object random_key(self):
        self.order.sync(self.data)
        return self.order.random()
