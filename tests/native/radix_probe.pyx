# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The radix tree driven from Python, for tests/core/test_radix.py: RadixTestTree wraps a
RadixTree (bytes keys and values) and checks its structural invariants; RadixTestIter is
a RadixIter that lives across calls. Built by `make test` (tests/native/setup.py), never
shipped: the engine itself uses the cdef API of engine/core/radix.pxd."""
from libc.stdint cimport uint8_t, uint32_t, uint64_t
from libc.string cimport memcmp, memcpy

from engine.core.memory cimport mem_alloc, mem_free
from engine.core.radix cimport (
    RADIX_MAX_KEY, RADIX_MAX_VALUE, RADIX_FIRST, RADIX_LAST, RADIX_GE, RADIX_GT, RADIX_LE,
    RADIX_LT, RADIX_EQ, MAX_CHILDREN, SPARE_BYTES, RadixSeekOp, RadixTree, RadixInner,
    RadixChild, RadixBucket, RadixFinger, RadixFrame, RadixIter, RadixHint, radix_new,
    radix_free, radix_clone, radix_count, radix_bytes, radix_insert, radix_try_insert,
    radix_find,
    radix_remove, radix_remove_first, radix_locate_many, radix_find_at, radix_floor,
    radix_iter_init, radix_seek, radix_next, radix_prev, _entry, _bucket_size, _prefix,
    _children_offset, _children)

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

SPARE_LIMIT = SPARE_BYTES     # the most an emptied tree keeps

cdef dict _SEEK_OPS = {
    "first": RADIX_FIRST, "last": RADIX_LAST, "ge": RADIX_GE, "gt": RADIX_GT,
    "le": RADIX_LE, "lt": RADIX_LT, "eq": RADIX_EQ,
}


cdef RadixSeekOp _seek_op(str op, object key) except *:
    cdef RadixSeekOp o = _SEEK_OPS[op]
    if key is None and o != RADIX_FIRST and o != RADIX_LAST:
        raise ValueError(f"seek {op!r} needs a key")
    return o


cdef int _require(bint ok, str what) except -1:
    if not ok:
        raise AssertionError("radix invariant: " + what)
    return 0


cdef int _check_node(RadixTree* t, void* node, bint is_inner, RadixFrame* path, uint32_t h,
                     uint8_t* prev, bint* have_prev, uint64_t* count,
                     uint64_t* nbytes) except -1:
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef RadixBucket* b
    cdef uint32_t i, lv, idx
    cdef const uint8_t* k
    nbytes[0] += malloc_usable_size(node)
    if is_inner:
        n = <RadixInner*>node
        _require(n.depth < t.key_len, "inner depth beyond key")
        _require(h == 0 or n.depth > path[h - 1].node.depth, "depth not increasing")
        _require(2 <= n.n <= n.cap <= MAX_CHILDREN, "inner child count")
        _require(_children_offset(n.depth) + n.cap * sizeof(RadixChild)
                 <= malloc_usable_size(n), "inner cap beyond its block")
        ch = _children(n)
        _require(ch[0].lo == 0, "first child range does not start at 0")
        for i in range(n.n):
            _require(i == 0 or ch[i].lo > ch[i - 1].lo, "child ranges out of order")
            path[h].node = n
            path[h].idx = i
            _check_node(t, ch[i].ptr, ch[i].is_inner, path, h + 1, prev, have_prev,
                        count, nbytes)
        return 0
    b = <RadixBucket*>node
    _require(1 <= b.count <= b.cap <= t.bucket_max, "bucket count/cap")
    _require(b.head + b.count <= b.cap, "bucket entries beyond cap")
    _require(_bucket_size(t, b.cap) <= malloc_usable_size(b), "bucket cap beyond its block")
    for i in range(b.count):
        k = _entry(t, b, i)
        for lv in range(h):
            n = path[lv].node
            ch = _children(n)
            idx = path[lv].idx
            _require(memcmp(k, _prefix(n), n.depth) == 0, "key outside an inner prefix")
            _require(k[n.depth] >= ch[idx].lo
                     and (idx + 1 == n.n or k[n.depth] < ch[idx + 1].lo),
                     "key outside its child range")
        _require(not have_prev[0] or memcmp(prev, k, t.key_len) < 0,
                 "keys not strictly increasing")
        memcpy(prev, k, t.key_len)
        have_prev[0] = 1
    count[0] += b.count
    return 0


cdef bint _finger_in(void* node, bint is_inner, RadixInner* parent, uint32_t idx,
                     const RadixFinger* f, bint rightmost) noexcept:
    """Whether the subtree holds f's bucket, at the slot and rightmost-ness f says (the
    walk only compares addresses: a stale finger is never dereferenced)."""
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef uint32_t i
    if not is_inner:
        return (node == f.bucket and parent == f.parent and idx == f.idx
                and rightmost == f.rightmost)
    n = <RadixInner*>node
    ch = _children(n)
    for i in range(n.n):
        if _finger_in(ch[i].ptr, ch[i].is_inner, n, i, f, rightmost and i + 1 == n.n):
            return 1
    return 0


cdef int _stats(RadixTree* t, void* node, bint is_inner, uint32_t h, dict out) except -1:
    cdef RadixInner* n
    cdef RadixChild* ch
    cdef RadixBucket* b
    cdef uint32_t i
    if h > out["height"]:
        out["height"] = h
    if is_inner:
        n = <RadixInner*>node
        out["inner"] += 1
        out["inner_bytes"] += malloc_usable_size(n)
        ch = _children(n)
        for i in range(n.n):
            _stats(t, ch[i].ptr, ch[i].is_inner, h + 1, out)
    else:
        b = <RadixBucket*>node
        out["buckets"] += 1
        out["bucket_bytes"] += malloc_usable_size(b)
        out["slack_entries"] += b.cap - b.count
    return 0


cdef class RadixTestTree:
    """A tree of bytes keys/values for tests. bucket_max > 0 shrinks the buckets so a
    few keys exercise bursts, merges and deep paths."""
    cdef RadixTree* t

    def __cinit__(self, uint32_t key_len, uint32_t value_len=0, uint32_t bucket_max=0):
        self.t = radix_new(key_len, value_len)
        if 0 < bucket_max < self.t.bucket_max:
            self.t.bucket_max = bucket_max

    def __dealloc__(self):
        radix_free(self.t)

    cdef const uint8_t* _key(self, bytes key) except NULL:
        if len(key) != self.t.key_len:
            raise ValueError(f"key must be {self.t.key_len} bytes")
        return <const uint8_t*><const char*>key

    cdef const void* _value(self, bytes value) except NULL:
        if len(value) != self.t.value_len:
            raise ValueError(f"value must be {self.t.value_len} bytes")
        return <const char*>value

    def clone(self):
        """A RadixTestTree holding radix_clone of this tree."""
        cdef RadixTestTree out = RadixTestTree(self.t.key_len, self.t.value_len)
        radix_free(out.t)
        out.t = NULL
        out.t = radix_clone(self.t)
        return out

    @property
    def count(self):
        return radix_count(self.t)

    @property
    def bytes_used(self):
        return radix_bytes(self.t)

    @property
    def bucket_max(self):
        return self.t.bucket_max

    def insert(self, bytes key, bytes value=b""):
        return radix_insert(self.t, self._key(key), self._value(value)) == 1

    def try_insert(self, bytes key, bytes value=b""):
        return radix_try_insert(self.t, self._key(key), self._value(value)) == 1

    def find(self, bytes key):
        cdef void* p = radix_find(self.t, self._key(key))
        if p == NULL:
            return None
        return (<char*>p)[:self.t.value_len]

    def remove(self, bytes key):
        """The removed value, or None if absent."""
        cdef uint8_t buf[RADIX_MAX_VALUE]
        if not radix_remove(self.t, self._key(key), buf):
            return None
        return (<char*>buf)[:self.t.value_len]

    def remove_first(self, uint64_t n):
        """How many of the n smallest keys were removed (radix_remove_first)."""
        return radix_remove_first(self.t, n)

    def _range(self, str op, object key, int limit, bint forward):
        cdef RadixIter it
        cdef RadixSeekOp o = _seek_op(op, key)
        cdef list out = []
        cdef const uint8_t* k = NULL
        if key is not None:
            k = self._key(key)
        radix_iter_init(&it, self.t)
        ok = radix_seek(&it, o, k)
        while ok and limit != 0:
            out.append(((<char*>it.key)[:self.t.key_len],
                        (<char*>it.value)[:self.t.value_len]))
            limit -= 1
            ok = radix_next(&it) if forward else radix_prev(&it)
        return out

    def range_forward(self, str op="first", key=None, int limit=-1):
        """(key, value) pairs from seek(op, key) on, stepping with next."""
        return self._range(op, key, limit, 1)

    def range_backward(self, str op="last", key=None, int limit=-1):
        """(key, value) pairs from seek(op, key) on, stepping with prev."""
        return self._range(op, key, limit, 0)

    def delete_while_iterating(self, str op, key, bint forward, pattern):
        """Walks from seek(op, key), removing the current key at step i when
        pattern[i % len(pattern)] is true. Returns the keys visited."""
        cdef RadixIter it
        cdef RadixSeekOp o = _seek_op(op, key)
        cdef list out = []
        cdef Py_ssize_t i = 0
        cdef const uint8_t* k = NULL
        if key is not None:
            k = self._key(key)
        radix_iter_init(&it, self.t)
        ok = radix_seek(&it, o, k)
        while ok:
            out.append((<char*>it.key)[:self.t.key_len])
            if pattern[i % len(pattern)]:
                radix_remove(self.t, it.key, NULL)
            i += 1
            ok = radix_next(&it) if forward else radix_prev(&it)
        return out

    def prefetch(self, keys):
        """radix_locate_many over keys (must change nothing), then checks that
        radix_find_at from each hint finds what radix_find does."""
        cdef bytes packed = b"".join([bytes(k) for k in keys])
        cdef uint32_t n = len(keys), j
        cdef RadixHint* hints
        cdef const uint8_t* key
        if len(packed) != n * self.t.key_len:
            raise ValueError(f"keys must be {self.t.key_len} bytes")
        hints = <RadixHint*>mem_alloc(max(n, 1) * sizeof(RadixHint))
        try:
            radix_locate_many(self.t, <const uint8_t*><const char*>packed, n, hints)
            for j in range(n):
                key = <const uint8_t*><const char*>packed + j * self.t.key_len
                _require(radix_find_at(self.t, key, &hints[j]) == radix_find(self.t, key),
                         "radix_find_at disagrees with radix_find")
        finally:
            mem_free(hints)

    def floor_many(self, keys):
        """radix_floor of each key in turn, with one cursor carried from key to key:
        (floor key or None, next key in its bucket or None) pairs."""
        cdef RadixHint cursor
        cdef const uint8_t* nxt
        cdef const uint8_t* e
        cdef list out = []
        cursor.finger.bucket = NULL
        for key in keys:
            e = radix_floor(self.t, self._key(key), &nxt, &cursor)
            out.append((None if e == NULL else (<char*>e)[:self.t.key_len],
                        None if e == NULL or nxt == NULL else (<char*>nxt)[:self.t.key_len]))
        return out

    def iterator(self):
        return RadixTestIter(self)

    def check(self):
        """Raises AssertionError unless every structural invariant holds."""
        cdef RadixFrame path[RADIX_MAX_KEY]
        cdef uint8_t prev[RADIX_MAX_KEY]
        cdef bint have_prev = 0
        cdef uint64_t count = 0, nbytes = malloc_usable_size(self.t)
        if self.t.spare != NULL:
            _require(self.t.root == NULL, "a spare bucket beside a root")
            nbytes += malloc_usable_size(self.t.spare)
        if self.t.root != NULL:
            _check_node(self.t, self.t.root, self.t.root_is_inner, path, 0, prev,
                        &have_prev, &count, &nbytes)
        _require(count == self.t.count, f"count {self.t.count} != {count} stored")
        _require(nbytes == self.t.bytes, f"bytes {self.t.bytes} != {nbytes} owned")
        for i in range(2):
            _require(self.t.finger[i].bucket == NULL or (
                self.t.root != NULL and _finger_in(self.t.root, self.t.root_is_inner, NULL,
                                                   0, &self.t.finger[i], 1)),
                f"finger {i} does not match the tree")

    @property
    def header_bytes(self):
        """Bytes of the tree's own header: all an emptied tree holds but its spare."""
        return malloc_usable_size(self.t)

    @property
    def spare_bytes(self):
        """Bytes of the spare root bucket an emptied tree keeps (0 when none)."""
        return malloc_usable_size(self.t.spare) if self.t.spare != NULL else 0

    def fingers(self):
        """For tests: which fingers are set, as (insert finger, remove finger) booleans."""
        return (self.t.finger[0].bucket != NULL, self.t.finger[1].bucket != NULL)

    def stats(self):
        """Node counts and sizes, for memory reports."""
        out = {"inner": 0, "inner_bytes": 0, "buckets": 0, "bucket_bytes": 0,
               "slack_entries": 0, "height": 0}
        if self.t.root != NULL:
            _stats(self.t, self.t.root, self.t.root_is_inner, 0, out)
        return out


cdef class RadixTestIter:
    """A RadixIter that lives across Python calls (and tree changes)."""
    cdef RadixTestTree tree
    cdef RadixIter it

    def __cinit__(self, RadixTestTree tree):
        self.tree = tree
        radix_iter_init(&self.it, tree.t)

    def seek(self, str op, key=None):
        cdef RadixSeekOp o = _seek_op(op, key)
        cdef const uint8_t* k = NULL
        if key is not None:
            k = self.tree._key(key)
        return radix_seek(&self.it, o, k) == 1

    def next(self):
        return radix_next(&self.it) == 1

    def prev(self):
        return radix_prev(&self.it) == 1

    @property
    def key(self):
        if not self.it.positioned:
            return None
        return (<char*>self.it.key)[:self.tree.t.key_len]

    cdef void* _current(self) except NULL:
        if not self.it.positioned or self.it.version != self.tree.t.version:
            raise RuntimeError("iterator not positioned on an unchanged tree")
        return self.it.value

    @property
    def value(self):
        return (<char*>self._current())[:self.tree.t.value_len]

    def set_value(self, bytes value):
        """Overwrites the current value in place through it.value."""
        memcpy(self._current(), self.tree._value(value), self.tree.t.value_len)
