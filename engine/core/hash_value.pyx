"""A hash value in C memory (see hash_value.pxd): a listpack of field, value pairs
(insertion order, as Redis's small hashes) converted to a hash table of field -> value
when it gets more fields than hash-max-listpack-entries or a string longer than
hash-max-listpack-value, as Redis converts it (never back)."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint64_t

from engine.core.encoding_limits cimport EncodingLimits, DEFAULT_LIMITS
from engine.core.random_picks cimport pick_distinct
from engine.core.hashtable cimport (
    HEntry, HIter, ht_bytes, ht_copy, ht_count, ht_delete, ht_find, ht_free, ht_iter_init,
    ht_iter_next, ht_key, ht_new, ht_random, ht_random_u64, ht_set, ht_value)
from engine.core.listpack cimport (
    lp_append, lp_bytes, lp_copy, lp_count, lp_delete, lp_find, lp_first, lp_free,
    lp_get_bytes, lp_new, lp_next, lp_replace, lp_seek, lp_text_bytes)

OBJECT_OVERHEAD = 48          # the value object itself (its C data is counted apart)


cdef class HashValue:
    """The fields and values of a hash; commands change it only through its methods."""

    TYPE_NAME = b"hash"

    def __cinit__(self):
        self.lp = lp_new()

    def __init__(self, fields=None, EncodingLimits limits=None):
        if fields:
            self.update(fields, limits)

    def __dealloc__(self):
        if self.lp != NULL:
            lp_free(self.lp)
        if self.table != NULL:
            ht_free(self.table)

    def __len__(self):
        return ht_count(self.table) if self.lp == NULL else lp_count(self.lp) // 2

    def __contains__(self, bytes field):
        return self.lookup(field, len(field)) is not None

    def encoding(self) -> bytes:
        return b"hashtable" if self.lp == NULL else b"listpack"

    def footprint(self) -> int:
        """The object itself: its members live in counted C memory (used_memory has
        them already)."""
        return OBJECT_OVERHEAD

    def memory_bytes(self) -> int:
        """Its C memory (MEMORY USAGE adds it to the footprint)."""
        return ht_bytes(self.table) if self.lp == NULL else lp_bytes(self.lp)

    def copy(self) -> HashValue:
        cdef HashValue out = HashValue.__new__(HashValue)
        out.nbytes = self.nbytes
        if self.lp == NULL:
            lp_free(out.lp)
            out.lp = NULL
            out.table = ht_copy(self.table)
        else:
            lp_free(out.lp)
            out.lp = NULL
            out.lp = lp_copy(self.lp)
        return out

    # the C paths

    cdef object lookup(self, const unsigned char* f, size_t n):
        """The value of field f, None when absent."""
        cdef size_t off
        cdef HEntry* e
        if self.lp == NULL:
            e = ht_find(self.table, f, n)
            if e == NULL:
                return None
            return PyBytes_FromStringAndSize(<const char*>ht_value(self.table, e), e.vlen)
        off = lp_find(self.lp, lp_first(self.lp), f, n, 1)
        return None if off == 0 else lp_get_bytes(self.lp, lp_next(self.lp, off))

    cdef int convert(self) except -1:
        cdef list flat = self.to_record()
        cdef Py_ssize_t i
        self.table = ht_new(True)
        for i in range(0, len(flat), 2):
            ht_set(self.table, flat[i], len(<bytes>flat[i]), flat[i + 1], len(<bytes>flat[i + 1]))
        lp_free(self.lp)
        self.lp = NULL
        return 0

    cdef int store(self, bytes field, bytes value, EncodingLimits limits) except -1:
        """Sets one field (the caller has converted for long strings); 1 when new."""
        cdef size_t off, voff
        cdef object old
        if self.lp == NULL:
            old = self.lookup(field, len(field))
            ht_set(self.table, field, len(field), value, len(value))
        else:
            off = lp_find(self.lp, lp_first(self.lp), field, len(field), 1)
            if off:
                voff = lp_next(self.lp, off)
                old = lp_get_bytes(self.lp, voff)
                lp_replace(&self.lp, voff, value, len(value))
            else:
                old = None
                lp_append(&self.lp, field, len(field))
                lp_append(&self.lp, value, len(value))
                if <int64_t>(lp_count(self.lp) // 2) > limits.hash_max_listpack_entries:
                    self.convert()
        if old is None:
            self.nbytes += len(field) + len(value)
            return 1
        self.nbytes += len(value) - len(<bytes>old)
        return 0

    cdef object random_one(self):
        cdef HEntry* e
        cdef uint64_t size = len(self)
        if size == 0:
            return None
        if self.lp != NULL:
            return lp_get_bytes(self.lp, lp_seek(self.lp, <long>(2 * (ht_random_u64() % size))))
        e = ht_random(self.table)
        return PyBytes_FromStringAndSize(<const char*>ht_key(self.table, e), e.klen)

    # changes

    def set_pairs(self, list flat, Py_ssize_t start=0, EncodingLimits limits=None) -> int:
        """Sets the field, value pairs of flat[start:] (HSET), first converting when one
        of their strings is longer than a listpack takes (Redis's
        hashTypeTryConversion); the number of new fields."""
        if limits is None:
            limits = DEFAULT_LIMITS
        cdef Py_ssize_t i, added = 0
        if self.lp != NULL:
            for i in range(start, len(flat)):
                if <int64_t>len(<bytes>flat[i]) > limits.hash_max_listpack_value:
                    self.convert()
                    break
        for i in range(start, len(flat), 2):
            added += self.store(flat[i], flat[i + 1], limits)
        return added

    def set(self, bytes field, bytes value, EncodingLimits limits=None) -> bool:
        """Sets one field; True when it is new."""
        return self.set_pairs([field, value], 0, limits) == 1

    def update(self, fields, EncodingLimits limits=None) -> int:
        """Sets every field of the mapping `fields`; the number that were new."""
        cdef list flat = []
        for f, v in fields.items():
            flat.append(f)
            flat.append(v)
        return self.set_pairs(flat, 0, limits)

    def delete(self, bytes field) -> bool:
        """Removes one field; True when it was there."""
        cdef size_t off
        old = self.lookup(field, len(field))
        if old is None:
            return False
        if self.lp == NULL:
            ht_delete(self.table, field, len(field))
        else:
            off = lp_find(self.lp, lp_first(self.lp), field, len(field), 1)
            lp_delete(&self.lp, off, 2)
        self.nbytes -= len(field) + len(<bytes>old)
        return True

    # reading

    def get(self, bytes field):
        """The value of field, None when absent."""
        return self.lookup(field, len(field))

    def to_record(self) -> list:
        """Field, value, field, value... (insertion order for a listpack)."""
        cdef list out = []
        cdef size_t off
        cdef HIter it
        cdef HEntry* e
        if self.lp != NULL:
            off = lp_first(self.lp)
            while off:
                out.append(lp_get_bytes(self.lp, off))
                off = lp_next(self.lp, off)
            return out
        ht_iter_init(self.table, &it)
        while True:
            e = ht_iter_next(self.table, &it)
            if e == NULL:
                return out
            out.append(PyBytes_FromStringAndSize(<const char*>ht_key(self.table, e), e.klen))
            out.append(PyBytes_FromStringAndSize(<const char*>ht_value(self.table, e), e.vlen))

    def keys(self) -> list:
        return self.to_record()[::2]

    def values(self) -> list:
        return self.to_record()[1::2]

    def random_field(self):
        """A field chosen at random (None when empty)."""
        return self.random_one()

    def random_fields(self, int64_t count) -> list:
        """`count` distinct fields chosen at random (all of them, in order, when count
        >= size)."""
        return pick_distinct(self.keys, self.random_field, len(self), count,
                             self.lp == NULL)

    def random_picks(self, int64_t count) -> list:
        """`count` fields chosen at random, each independently (they may repeat)."""
        return [self.random_one() for _ in range(count)]

    # persistence

    @classmethod
    def from_record(cls, items: list, EncodingLimits limits=None) -> HashValue:
        if not items or len(items) % 2 or any(type(item) is not bytes for item in items):
            raise ValueError("a hash record is not a non-empty list of field-value pairs")
        cdef HashValue out = cls(None, limits)
        out.set_pairs(items, 0, limits)
        if len(out) * 2 != len(items):
            raise ValueError("a hash record repeats a field")
        return out


cdef HashValue hash_of_listpack(unsigned char* lp):
    cdef HashValue out
    try:
        out = HashValue.__new__(HashValue)
    except MemoryError:
        lp_free(lp)
        raise
    lp_free(out.lp)
    out.lp = lp
    out.nbytes = lp_text_bytes(lp, 1)
    return out
