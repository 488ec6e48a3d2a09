"""Clocks: wall-clock milliseconds (as Redis uses for IDs and idle times), or a
manual clock that moves only when told to."""
from libc.stdint cimport int64_t
from posix.time cimport clock_gettime, timespec, CLOCK_REALTIME


cdef class Clock:
    cpdef int64_t now_ms(self):
        raise NotImplementedError

    cpdef int64_t now_us(self):
        """Microseconds (TIME): the milliseconds, unless the clock knows better."""
        return self.now_ms() * 1000


cdef class SystemClock(Clock):
    cpdef int64_t now_ms(self):
        cdef timespec ts
        clock_gettime(CLOCK_REALTIME, &ts)
        return <int64_t>ts.tv_sec * 1000 + ts.tv_nsec // 1000000

    cpdef int64_t now_us(self):
        cdef timespec ts
        clock_gettime(CLOCK_REALTIME, &ts)
        return <int64_t>ts.tv_sec * 1000000 + ts.tv_nsec // 1000


cdef class ManualClock(Clock):
    def __init__(self, int64_t now_ms=1_700_000_000_000):
        self.now = now_ms

    cpdef int64_t now_ms(self):
        return self.now

    def set(self, int64_t now_ms) -> None:
        self.now = now_ms

    def advance(self, int64_t ms) -> None:
        self.now += ms
