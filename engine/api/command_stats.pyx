# cython: language_level=3, boundscheck=False, wraparound=False
"""INFO commandstats and latencystats: `CommandStat.count` is the one place a
command's counters change, called by the road's `call` (engine/api/road.pyx) for
every command whoever ran it (a client, EXEC, a script's redis.call), and for a
parked command answered with an error; `CommandStats` is the table of them by name
that the server's INFO reads (engine/server/info.py's Stats)."""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free

from engine.commands.dispatch cimport resolve


cdef extern from *:
    int clzll "__builtin_clzll" (unsigned long long) noexcept nogil

# Latency histogram with HdrHistogram's layout for 2 significant digits (what Redis
# uses for INFO latencystats): values in ns from 1 to 1 s; 128 sub-buckets per
# power of two above 256, exact below. A percentile reads as the highest value
# equivalent to its bucket, so the figures match Redis's for the same durations.
cdef enum:
    HIST_BUCKETS = 23
    HIST_LEN = (HIST_BUCKETS + 1) * 128
cdef int64_t HIST_MAX_NS = 1000000000
cdef enum:
    SPELLINGS_MAX = 4096


cdef inline Py_ssize_t hist_index(int64_t v) noexcept nogil:
    cdef int bucket = 64 - clzll(<unsigned long long>(v | 255)) - 8
    return ((bucket + 1) << 7) + ((v >> bucket) - 128)


cdef inline int64_t hist_highest_value(Py_ssize_t index) noexcept nogil:
    cdef int bucket = <int>(index >> 7) - 1
    cdef int64_t sub = (index & 127) + 128
    if bucket < 0:
        sub -= 128
        bucket = 0
    return (sub << bucket) + (<int64_t>1 << bucket) - 1


cdef class CommandStat:
    """Counters of one command (INFO commandstats) and its latency histogram (INFO
    latencystats)."""

    def __init__(self, str name):
        self.name = name
        self.calls = self.ns = self.rejected = self.failed = 0

    def __dealloc__(self):
        free(self.latency)

    cpdef int count(self, int64_t ns, int outcome) except -1:
        """One call of this command, by its Outcome; a call that ran took ns."""
        if outcome == REJECTED:
            self.rejected += 1
            return 0
        if outcome == FAILED_AFTER_BLOCK:
            self.failed += 1
            return 0
        self.calls += 1
        self.ns += ns
        if self.latency is NULL:
            self.latency = <uint64_t*>calloc(HIST_LEN, sizeof(uint64_t))
            if self.latency is NULL:
                raise MemoryError()
        self.latency[hist_index(1 if ns < 1 else HIST_MAX_NS if ns > HIST_MAX_NS else ns)] += 1
        self.samples += 1
        if outcome == FAILED:
            self.failed += 1
        return 0

    def latency_percentile(self, double percentile) -> int:
        """The latency (ns) at or below which `percentile` % of the calls finished:
        HdrHistogram's value_at_percentile. 0 without calls."""
        cdef uint64_t total = 0, wanted
        cdef Py_ssize_t i
        if not self.samples:
            return 0
        wanted = <uint64_t>((min(percentile, 100.0) / 100.0) * self.samples + 0.5)
        if wanted < 1:
            wanted = 1
        for i in range(HIST_LEN):
            total += self.latency[i]
            if total >= wanted:
                return hist_highest_value(i)
        return 0

    def cumulative_usec(self) -> list:
        """LATENCY HISTOGRAM's buckets: for each power of two of 1024 ns that some calls
        reached, (its bucket's highest value in us, the calls up to it), as
        HdrHistogram's logarithmic iteration gives them."""
        cdef list out = []
        cdef uint64_t total = 0, before = 0
        cdef int64_t upper = 1024
        cdef Py_ssize_t i = 0, last
        if self.latency is NULL:
            return out
        while total < self.samples and upper <= 2 * HIST_MAX_NS:
            last = hist_index(upper if upper < HIST_MAX_NS else HIST_MAX_NS)
            while i <= last:
                total += self.latency[i]
                i += 1
            if total > before:
                out.append((hist_highest_value(last) // 1000, total))
                before = total
            upper *= 2
        return out

    def reset(self):
        self.calls = self.ns = self.rejected = self.failed = 0
        free(self.latency)
        self.latency = NULL
        self.samples = 0


cdef class CommandStats:
    """The CommandStat of every command that was counted, by full name. The objects
    survive a reset (callers cache them), only their counters are zeroed."""

    def __init__(self) -> None:
        self.commands = {}
        self.spellings = {}

    cpdef CommandStat command(self, str name):
        stat = self.commands.get(name)
        if stat is None:
            stat = self.commands[name] = CommandStat(name)
        return stat

    cdef CommandStat stat_of(self, object record, list argv):
        """The CommandStat of a command that ran: its record's (the subcommand's for a
        container), or, for an engine command run without its record (None), by its
        name as sent (cached unless it has subcommands)."""
        if record is not None:
            return self.command(record.name)
        stat = self.spellings.get(argv[0])
        if stat is not None:
            return stat
        spec = resolve(argv)
        stat = self.command(spec.name)
        if spec.name.find("|") < 0 and len(self.spellings) < SPELLINGS_MAX:
            self.spellings[argv[0]] = stat
        return stat

    def count(self, name, long long ns, int outcome) -> None:
        """One call of command `name` (None: an unknown command, counted nowhere)."""
        if name is not None:
            self.command(name).count(ns, outcome)

    def reset_commands(self) -> None:
        for stat in self.commands.values():
            stat.reset()
