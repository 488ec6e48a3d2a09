# Reply lists kept out of Python's cycle collector.
#
# A reply such as XRANGE's holds one list per entry and one per entry's fields, all
# containing only bytes, ints and other such lists. They cannot be part of a
# reference cycle unless the caller builds one through them, yet the collector would
# walk thousands of them for every large reply (measured: ~20% of an XREADGROUP
# CLAIM of 1,000 entries). So they are untracked; the cost is that a cycle a caller
# deliberately builds through a reply list is not collected (documented on Engine).
#
# Allocating them still counts towards the collector's threshold: every 700 lists
# start a young collection, which walks every young object of the whole program (a
# caller holding a fresh list of 20,000 IDs made that ~25% of a 1,000-entry CLAIM).
# Big replies are therefore built with the collector paused (gc_pause/gc_resume):
# the program then gets one young collection after the reply instead of one per 700
# of its lists. Nothing runs in between that could need it: no Python code of the
# caller, and the GIL is held throughout.

cdef extern from "Python.h":
    void PyObject_GC_UnTrack(void* op)
    int PyGC_Disable()
    int PyGC_Enable()

cdef inline list leaf_list(list items):
    PyObject_GC_UnTrack(<void*>items)
    return items

# Pauses the collector; returns whether it was enabled (to pass to gc_resume).
cdef inline bint gc_pause() noexcept:
    return PyGC_Disable()

cdef inline void gc_resume(bint was_enabled) noexcept:
    if was_enabled:
        PyGC_Enable()
