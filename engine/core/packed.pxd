# A small collection packed into its key's entry: the keyspace keeps the bytes of a
# listpack- or intset-encoded list, hash, set or sorted set in the key's entry itself,
# with no value object, and makes the object (holding a copy of them) when a command
# looks the key up.

cdef enum:
    PACKED_LIST = 1
    PACKED_HASH = 2
    PACKED_INTSET = 3
    PACKED_SET_LISTPACK = 4
    PACKED_ZSET = 5

# The packed kind of value and its bytes (p, n: the value's own buffer, valid while it
# is unchanged), or 0 when it has no packed form (not a collection, or a big encoding).
cdef int packed_form(object value, const unsigned char** p, size_t* n) noexcept
# A new value object of that kind holding a copy of the n bytes at p.
cdef object unpacked(int kind, const unsigned char* p, size_t n)
