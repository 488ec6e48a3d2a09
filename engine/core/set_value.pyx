"""A set value in C memory (see set_value.pxd): an intset, a listpack of members or a
key-only hash table, converted as Redis 7.2+ converts (intset -> listpack when a
non-integer comes while the set is small, intset or listpack -> hashtable when it
grows past the limits or a long member comes; never back)."""
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE, PyBytes_FromStringAndSize
from libc.stdint cimport int64_t, uint32_t, uint64_t
from libc.stdio cimport snprintf

from engine.core.encoding_limits cimport EncodingLimits, DEFAULT_LIMITS
from engine.core.members cimport MemberFn
from engine.core.random_picks cimport pick_distinct
from engine.core.hashtable cimport (
    HEntry, HIter, ht_bytes, ht_copy, ht_count, ht_delete, ht_find, ht_free, ht_iter_init,
    ht_iter_next, ht_key, ht_new, ht_random, ht_random_u64, ht_set)
from engine.core.intset cimport (
    is_add, is_bytes, is_copy, is_find, is_free, is_get, is_len, is_new, is_remove)
from engine.core.listpack cimport (
    LpEntry, lp_append, lp_bytes, lp_copy, lp_count, lp_delete, lp_find, lp_first, lp_free,
    lp_get, lp_get_bytes, lp_new, lp_next, lp_seek, lp_string, lp_text_bytes, parse_int64)
from engine.core.memory cimport mem_free

OBJECT_OVERHEAD = 48          # the value object itself (its C data is counted apart)
ENCODING_NAMES = (b"intset", b"listpack", b"hashtable")


cdef inline int64_t _digits(int64_t v) noexcept:
    """The length of v's decimal text."""
    cdef int64_t n = 1 if v >= 0 else 2
    cdef uint64_t u = <uint64_t>(0 - <uint64_t>v) if v < 0 else <uint64_t>v
    while u >= 10:
        u //= 10
        n += 1
    return n


cdef class SetValue:
    """The members of a set. Built empty as an intset (Redis's createIntsetObject), or
    from `members` as loading a plain set builds it: a hash table from the start when
    they are more than set-max-intset-entries."""

    TYPE_NAME = b"set"

    def __cinit__(self):
        self.kind = SET_INTSET
        self.d.ints = is_new()

    def __init__(self, members=(), EncodingLimits limits=None):
        if limits is None:
            limits = DEFAULT_LIMITS
        cdef list items = list(members)
        if len(items) > limits.set_max_intset_entries:
            self.convert(SET_HASHTABLE)
        for member in items:
            self.insert(member, len(<bytes>member), limits)

    def __dealloc__(self):
        self.free_members()

    def __len__(self):
        if self.kind == SET_INTSET:
            return is_len(self.d.ints)
        if self.kind == SET_LISTPACK:
            return lp_count(self.d.lp)
        return ht_count(self.d.table)

    def __iter__(self):
        return iter(self.members())

    def __contains__(self, bytes member):
        return self.has(member, len(member))

    def encoding(self) -> bytes:
        return ENCODING_NAMES[self.kind]

    def footprint(self) -> int:
        """The object itself: its members live in counted C memory (used_memory has
        them already)."""
        return OBJECT_OVERHEAD

    def memory_bytes(self) -> int:
        """Its C memory (MEMORY USAGE adds it to the footprint)."""
        if self.kind == SET_INTSET:
            return is_bytes(self.d.ints)
        if self.kind == SET_LISTPACK:
            return lp_bytes(self.d.lp)
        return ht_bytes(self.d.table)

    def copy(self) -> SetValue:
        cdef SetValue out = SetValue.__new__(SetValue)
        out.free_members()
        out.kind = self.kind
        out.nbytes = self.nbytes
        if self.kind == SET_INTSET:
            out.d.ints = is_copy(self.d.ints)
        elif self.kind == SET_LISTPACK:
            out.d.lp = lp_copy(self.d.lp)
        else:
            out.d.table = ht_copy(self.d.table)
        return out

    # the C paths

    cdef bint has(self, const unsigned char* s, size_t n) noexcept:
        cdef int64_t v
        if self.kind == SET_INTSET:
            return parse_int64(s, n, &v) and is_find(self.d.ints, v)
        if self.kind == SET_LISTPACK:
            return lp_find(self.d.lp, lp_first(self.d.lp), s, n, 0) != 0
        return ht_find(self.d.table, s, n) != NULL

    cdef void free_members(self) noexcept:
        if self.d.lp == NULL:
            return
        if self.kind == SET_INTSET:
            is_free(self.d.ints)
        elif self.kind == SET_LISTPACK:
            lp_free(self.d.lp)
        else:
            ht_free(self.d.table)
        self.d.lp = NULL

    cdef int convert(self, SetEncoding kind) except -1:
        """Moves every member into the `kind` encoding (a later one than the current)."""
        cdef list members = self.members()
        cdef bytes m
        cdef SetData fresh
        if kind == SET_LISTPACK:
            fresh.lp = lp_new()
            try:
                for m in members:
                    lp_append(&fresh.lp, m, len(m))
            except MemoryError:
                lp_free(fresh.lp)
                raise
        else:
            fresh.table = ht_new(False)
            try:
                for m in members:
                    ht_set(fresh.table, m, len(m), NULL, 0)
            except MemoryError:
                ht_free(fresh.table)
                raise
        self.free_members()
        self.d = fresh
        self.kind = kind
        return 0

    cdef int insert(self, const unsigned char* s, size_t n, EncodingLimits limits) except -1:
        """Adds one member, converting first when Redis would; 1 when it is new."""
        cdef int64_t v
        cdef uint64_t size
        if self.kind == SET_INTSET:
            if parse_int64(s, n, &v):
                if not is_add(&self.d.ints, v):
                    return 0
                self.nbytes += n
                if is_len(self.d.ints) > limits.set_max_intset_entries:
                    self.convert(SET_HASHTABLE)
                return 1
            size = is_len(self.d.ints)
            if (<int64_t>size < limits.set_max_listpack_entries
                    and <int64_t>n <= limits.set_max_listpack_value
                    and (size == 0 or max(_digits(is_get(self.d.ints, 0)),
                                          _digits(is_get(self.d.ints, size - 1)))
                         <= limits.set_max_listpack_value)):
                self.convert(SET_LISTPACK)
            else:
                self.convert(SET_HASHTABLE)
        if self.kind == SET_LISTPACK:
            if lp_find(self.d.lp, lp_first(self.d.lp), s, n, 0):
                return 0
            if (<int64_t>lp_count(self.d.lp) < limits.set_max_listpack_entries
                    and <int64_t>n <= limits.set_max_listpack_value):
                lp_append(&self.d.lp, s, n)
                self.nbytes += n
                return 1
            self.convert(SET_HASHTABLE)
        if ht_set(self.d.table, s, n, NULL, 0):
            self.nbytes += n
            return 1
        return 0

    cdef bint discard(self, const unsigned char* s, size_t n) except -1:
        cdef int64_t v
        cdef size_t off
        cdef bint gone
        if self.kind == SET_INTSET:
            gone = parse_int64(s, n, &v) and is_remove(&self.d.ints, v)
        elif self.kind == SET_LISTPACK:
            off = lp_find(self.d.lp, lp_first(self.d.lp), s, n, 0)
            gone = off != 0
            if gone:
                lp_delete(&self.d.lp, off, 1)
        else:
            gone = ht_delete(self.d.table, s, n)
        if gone:
            self.nbytes -= n
        return gone

    cdef object random_one(self):
        cdef HEntry* e
        cdef uint64_t size = len(self)
        if size == 0:
            return None
        if self.kind == SET_INTSET:
            return b"%d" % is_get(self.d.ints, ht_random_u64() % size)
        if self.kind == SET_LISTPACK:
            return lp_get_bytes(self.d.lp, lp_seek(self.d.lp, <long>(ht_random_u64() % size)))
        e = ht_random(self.d.table)
        return PyBytes_FromStringAndSize(<const char*>ht_key(self.d.table, e), e.klen)

    cdef int visit(self, MemberFn fn, void* ctx) except -1:
        cdef uint32_t i, n
        cdef char text[24]
        cdef size_t off
        cdef LpEntry e
        cdef const unsigned char* s
        cdef HIter it
        cdef HEntry* entry
        if self.kind == SET_INTSET:
            for i in range(is_len(self.d.ints)):
                n = snprintf(text, sizeof(text), "%lld", <long long>is_get(self.d.ints, i))
                if fn(ctx, <const unsigned char*>text, n, 1.0):
                    return 0
        elif self.kind == SET_LISTPACK:
            off = lp_first(self.d.lp)
            while off:
                lp_get(self.d.lp, off, &e)
                s = lp_string(&e, &n)
                if fn(ctx, s, n, 1.0):
                    return 0
                off = lp_next(self.d.lp, off)
        else:
            ht_iter_init(self.d.table, &it)
            entry = ht_iter_next(self.d.table, &it)
            while entry != NULL and not fn(ctx, ht_key(self.d.table, entry), entry.klen, 1.0):
                entry = ht_iter_next(self.d.table, &it)
        return 0

    # changes

    def add(self, bytes member, EncodingLimits limits=None) -> bool:
        """Adds one member; True when it is new."""
        return self.insert(member, len(member), DEFAULT_LIMITS if limits is None else limits) == 1

    def add_all(self, members, EncodingLimits limits=None) -> int:
        """Adds every member (as SADD, which first converts for their number: Redis's
        setTypeMaybeConvert); the number that were new."""
        if limits is None:
            limits = DEFAULT_LIMITS
        cdef list items = members if type(members) is list else list(members)
        cdef Py_ssize_t hint = len(items), added = 0
        if ((self.kind == SET_LISTPACK and hint > limits.set_max_listpack_entries)
                or (self.kind == SET_INTSET and hint > limits.set_max_intset_entries)):
            self.convert(SET_HASHTABLE)
        for member in items:
            added += self.insert(member, len(<bytes>member), limits)
        return added

    def remove(self, bytes member) -> bool:
        """Removes one member; True when it was there."""
        return self.discard(member, len(member))

    # reading

    def members(self) -> list:
        """Every member (intsets in ascending order, listpacks in insertion order)."""
        cdef list out = []
        cdef uint64_t i
        cdef size_t off
        cdef HIter it
        cdef HEntry* e
        if self.kind == SET_INTSET:
            for i in range(is_len(self.d.ints)):
                out.append(b"%d" % is_get(self.d.ints, i))
        elif self.kind == SET_LISTPACK:
            off = lp_first(self.d.lp)
            while off:
                out.append(lp_get_bytes(self.d.lp, off))
                off = lp_next(self.d.lp, off)
        else:
            ht_iter_init(self.d.table, &it)
            while True:
                e = ht_iter_next(self.d.table, &it)
                if e == NULL:
                    break
                out.append(PyBytes_FromStringAndSize(<const char*>ht_key(self.d.table, e),
                                                     e.klen))
        return out

    def random_member(self):
        """A member chosen at random (None when empty)."""
        return self.random_one()

    def random_members(self, int64_t count) -> list:
        """`count` distinct members chosen at random (all of them when count >= size)."""
        return pick_distinct(self.members, self.random_member, len(self), count,
                             self.kind == SET_HASHTABLE)

    def random_picks(self, int64_t count) -> list:
        """`count` members chosen at random, each independently (they may repeat)."""
        return [self.random_one() for _ in range(count)]

    # persistence

    def to_record(self) -> list:
        return self.members()

    @classmethod
    def from_record(cls, items: list, EncodingLimits limits=None) -> SetValue:
        if not items or any(type(item) is not bytes for item in items):
            raise ValueError("a set record holds no members, or one is not a byte string")
        out = cls(items, limits)
        if len(out) != len(items):
            raise ValueError("a set record repeats a member")
        return out


cdef SetValue new_set(bytes first, Py_ssize_t hint, EncodingLimits limits):
    cdef SetValue out = SetValue.__new__(SetValue)
    cdef int64_t v
    if parse_int64(first, len(first), &v) and hint <= limits.set_max_intset_entries:
        return out
    out.convert(SET_LISTPACK if hint <= limits.set_max_listpack_entries else SET_HASHTABLE)
    return out


cdef SetValue set_owning(SetEncoding kind, SetData d):
    cdef SetValue out
    try:
        out = SetValue.__new__(SetValue)
    except MemoryError:
        mem_free(d.lp)
        raise
    out.free_members()
    out.kind = kind
    out.d = d
    return out


cdef SetValue set_of_intset(IntSet* ints):
    cdef SetData d
    cdef uint32_t i
    d.ints = ints
    cdef SetValue out = set_owning(SET_INTSET, d)
    for i in range(is_len(ints)):
        out.nbytes += _digits(is_get(ints, i))
    return out


cdef SetValue set_of_listpack(unsigned char* lp):
    cdef SetData d
    d.lp = lp
    cdef SetValue out = set_owning(SET_LISTPACK, d)
    out.nbytes = lp_text_bytes(lp, 1)
    return out
