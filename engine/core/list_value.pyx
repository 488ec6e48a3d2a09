"""A list value in C memory (see list_value.pxd): a chain of listpack nodes, one while
the list is a listpack, bounded per node by list-max-listpack-size once it is a
quicklist (-1..-5: 4, 8, 16, 32, 64 KB of listpack; a positive n: n entries and at
most 8 KB), with the nodes beyond list-compress-depth from either end LZF-compressed.
Conversions follow Redis 7.2's t_list.c: a push (LPUSH, LINSERT, LSET, LMOVE's target)
that would take the listpack past the limit makes it a quicklist first; a shrink
(pops, LREM, LTRIM, LSET) leaves it a listpack again when one node is left at no more
than half the limit. Sizes are counted as Redis counts its listpacks (our header is two
bytes longer), so the same history gives the same encoding."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, uint64_t

from engine.core.encoding_limits cimport EncodingLimits, DEFAULT_LIMITS
from engine.core.listpack cimport (
    LpEntry, lp_append, lp_bytes, lp_count, lp_delete, lp_end, lp_equals, lp_first, lp_get,
    lp_get_bytes, lp_insert, lp_last, lp_new, lp_next, lp_prev, lp_replace, lp_seek,
    lp_string, lp_text_bytes)
from engine.core.lzf cimport lzf_compress, lzf_decompress_to
from engine.core.memory cimport mem_alloc, mem_free, mem_realloc
from libc.string cimport memcpy

OBJECT_OVERHEAD = 80          # the value object itself (its nodes are counted apart)

DEF LP_HEADER_EXTRA = 2       # our listpack header's bytes beyond Redis's 6
DEF SIZE_SAFETY_LIMIT = 8192  # a node's bytes under a positive (count) limit
DEF SIZE_ESTIMATE_OVERHEAD = 8  # what one entry may add beyond its string (Redis's guess)
DEF MIN_COMPRESS_BYTES = 48   # smaller nodes are not worth compressing
DEF MIN_COMPRESS_IMPROVE = 8  # compression must save this much to be kept
DEF EMPTY_LISTPACK = 7        # an empty listpack's bytes as Redis counts them


cdef inline void node_limit(int fill, uint64_t* size, uint64_t* count) noexcept:
    """A node's bounds under list-max-listpack-size `fill` (no bound: UINT64_MAX)."""
    cdef int level
    size[0] = <uint64_t>-1
    count[0] = <uint64_t>-1
    if fill >= 0:
        count[0] = fill if fill else 1
    else:
        level = -fill - 1
        if level > 4:
            level = 4
        size[0] = <uint64_t>4096 << level


cdef inline bint exceeds(int fill, uint64_t size, uint64_t count) noexcept:
    """Whether a node of `size` bytes (Redis's count) and `count` entries is too big."""
    cdef uint64_t size_limit, count_limit
    node_limit(fill, &size_limit, &count_limit)
    if size_limit != <uint64_t>-1:
        return size > size_limit
    return size > SIZE_SAFETY_LIMIT or count > count_limit


cdef inline uint64_t node_size(QNode* n) noexcept:
    """The node's listpack bytes as Redis counts them."""
    return (n.raw_len if n.raw_len else lp_bytes(n.lp)) - LP_HEADER_EXTRA


cdef inline uint32_t entry_length(const unsigned char* lp, size_t off) noexcept:
    """The length of the entry's text."""
    cdef LpEntry e
    cdef uint32_t n
    lp_get(lp, off, &e)
    lp_string(&e, &n)
    return n


cdef QNode* node_new(unsigned char* lp) except NULL:
    """A node holding lp (a new empty listpack when NULL)."""
    cdef QNode* n = <QNode*>mem_alloc(sizeof(QNode))
    n.prev = n.next = NULL
    n.lp = lp if lp != NULL else lp_new()
    n.count = lp_count(n.lp)
    n.raw_len = n.lzf_len = 0
    n.incompressible = False
    return n


cdef void node_free(QNode* n) noexcept:
    mem_free(n.lp)
    mem_free(n)


cdef int node_raw(QNode* n) except -1:
    """Decompresses the node in place (no-op when it is not compressed)."""
    cdef unsigned char* buf
    if n.raw_len == 0:
        return 0
    buf = <unsigned char*>mem_alloc(n.raw_len)
    if not lzf_decompress_to(n.lp, n.lzf_len, buf, n.raw_len):
        mem_free(buf)
        raise SystemError("a compressed list node does not decompress")
    mem_free(n.lp)
    n.lp = buf
    n.raw_len = n.lzf_len = 0
    return 0


cdef inline int node_write(QNode* n) except -1:
    """Makes the node ready for a change (its content may then compress again)."""
    node_raw(n)
    n.incompressible = False
    return 0


cdef int node_compress(QNode* n) except -1:
    cdef uint32_t size, k
    cdef unsigned char* buf
    if n.raw_len or n.incompressible:
        return 0
    size = lp_bytes(n.lp)
    n.incompressible = True
    if size < MIN_COMPRESS_BYTES:
        return 0
    buf = <unsigned char*>mem_alloc(size)
    k = <uint32_t>lzf_compress(n.lp, size, buf, size - MIN_COMPRESS_IMPROVE)
    if k == 0:
        mem_free(buf)
        return 0
    mem_free(n.lp)
    n.lp = <unsigned char*>mem_realloc(buf, k)
    n.raw_len = size
    n.lzf_len = k
    n.incompressible = False
    return 0


cdef QNode* node_copy(QNode* n) except NULL:
    cdef size_t size = n.lzf_len if n.raw_len else lp_bytes(n.lp)
    cdef QNode* out = <QNode*>mem_alloc(sizeof(QNode))
    memcpy(out, n, sizeof(QNode))
    out.prev = out.next = NULL
    out.lp = <unsigned char*>mem_alloc(size)
    memcpy(out.lp, n.lp, size)
    return out


cdef int cursor_load(QCursor* c, QNode* n) except -1:
    """Points the cursor at node n (readable; decompressed into its own copy)."""
    if c.copy != NULL:
        mem_free(c.copy)
        c.copy = NULL
    c.node = n
    if n.raw_len:
        c.copy = <unsigned char*>mem_alloc(n.raw_len)
        if not lzf_decompress_to(n.lp, n.lzf_len, c.copy, n.raw_len):
            raise SystemError("a compressed list node does not decompress")
        c.lp = c.copy
    else:
        c.lp = n.lp
    return 0


cdef int cursor_next(QCursor* c) except -1:
    """The next entry in the cursor's direction; off 0 when there is none."""
    if c.forward:
        c.off = lp_next(c.lp, c.off)
        if c.off == 0 and c.node.next != NULL:
            cursor_load(c, c.node.next)
            c.off = lp_first(c.lp)
    else:
        c.off = lp_prev(c.lp, c.off)
        if c.off == 0 and c.node.prev != NULL:
            cursor_load(c, c.node.prev)
            c.off = lp_last(c.lp)
    return 0


cdef void cursor_close(QCursor* c) noexcept:
    if c.copy != NULL:
        mem_free(c.copy)
        c.copy = NULL
    c.off = 0


cdef class ListValue:
    """The elements of a list, head first."""

    TYPE_NAME = b"list"

    def __cinit__(self):
        self.fill = -2

    def __init__(self, items=(), EncodingLimits limits=None):
        cdef list elements = items if type(items) is list else list(items)
        if elements:
            self.push_all(elements, 0, False, DEFAULT_LIMITS if limits is None else limits)

    def __dealloc__(self):
        cdef QNode* n = self.head
        cdef QNode* nxt
        while n != NULL:
            nxt = n.next
            node_free(n)
            n = nxt

    def __len__(self):
        return self.length

    def __iter__(self):
        return iter(self.range(0, self.length - 1))

    def encoding(self) -> bytes:
        return b"quicklist" if self.quick else b"listpack"

    def footprint(self) -> int:
        """The object itself: its nodes live in counted C memory (used_memory has them
        already)."""
        return OBJECT_OVERHEAD

    def memory_bytes(self) -> int:
        """Its C memory (MEMORY USAGE adds it to the footprint)."""
        cdef QNode* n = self.head
        cdef uint64_t total = 0
        while n != NULL:
            total += sizeof(QNode) + (n.lzf_len if n.raw_len else lp_bytes(n.lp))
            n = n.next
        return total

    def node_shapes(self) -> list:
        """(entries, listpack bytes as Redis counts them, compressed) of each node, head
        first: what the node bounds and list-compress-depth made of the list."""
        cdef QNode* n = self.head
        cdef list out = []
        while n != NULL:
            out.append((n.count, node_size(n), n.raw_len != 0))
            n = n.next
        return out

    def copy(self) -> ListValue:
        cdef ListValue out = ListValue.__new__(ListValue)
        cdef QNode* n = self.head
        cdef QNode* c
        while n != NULL:
            c = node_copy(n)
            out.link(out.tail, c, True)
            n = n.next
        out.length, out.nbytes = self.length, self.nbytes
        out.quick, out.fill, out.depth = self.quick, self.fill, self.depth
        return out

    # the chain

    cdef void link(self, QNode* at, QNode* n, bint after) noexcept:
        """Links n after (or before) node `at`; at NULL: as the tail (head)."""
        if at == NULL:
            at = self.tail if after else self.head
            if at == NULL:
                self.head = self.tail = n
                self.nodes += 1
                return
        if after:
            n.prev, n.next = at, at.next
            if at.next != NULL:
                at.next.prev = n
            else:
                self.tail = n
            at.next = n
        else:
            n.prev, n.next = at.prev, at
            if at.prev != NULL:
                at.prev.next = n
            else:
                self.head = n
            at.prev = n
        self.nodes += 1

    cdef void unlink(self, QNode* n) noexcept:
        """Takes n out of the chain and frees it."""
        if n.prev != NULL:
            n.prev.next = n.next
        else:
            self.head = n.next
        if n.next != NULL:
            n.next.prev = n.prev
        else:
            self.tail = n.prev
        node_free(n)
        self.nodes -= 1

    cdef QNode* locate(self, int64_t index, uint32_t* at) noexcept:
        """The node of entry `index` (0..length-1), walked to from the nearer end node
        by node, and the entry's index in it."""
        cdef QNode* n
        cdef int64_t i
        if index <= self.length - 1 - index:
            n, i = self.head, index
            while i >= n.count:
                i -= n.count
                n = n.next
            at[0] = <uint32_t>i
        else:
            n, i = self.tail, self.length - 1 - index
            while i >= n.count:
                i -= n.count
                n = n.prev
            at[0] = <uint32_t>(n.count - 1 - i)
        return n

    cdef bint interior(self, QNode* n) noexcept:
        """Whether n lies deeper than list-compress-depth from both ends."""
        cdef QNode* a = self.head
        cdef QNode* b = self.tail
        cdef int i
        if not self.quick or self.depth <= 0 or self.nodes <= 2 * <int64_t>self.depth:
            return False
        for i in range(self.depth):
            if a == n or b == n:
                return False
            a, b = a.next, b.prev
        return True

    cdef int settle(self, QNode* n) except -1:
        """Compresses n again if it is an interior node (after a change in the middle)."""
        if self.interior(n):
            node_compress(n)
        return 0

    cdef int compress_ends(self) except -1:
        """After the chain changed at its ends: the depth nodes at each end plain, the
        next ones compressed (Redis's __quicklistCompress)."""
        cdef QNode* a = self.head
        cdef QNode* b = self.tail
        cdef int i
        if not self.quick or self.depth <= 0:
            return 0
        for i in range(self.depth):
            if a == NULL:
                return 0
            node_raw(a)
            node_raw(b)
            a, b = a.next, b.prev
        if self.nodes > 2 * <int64_t>self.depth:
            node_compress(a)
            node_compress(b)
        return 0

    # conversions

    cdef int grow_check(self, int64_t add_bytes, int64_t add_count,
                        EncodingLimits limits) except -1:
        """Before adding add_count elements of add_bytes: a listpack that would pass
        the limit becomes a quicklist (Redis's listTypeTryConvertListpack)."""
        cdef uint64_t size = node_size(self.head) if self.head != NULL else EMPTY_LISTPACK
        cdef uint64_t count = self.head.count if self.head != NULL else 0
        if self.quick:
            return 0
        if exceeds(limits.list_max_listpack_size, size + add_bytes, count + add_count):
            self.quick = True
            self.fill = limits.list_max_listpack_size
            self.depth = limits.list_compress_depth
        return 0

    cdef int shrink_check(self, EncodingLimits limits) except -1:
        """After removals: a quicklist of one node at no more than half the limit is a
        listpack again (Redis's listTypeTryConvertQuicklist)."""
        cdef uint64_t size_limit, count_limit
        if not self.quick or self.nodes != 1:
            return 0
        node_limit(limits.list_max_listpack_size, &size_limit, &count_limit)
        if node_size(self.head) <= size_limit // 2 and <uint64_t>self.length <= count_limit // 2:
            node_raw(self.head)
            self.quick = False
        return 0

    # changes

    cdef int push_one(self, const unsigned char* s, size_t n, bint left) except -1:
        cdef QNode* node = self.head if left else self.tail
        if node == NULL or (self.quick and exceeds(self.fill,
                                                   node_size(node) + n + SIZE_ESTIMATE_OVERHEAD,
                                                   node.count + 1)):
            node = node_new(NULL)
            self.link(NULL, node, not left)
            self.compress_ends()              # the node it pushed inwards may compress now
        node_write(node)
        lp_insert(&node.lp, lp_first(node.lp) or lp_end(node.lp) if left else lp_end(node.lp),
                  s, n)
        node.count += 1
        self.length += 1
        self.nbytes += n
        return 0

    cdef int push_all(self, list elements, Py_ssize_t start, bint left,
                      EncodingLimits limits) except -1:
        """Pushes elements[start:] one by one at the head (`left`) or the tail."""
        cdef Py_ssize_t i, total = 0
        cdef bytes e
        for i in range(start, len(elements)):
            total += PyBytes_GET_SIZE(<bytes>elements[i])
        self.grow_check(total, len(elements) - start, limits)
        for i in range(start, len(elements)):
            e = <bytes>elements[i]
            self.push_one(<const unsigned char*>PyBytes_AS_STRING(e), PyBytes_GET_SIZE(e), left)
        self.compress_ends()
        return 0

    cdef int take(self, int64_t count, bint left, list out) except -1:
        """Removes up to count elements from one end, appended to `out` (None: dropped)
        in the order they leave."""
        cdef QNode* node
        cdef uint32_t k, i
        cdef size_t off, start
        while count > 0 and self.head != NULL:
            node = self.head if left else self.tail
            node_write(node)
            k = node.count if <int64_t>node.count <= count else <uint32_t>count
            off = lp_first(node.lp) if left else lp_last(node.lp)
            start = off
            for i in range(k):
                start = off
                self.nbytes -= entry_length(node.lp, off)
                if out is not None:
                    out.append(lp_get_bytes(node.lp, off))
                off = lp_next(node.lp, off) if left else lp_prev(node.lp, off)
            self.length -= k
            count -= k
            if k == node.count:
                self.unlink(node)
            else:
                lp_delete(&node.lp, lp_first(node.lp) if left else start, k)
                node.count -= k
        self.compress_ends()
        return 0

    def push(self, list elements, bint left, EncodingLimits limits=None) -> None:
        """Pushes each element in turn at the head (`left`) or the tail."""
        self.push_all(elements, 0, left, DEFAULT_LIMITS if limits is None else limits)

    def pop(self, int64_t count, bint left, EncodingLimits limits=None) -> list:
        """Up to `count` elements from one end, in the order they left."""
        cdef list out = []
        self.take(count, left, out)
        self.shrink_check(DEFAULT_LIMITS if limits is None else limits)
        return out

    def set(self, int64_t index, bytes element, EncodingLimits limits=None) -> None:
        """Replaces the element at index (0..len-1)."""
        if not 0 <= index < self.length:
            raise IndexError("list index out of range")
        self.set_at(index, element, DEFAULT_LIMITS if limits is None else limits)

    def insert(self, bytes pivot, bytes element, bint after, EncodingLimits limits=None) -> int:
        """LINSERT: the new length, or -1 when pivot is not there."""
        return self.insert_at_pivot(pivot, element, after,
                                    DEFAULT_LIMITS if limits is None else limits)

    def remove(self, bytes element, int64_t count, EncodingLimits limits=None) -> int:
        """LREM (see remove_matches): how many went."""
        return self.remove_matches(element, count, DEFAULT_LIMITS if limits is None else limits)

    def trim(self, int64_t drop_head, int64_t drop_tail, EncodingLimits limits=None) -> None:
        """LTRIM: drops elements from both ends."""
        self.take(drop_head, True, None)
        self.take(drop_tail, False, None)
        self.shrink_check(DEFAULT_LIMITS if limits is None else limits)

    cdef int insert_in(self, QNode* node, uint32_t i, const unsigned char* s, size_t n) except -1:
        """Inserts s as entry i (0..count) of node, splitting the node when it is full
        (Redis's _quicklistInsert)."""
        cdef QNode* other
        cdef QNode* right
        cdef uint64_t add = n + SIZE_ESTIMATE_OVERHEAD
        cdef size_t off
        self.length += 1
        self.nbytes += n
        if not self.quick or not exceeds(self.fill, node_size(node) + add, node.count + 1):
            self.insert_entry(node, i, s, n)
            return self.settle(node)
        other = node.prev if i == 0 else node.next if i == node.count else NULL
        if other != NULL and not exceeds(self.fill, node_size(other) + add, other.count + 1):
            self.insert_entry(other, other.count if i == 0 else 0, s, n)
            return self.settle(other)
        if i == 0 or i == node.count:
            other = node_new(NULL)
            self.link(node, other, i != 0)
            self.insert_entry(other, 0, s, n)
            return self.settle(other)
        node_write(node)                      # split: entries i.. move to a node after it
        right = node_new(NULL)
        off = lp_seek(node.lp, i)
        while off:
            self.copy_entry(right, node.lp, off)
            off = lp_next(node.lp, off)
        lp_delete(&node.lp, lp_seek(node.lp, i), node.count - i)
        node.count = i
        self.link(node, right, True)
        if not exceeds(self.fill, node_size(node) + add, node.count + 1):
            self.insert_entry(node, node.count, s, n)
        elif not exceeds(self.fill, node_size(right) + add, right.count + 1):
            self.insert_entry(right, 0, s, n)
        else:
            other = node_new(NULL)
            self.link(node, other, True)
            self.insert_entry(other, 0, s, n)
            self.settle(other)
        self.settle(node)
        self.settle(right)
        self.merge(right, right.next)
        self.merge(node.prev, node)           # (last: it may free node)
        return 0

    cdef int copy_entry(self, QNode* dst, const unsigned char* lp, size_t off) except -1:
        """Appends entry `off` of lp to dst's listpack."""
        cdef LpEntry e
        cdef uint32_t n
        cdef const unsigned char* s
        lp_get(lp, off, &e)
        s = lp_string(&e, &n)
        lp_append(&dst.lp, s, n)
        dst.count += 1
        return 0

    cdef int insert_entry(self, QNode* node, uint32_t i, const unsigned char* s,
                          size_t n) except -1:
        node_write(node)
        lp_insert(&node.lp, lp_seek(node.lp, i) if i < node.count else lp_end(node.lp), s, n)
        node.count += 1
        return 0

    cdef int merge(self, QNode* a, QNode* b) except -1:
        """Merges b into a (its predecessor) when the two fit in one node."""
        cdef size_t off
        if a == NULL or b == NULL or not self.quick:
            return 0
        if exceeds(self.fill, node_size(a) + node_size(b) - 7, <uint64_t>a.count + b.count):
            return 0
        node_write(a)
        node_write(b)
        off = lp_first(b.lp)
        while off:
            self.copy_entry(a, b.lp, off)
            off = lp_next(b.lp, off)
        self.unlink(b)
        return self.settle(a)

    cdef int set_at(self, int64_t index, bytes element, EncodingLimits limits) except -1:
        """LSET of entry index (0..length-1)."""
        cdef uint32_t i
        cdef QNode* node
        cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(element)
        cdef size_t n = PyBytes_GET_SIZE(element), off
        cdef uint32_t old
        cdef bint emptied
        self.grow_check(n, 1, limits)
        node = self.locate(index, &i)
        node_write(node)
        off = lp_seek(node.lp, i)
        old = entry_length(node.lp, off)
        if not self.quick or not exceeds(self.fill, node_size(node) + n + SIZE_ESTIMATE_OVERHEAD
                                         - old, node.count):
            lp_replace(&node.lp, off, s, n)
            self.nbytes += <int64_t>n - old
            self.settle(node)
        else:
            lp_delete(&node.lp, off, 1)
            node.count -= 1
            self.length -= 1
            self.nbytes -= old
            emptied = node.count == 0         # then insert_in never splits (or frees) it
            self.insert_in(node, i, s, n)
            if emptied and node.count == 0:
                self.unlink(node)
        self.compress_ends()
        return self.shrink_check(limits)

    cdef int64_t insert_at_pivot(self, bytes pivot, bytes element, bint after,
                                 EncodingLimits limits) except -2:
        """LINSERT: the new length, or -1 when pivot is not there."""
        cdef QCursor c
        cdef QNode* node
        cdef uint32_t i = 0
        cdef const unsigned char* p = <const unsigned char*>PyBytes_AS_STRING(pivot)
        cdef size_t pn = PyBytes_GET_SIZE(pivot)
        self.grow_check(PyBytes_GET_SIZE(element), 1, limits)
        if not self.seek(0, &c, True):
            return -1
        try:
            node = c.node
            while c.off:
                if lp_equals(c.lp, c.off, p, pn):
                    break
                cursor_next(&c)
                i += 1
                if c.node != node:
                    node, i = c.node, 0
            if c.off == 0:
                return -1
        finally:
            cursor_close(&c)
        self.insert_in(node, i + 1 if after else i,
                       <const unsigned char*>PyBytes_AS_STRING(element), PyBytes_GET_SIZE(element))
        self.compress_ends()
        return self.length

    cdef int64_t remove_matches(self, bytes element, int64_t count,
                                EncodingLimits limits) except -1:
        """LREM: up to |count| occurrences from the head (from the tail when count is
        negative, all when 0); how many went."""
        cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(element)
        cdef size_t n = PyBytes_GET_SIZE(element), off, prev
        cdef bint forward = count >= 0
        cdef uint64_t limit = <uint64_t>(count if count >= 0 else -count) if count else <uint64_t>-1
        cdef uint64_t removed = 0
        cdef QNode* node = self.head if forward else self.tail
        cdef QNode* nxt
        cdef QCursor c
        while node != NULL and removed < limit:
            nxt = node.next if forward else node.prev
            c.copy = NULL
            cursor_load(&c, node)               # a look first: most nodes have no match
            off = lp_first(c.lp)
            while off and not lp_equals(c.lp, off, s, n):
                off = lp_next(c.lp, off)
            cursor_close(&c)
            if off:
                node_write(node)
                off = lp_first(node.lp) if forward else lp_last(node.lp)
                while off and removed < limit:
                    prev = lp_prev(node.lp, off)
                    if lp_equals(node.lp, off, s, n):
                        lp_delete(&node.lp, off, 1)
                        node.count -= 1
                        removed += 1
                        if forward:
                            off = off if node.lp[off] != 0xFF else 0
                            continue
                    off = lp_next(node.lp, off) if forward else prev
                if node.count == 0:
                    self.unlink(node)
                else:
                    self.settle(node)
            node = nxt
        self.length -= removed
        self.nbytes -= removed * n
        self.compress_ends()
        self.shrink_check(limits)
        return removed

    # reading

    cdef bint seek(self, int64_t index, QCursor* c, bint forward) except -1:
        """Points c at entry index (0..length-1), to walk on in `forward` direction;
        False when the list is empty. Close it with cursor_close."""
        cdef uint32_t i
        cdef QNode* node
        c.copy = NULL
        c.off = 0
        c.forward = forward
        if self.head == NULL or index < 0 or index >= self.length:
            return False
        node = self.locate(index, &i)
        cursor_load(c, node)
        c.off = lp_seek(c.lp, i)
        return True

    cdef object get(self, int64_t index):
        """The element at index (0..length-1)."""
        cdef QCursor c
        if not self.seek(index, &c, True):
            return None
        try:
            return lp_get_bytes(c.lp, c.off)
        finally:
            cursor_close(&c)

    cdef list range(self, int64_t start, int64_t end):
        """The elements start..end (0 <= start, end < length), in order."""
        cdef QCursor c
        cdef list out = []
        cdef int64_t k = end - start + 1
        if k <= 0 or not self.seek(start, &c, True):
            return out
        try:
            while k > 0 and c.off:
                out.append(lp_get_bytes(c.lp, c.off))
                cursor_next(&c)
                k -= 1
        finally:
            cursor_close(&c)
        return out

    cdef list positions(self, bytes element, int64_t rank, int64_t count, int64_t maxlen):
        """LPOS: the indexes of matches, the |rank|-th on (from the tail when rank is
        negative), at most `count` of them (0: all), looking at `maxlen` (0: all)."""
        cdef QCursor c
        cdef list found = []
        cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(element)
        cdef size_t n = PyBytes_GET_SIZE(element)
        cdef int64_t skip = (rank if rank > 0 else -rank) - 1, i = 0
        if not self.seek(0 if rank > 0 else self.length - 1, &c, rank > 0):
            return found
        try:
            while c.off and not (maxlen and i >= maxlen):
                if lp_equals(c.lp, c.off, s, n):
                    if skip:
                        skip -= 1
                    else:
                        found.append(i if rank > 0 else self.length - 1 - i)
                        if count and <int64_t>len(found) >= count:
                            break
                cursor_next(&c)
                i += 1
        finally:
            cursor_close(&c)
        return found

    def slice(self, int64_t start, int64_t end) -> list:
        """The elements start..end (0 <= start, end < len), in order."""
        return self.range(start, end)

    def find(self, bytes element, int64_t rank, int64_t count, int64_t maxlen) -> list:
        """LPOS's indexes (see positions)."""
        return self.positions(element, rank, count, maxlen)

    # persistence

    def to_record(self) -> list:
        return self.range(0, self.length - 1)

    @classmethod
    def from_record(cls, items: list, EncodingLimits limits=None) -> ListValue:
        if not items or any(type(item) is not bytes for item in items):
            raise ValueError("a list record holds no elements, or one is not a byte string")
        return cls(items, limits)


cdef bint fit_one_listpack(int64_t text_bytes, int64_t count, EncodingLimits limits) noexcept:
    return not exceeds(limits.list_max_listpack_size, EMPTY_LISTPACK + text_bytes, count)


cdef ListValue list_of_listpack(unsigned char* lp):
    cdef ListValue out = ListValue.__new__(ListValue)
    cdef QNode* n
    try:
        n = node_new(lp)
    except MemoryError:
        mem_free(lp)
        raise
    out.link(NULL, n, True)
    out.length = n.count
    out.nbytes = lp_text_bytes(lp, 1)
    return out
