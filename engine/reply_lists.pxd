# Reply lists kept out of Python's cycle collector.
#
# A reply such as XRANGE's holds one list per entry and one per entry's fields, all
# containing only bytes, ints and other such lists. They cannot be part of a
# reference cycle unless the caller builds one through them, yet the collector would
# walk thousands of them for every large reply (measured: ~20% of an XREADGROUP
# CLAIM of 1,000 entries). So they are untracked; the cost is that a cycle a caller
# deliberately builds through a reply list is not collected (documented on Engine).

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)

cdef inline list leaf_list(list items):
    PyObject_GC_UnTrack(<void*>items)
    return items
