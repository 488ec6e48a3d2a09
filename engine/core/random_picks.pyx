"""Distinct random picks (see random_picks.pxd)."""
from random import sample


cdef list pick_distinct(object everything, object one, Py_ssize_t size, Py_ssize_t count,
                        bint by_entry):
    cdef set chosen
    if count >= size:
        return everything()
    if not by_entry or count * 3 > size:
        return sample(everything(), count)
    chosen = set()
    while len(chosen) < count:
        chosen.add(one())
    return list(chosen)
