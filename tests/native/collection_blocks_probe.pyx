# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The packed buffer, the intset and the C hash table driven from Python, for
tests/core/test_collection_blocks.py. Built by `make test` (tests/native/setup.py), never
shipped: the engine uses the cdef APIs of engine/core/listpack.pxd, intset.pxd and
hashtable.pxd."""
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, uint64_t

from engine.core.hashtable cimport (
    HEntry, HIter, HTable, ht_bytes, ht_copy, ht_count, ht_delete, ht_find, ht_free,
    ht_iter_init, ht_iter_next, ht_key, ht_new, ht_random, ht_scan, ht_set, ht_value)
from engine.core.intset cimport (
    IntSet, is_add, is_bytes, is_copy, is_find, is_free, is_get, is_len, is_new, is_remove)
from engine.core.listpack cimport (
    lp_append, lp_bytes, lp_copy, lp_count, lp_delete, lp_end, lp_equals, lp_find, lp_first,
    lp_free, lp_get_bytes, lp_insert, lp_last, lp_new, lp_next, lp_prev, lp_replace, lp_seek)


cdef class ListpackProbe:
    """A listpack addressed by index (the probe walks to the offset)."""
    cdef unsigned char* lp

    def __cinit__(self):
        self.lp = lp_new()

    def __dealloc__(self):
        lp_free(self.lp)

    def __len__(self):
        return lp_count(self.lp)

    @property
    def nbytes(self):
        return lp_bytes(self.lp)

    cdef size_t _at(self, long index) except? 0:
        cdef size_t off = lp_seek(self.lp, index)
        if off == 0:
            raise IndexError(index)
        return off

    def append(self, bytes s):
        lp_append(&self.lp, s, len(s))

    def insert(self, long index, bytes s):
        off = lp_end(self.lp) if index == lp_count(self.lp) else self._at(index)
        lp_insert(&self.lp, off, s, len(s))

    def replace(self, long index, bytes s):
        lp_replace(&self.lp, self._at(index), s, len(s))

    def delete(self, long index, uint32_t count=1):
        lp_delete(&self.lp, self._at(index), count)

    def get(self, long index):
        return lp_get_bytes(self.lp, self._at(index))

    def equals(self, long index, bytes s):
        return lp_equals(self.lp, self._at(index), s, len(s))

    def find(self, bytes s, uint32_t skip=0, long start=0):
        """The index of the first match from start on (stepping skip), or -1."""
        cdef size_t off = lp_seek(self.lp, start)
        cdef size_t hit = lp_find(self.lp, off, s, len(s), skip)
        cdef long i = 0
        if hit == 0:
            return -1
        off = lp_first(self.lp)
        while off != hit:
            off = lp_next(self.lp, off)
            i += 1
        return i

    def forward(self):
        out = []
        cdef size_t off = lp_first(self.lp)
        while off:
            out.append(lp_get_bytes(self.lp, off))
            off = lp_next(self.lp, off)
        return out

    def backward(self):
        out = []
        cdef size_t off = lp_last(self.lp)
        while off:
            out.append(lp_get_bytes(self.lp, off))
            off = lp_prev(self.lp, off)
        return out

    def copy(self):
        cdef ListpackProbe out = ListpackProbe()
        lp_free(out.lp)
        out.lp = lp_copy(self.lp)
        return out


cdef class IntSetProbe:
    cdef IntSet* s

    def __cinit__(self):
        self.s = is_new()

    def __dealloc__(self):
        is_free(self.s)

    def __len__(self):
        return is_len(self.s)

    @property
    def width(self):
        return self.s.width

    @property
    def nbytes(self):
        return is_bytes(self.s)

    def add(self, int64_t v):
        return is_add(&self.s, v) == 1

    def remove(self, int64_t v):
        return is_remove(&self.s, v)

    def __contains__(self, int64_t v):
        return is_find(self.s, v)

    def items(self):
        return [is_get(self.s, i) for i in range(is_len(self.s))]

    def copy(self):
        cdef IntSetProbe out = IntSetProbe()
        is_free(out.s)
        out.s = is_copy(self.s)
        return out


cdef int _collect(void* ctx, HTable* t, HEntry* e) except -1:
    (<list>ctx).append(PyBytes_FromStringAndSize(<const char*>ht_key(t, e), e.klen))
    return 0


cdef class HashTableProbe:
    cdef HTable* t

    def __cinit__(self, bint values=True):
        self.t = ht_new(values)

    def __dealloc__(self):
        ht_free(self.t)

    def __len__(self):
        return ht_count(self.t)

    @property
    def nbytes(self):
        return ht_bytes(self.t)

    @property
    def buckets(self):
        return (self.t.size[0], self.t.size[1])

    @property
    def rehashing(self):
        return self.t.rehash_index >= 0

    def set(self, bytes k, bytes v=b""):
        return ht_set(self.t, k, len(k), v, len(v)) == 1

    def delete(self, bytes k):
        return ht_delete(self.t, k, len(k))

    def get(self, bytes k):
        cdef HEntry* e = ht_find(self.t, k, len(k))
        if e == NULL:
            return None
        if not self.t.values:
            return b""
        return PyBytes_FromStringAndSize(<const char*>ht_value(self.t, e), e.vlen)

    def random_key(self):
        cdef HEntry* e = ht_random(self.t)
        if e == NULL:
            return None
        return PyBytes_FromStringAndSize(<const char*>ht_key(self.t, e), e.klen)

    def scan(self, uint64_t cursor):
        """(next cursor, the keys of this call)."""
        cdef list out = []
        cursor = ht_scan(self.t, cursor, _collect, <void*>out)
        return cursor, out

    def items(self):
        cdef HIter it
        cdef HEntry* e
        out = {}
        ht_iter_init(self.t, &it)
        while True:
            e = ht_iter_next(self.t, &it)
            if e == NULL:
                return out
            out[PyBytes_FromStringAndSize(<const char*>ht_key(self.t, e), e.klen)] = (
                PyBytes_FromStringAndSize(<const char*>ht_value(self.t, e), e.vlen)
                if self.t.values else b"")

    def copy(self):
        cdef HashTableProbe out = HashTableProbe(self.t.values)
        ht_free(out.t)
        out.t = ht_copy(self.t)
        return out


from engine.core.sorted_set cimport SortedSetValue, ZNode, ZSkiplist


def skiplist_check(SortedSetValue zset) -> list:
    """The (score, member) pairs of a skiplist-encoded set walked at level 0, after
    checking its structure: each level's links in order and their spans summing to the
    ranks they skip, backward links, tail, length, and the hash table's entry of each
    member pointing at its node. AssertionError names the first fault."""
    cdef ZSkiplist* zsl = zset.zsl
    cdef ZNode* x
    cdef ZNode* y
    cdef ZNode* prev = NULL
    cdef HEntry* e
    cdef dict rank_of = {}
    cdef uint64_t rank = 0, r
    cdef list out = []
    cdef int i
    assert zsl != NULL, "not a skiplist"
    x = zsl.header.level[0].forward
    while x != NULL:
        rank += 1
        rank_of[<size_t>x] = rank
        assert x.backward == prev, f"backward link of rank {rank}"
        member = PyBytes_FromStringAndSize(<const char*>ht_key(zsl.members, x.entry),
                                           x.entry.klen)
        e = ht_find(zsl.members, <const unsigned char*><char*>member, len(member))
        assert e == x.entry, f"hash table entry of rank {rank}"
        assert (<ZNode**>ht_value(zsl.members, e))[0] == x, f"node address of rank {rank}"
        if out:         # (no negative indexes: the probes build without wraparound)
            assert out[len(out) - 1] < (x.score, member), f"order at rank {rank}"
        out.append((x.score, member))
        prev = x
        x = x.level[0].forward
    assert zsl.tail == prev, "tail"
    assert zsl.length == rank == <uint64_t>ht_count(zsl.members), "length"
    for i in range(zsl.level):
        x = zsl.header
        r = 0
        while True:
            y = x.level[i].forward
            if y == NULL:
                break
            r += x.level[i].span
            assert rank_of[<size_t>y] == r, f"span at level {i} reaching rank {r}"
            x = y
    for i in range(zsl.level, 32):
        assert zsl.header.level[i].forward == NULL, f"link above the level ({i})"
    return out
