# A list value in C memory, in the encoding Redis 7.2+ would have for the same history:
# one listpack while it fits list-max-listpack-size, then a quicklist (a doubly linked
# chain of listpack nodes, each bounded by the same setting, the interior ones
# LZF-compressed beyond list-compress-depth nodes from either end), and back to one
# listpack when a single node is left at half the limit.
#
# Contract: the list is a chain of nodes in both encodings (a listpack list is one
# node); a node's `count` is its entries, readable without decompressing it. Every
# change goes through the methods below, which keep length, nbytes, the node bounds
# and the compression of interior nodes; a read never changes a node.
from libc.stdint cimport int64_t, uint32_t

from engine.core.encoding_limits cimport EncodingLimits

cdef struct QNode:
    QNode* prev
    QNode* next
    unsigned char* lp          # the listpack; its LZF form when raw_len is not 0
    uint32_t count             # entries
    uint32_t raw_len           # the listpack's bytes while compressed, else 0
    uint32_t lzf_len           # the compressed bytes while compressed
    bint incompressible        # compression failed and nothing changed since

# A cursor over the entries, one node at a time (a compressed node is read from a
# decompressed copy that the cursor owns).
cdef struct QCursor:
    QNode* node
    const unsigned char* lp    # the node's listpack, readable
    unsigned char* copy        # the decompressed copy, or NULL
    size_t off                 # the current entry; 0 when done
    bint forward

cdef class ListValue:
    cdef QNode* head
    cdef QNode* tail
    cdef readonly int64_t length
    cdef readonly int64_t nbytes      # the elements' bytes (as text)
    cdef readonly int64_t nodes
    cdef bint quick                   # a quicklist (else one listpack node)
    cdef int fill                     # the quicklist's node bound and compress depth,
    cdef int depth                    # taken from the limits when it became one

    cdef void link(self, QNode* at, QNode* n, bint after) noexcept
    cdef void unlink(self, QNode* n) noexcept
    cdef QNode* locate(self, int64_t index, uint32_t* at) noexcept
    cdef bint interior(self, QNode* n) noexcept
    cdef int settle(self, QNode* n) except -1
    cdef int compress_ends(self) except -1
    cdef int insert_in(self, QNode* node, uint32_t i, const unsigned char* s,
                       size_t n) except -1
    cdef int copy_entry(self, QNode* dst, const unsigned char* lp, size_t off) except -1
    cdef int insert_entry(self, QNode* node, uint32_t i, const unsigned char* s,
                          size_t n) except -1
    cdef int merge(self, QNode* a, QNode* b) except -1
    cdef int push_all(self, list elements, Py_ssize_t start, bint left,
                      EncodingLimits limits) except -1
    cdef int push_one(self, const unsigned char* s, size_t n, bint left) except -1
    cdef int grow_check(self, int64_t add_bytes, int64_t add_count,
                        EncodingLimits limits) except -1
    cdef int shrink_check(self, EncodingLimits limits) except -1
    cdef int take(self, int64_t count, bint left, list out) except -1
    cdef bint seek(self, int64_t index, QCursor* c, bint forward) except -1
    cdef object get(self, int64_t index)
    cdef int set_at(self, int64_t index, bytes element, EncodingLimits limits) except -1
    cdef int64_t insert_at_pivot(self, bytes pivot, bytes element, bint after,
                                 EncodingLimits limits) except -2
    cdef int64_t remove_matches(self, bytes element, int64_t count,
                                EncodingLimits limits) except -1
    cdef list range(self, int64_t start, int64_t end)
    cdef list positions(self, bytes element, int64_t rank, int64_t count, int64_t maxlen)

cdef int cursor_next(QCursor* c) except -1
cdef void cursor_close(QCursor* c) noexcept

# A listpack-encoded list owning lp, a listpack of its elements (not empty).
cdef ListValue list_of_listpack(unsigned char* lp)
# Whether `count` elements of `text_bytes` pushed on an empty list leave it a listpack.
cdef bint fit_one_listpack(int64_t text_bytes, int64_t count, EncodingLimits limits) noexcept
