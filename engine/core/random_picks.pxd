# Distinct random picks from a collection, shared by sets (SPOP, SRANDMEMBER) and hashes
# (HRANDFIELD).

# `count` distinct items of a collection of `size`: everything() (all items, in their
# order) when count >= size; a sample of it when the collection is small (`by_entry`
# false) or most of it is wanted; else one() (a random item) until count distinct ones
# are in hand.
cdef list pick_distinct(object everything, object one, Py_ssize_t size, Py_ssize_t count,
                        bint by_entry)
