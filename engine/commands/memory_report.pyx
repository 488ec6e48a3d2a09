"""MEMORY: what a key costs (USAGE), the engine's figures (STATS), a short diagnosis
(DOCTOR), the allocator's statistics and trimming (MALLOC-STATS, PURGE).

Sluice stores data with the C library's malloc, so MALLOC-STATS answers what Redis
built with libc malloc answers, and PURGE returns free pages to the system
(malloc_trim)."""
import os

from libc.stdint cimport int64_t

from engine.core.keyspace cimport Database
from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int, is_option
from engine.commands.table import command
from engine.core.errors import ResponseError, SYNTAX
from engine.resp.reply import OK

cdef extern from "<malloc.h>":
    int malloc_trim(size_t pad) nogil

# Below this much stored data the diagnosis has nothing to look at (as Redis's).
cdef int64_t DOCTOR_MINIMUM = 5 * 1024 * 1024
EMPTY_DIAGNOSIS = (b"Sam, this instance holds almost no data, so there is nothing to diagnose "
                   b"yet. Store some data and ask again.")
HEALTHY_DIAGNOSIS = (b"Sam, I found no memory problem in this instance: the memory it holds is "
                     b"close to what its data costs.")
FRAGMENTED_DIAGNOSIS = (b"Sam, the process holds %d bytes for %d bytes of data (ratio %.2f): "
                        b"freed memory has not gone back to the system. MEMORY PURGE returns "
                        b"free pages to it.")


cdef int64_t rss_bytes():
    """The process's resident set (its own /proc entry), 0 where there is none."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


@command("memory|usage")
def memory_usage(CommandContext ctx, list argv):
    cdef Py_ssize_t j = 3, n = len(argv)
    cdef int64_t samples
    while j < n:                    # the options are checked before the key is looked up
        if is_option(argv[j], b"samples") and j + 1 < n:
            samples = parse_int(argv[j + 1], NULL)
            if samples < 0:
                raise ResponseError(SYNTAX)
            j += 2
        else:
            raise ResponseError(SYNTAX)
    cdef bytes key = argv[2]
    cdef Database db = ctx.db
    value = db.peek(key)
    if value is None or 0 <= db.expire_at(key) <= ctx.now:
        return None
    # Collections report their whole footprint: SAMPLES (any count) only bounds work
    # in Redis, where the size of a nested value is estimated from a few elements.
    return db.usage(key, value)


def index_overhead(databases) -> int:
    """The bytes of the keyspace index's C tables in the databases that hold keys (what
    Redis counts as its dictionaries' overhead), for MEMORY STATS and INFO."""
    cdef Database db
    cdef int64_t total = 0
    for db in databases:
        if len(db):
            total += db.main_table_bytes() + db.expires_table_bytes()
    return total


def cache_bytes(scripts) -> int:
    """What an engine's EVAL scripts or FUNCTION libraries (None: never made) hold
    outside their Lua heap."""
    return 0 if scripts is None else scripts.cache_bytes()


@command("memory|stats")
def memory_stats(CommandContext ctx, list argv):
    keyspace = ctx.keyspace
    cdef int64_t used = keyspace.used_memory()
    cdef int64_t peak = max(keyspace.peak_memory, used)
    cdef int64_t rss = rss_bytes()
    cdef int64_t keys = 0
    cdef int64_t overhead = index_overhead(keyspace.databases)
    cdef Database db
    stats = {b"peak.allocated": peak, b"total.allocated": used, b"startup.allocated": 0,
             b"replication.backlog": 0, b"clients.slaves": 0, b"clients.normal": 0,
             b"cluster.links": 0, b"aof.buffer": 0,
             b"lua.caches": cache_bytes(keyspace.scripting),
             b"functions.caches": cache_bytes(keyspace.functions)}
    for db in keyspace.databases:
        if len(db):
            keys += len(db)
            stats[b"db.%d" % db.index] = {
                b"overhead.hashtable.main": db.main_table_bytes(),
                b"overhead.hashtable.expires": db.expires_table_bytes(),
                b"overhead.hashtable.slot-to-keys": 0}        # no cluster mode
    stats.update({
        b"overhead.total": overhead,
        b"keys.count": keys,
        b"keys.bytes-per-key": used // keys if keys else 0,
        b"dataset.bytes": used - overhead,
        b"dataset.percentage": 100.0 * (used - overhead) / used if used else 0.0,
        b"peak.percentage": 100.0 * used / peak if peak else 0.0,
        b"allocator.allocated": used,
        b"allocator.active": used,
        b"allocator.resident": rss,
        b"allocator-fragmentation.ratio": 1.0,
        b"allocator-fragmentation.bytes": 0,
        b"allocator-rss.ratio": <double>rss / used if used else 0.0,
        b"allocator-rss.bytes": rss - used,
        b"rss-overhead.ratio": 1.0,
        b"rss-overhead.bytes": 0,
        b"fragmentation": <double>rss / used if used else 0.0,
        b"fragmentation.bytes": rss - used,
    })
    return stats


@command("memory|doctor")
def memory_doctor(CommandContext ctx, list argv):
    cdef int64_t used = ctx.keyspace.used_memory()
    cdef int64_t rss
    if used < DOCTOR_MINIMUM:
        return EMPTY_DIAGNOSIS
    rss = rss_bytes()
    if rss > 2 * used:
        return FRAGMENTED_DIAGNOSIS % (rss, used, <double>rss / used)
    return HEALTHY_DIAGNOSIS


@command("memory|malloc-stats")
def memory_malloc_stats(CommandContext ctx, list argv):
    return b"Stats not supported for the current allocator"


@command("memory|purge")
def memory_purge(CommandContext ctx, list argv):
    with nogil:
        malloc_trim(0)
    return OK


MEMORY_HELP = [
    b"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    b"DOCTOR",
    b"    Return memory problems reports.",
    b"MALLOC-STATS",
    b"    Return internal statistics report from the memory allocator.",
    b"PURGE",
    b"    Attempt to purge dirty pages for reclamation by the allocator.",
    b"STATS",
    b"    Return information about the memory usage of the server.",
    b"USAGE <key> [SAMPLES <count>]",
    b"    Return memory in bytes used by <key> and its value. Nested values are",
    b"    sampled up to <count> times (default: 5, 0 means sample all).",
    b"HELP",
    b"    Prints this help.",
]


@command("memory|help")
def memory_help(CommandContext ctx, list argv):
    return list(MEMORY_HELP)
