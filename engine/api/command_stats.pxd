from libc.stdint cimport int64_t, uint64_t


cpdef enum Outcome:
    CALLED = 0              # ran and replied
    FAILED = 1              # ran and replied with an error
    REJECTED = 2            # refused before running (rejected_calls)
    FAILED_AFTER_BLOCK = 3  # a call counted when it blocked was answered with an error


cdef class CommandStat:
    cdef public str name
    cdef public long long calls
    cdef public long long ns
    cdef public long long rejected
    cdef public long long failed
    cdef uint64_t* latency        # HIST_LEN counts, allocated by the first call
    cdef readonly uint64_t samples

    cpdef int count(self, int64_t ns, int outcome) except -1


cdef class CommandStats:
    cdef public dict commands     # full name -> CommandStat
    cdef dict spellings           # an engine command's name as sent -> its CommandStat

    cpdef CommandStat command(self, str name)
    cdef CommandStat stat_of(self, object record, list argv)
