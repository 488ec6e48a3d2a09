# The engine's one source of "now" (ms since the epoch). Subclass Clock and override
# now_ms to control time (tests, replays); the command layer calls it once per command.
from libc.stdint cimport int64_t

cdef class Clock:
    cpdef int64_t now_ms(self)
    cpdef int64_t now_us(self)

cdef class SystemClock(Clock):
    pass

cdef class ManualClock(Clock):
    cdef public int64_t now
