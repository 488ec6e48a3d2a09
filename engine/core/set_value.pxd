# A set value in C memory, in the encoding Redis would have for the same history:
# an intset while every member is an integer and there are few, then a listpack while
# there are few and they are short, then a hash table; never back.
from libc.stdint cimport int64_t

from engine.core.encoding_limits cimport EncodingLimits
from engine.core.hashtable cimport HTable
from engine.core.intset cimport IntSet
from engine.core.members cimport MemberFn

cdef enum SetEncoding:
    SET_INTSET
    SET_LISTPACK
    SET_HASHTABLE

# The members, by the set's encoding (one pointer: the value object stays 48 bytes).
cdef union SetData:
    IntSet* ints                     # SET_INTSET
    unsigned char* lp                # SET_LISTPACK
    HTable* table                    # SET_HASHTABLE

cdef class SetValue:
    cdef SetEncoding kind
    cdef SetData d                   # NULL only while being built
    cdef readonly int64_t nbytes     # the members' bytes (as text)

    cdef bint has(self, const unsigned char* s, size_t n) noexcept
    cdef int insert(self, const unsigned char* s, size_t n, EncodingLimits limits) except -1
    cdef bint discard(self, const unsigned char* s, size_t n) except -1
    cdef void free_members(self) noexcept
    cdef int convert(self, SetEncoding kind) except -1
    cdef object random_one(self)
    # fn(ctx, member, n, 1.0) for each member, in the encoding's order, until it says stop.
    cdef int visit(self, MemberFn fn, void* ctx) except -1

# A new set for SADD of `hint` members starting with `first` (Redis's setTypeCreate).
cdef SetValue new_set(bytes first, Py_ssize_t hint, EncodingLimits limits)

# A set owning `ints` (an intset) or lp (a listpack of its members), encoded so.
cdef SetValue set_of_intset(IntSet* ints)
cdef SetValue set_of_listpack(unsigned char* lp)
