# Consumer groups: the group's pending entries list (PEL), each consumer's PEL, and
# pel_by_time, the time-ordered index of the PEL that makes claiming idle entries a
# range scan (key = 8-byte big-endian delivery time + 16-byte ID, no value).
# All three are radix trees; every change to a pending entry goes through the
# methods here, which keep the three in step.

from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.string cimport memcpy
from engine.core.streamid cimport StreamID, id_decode, u64_from_be
from engine.core.radix cimport RadixTree

# Inline value of the group PEL: 18 bytes. Times are ms since the epoch, in full (a
# RESTOREd payload may carry any time up to 2^63 - 1, Redis's signed limit); the
# delivery count is a signed 48-bit integer, saturating.
cdef packed struct PendingEntry:
    uint8_t delivery_time[8]
    uint8_t delivery_count[6]
    uint32_t consumer_id

cdef inline uint64_t pe_time(const PendingEntry* pe) noexcept nogil:
    cdef uint64_t v = 0
    memcpy(&v, pe.delivery_time, 8)
    return v

cdef inline int64_t pe_count(const PendingEntry* pe) noexcept nogil:
    cdef uint64_t v = 0
    memcpy(&v, pe.delivery_count, 6)
    if v & (<uint64_t>1 << 47):
        v |= <uint64_t>0xffff000000000000
    return <int64_t>v

cdef inline void pe_set_time(PendingEntry* pe, uint64_t t) noexcept nogil:
    memcpy(pe.delivery_time, &t, 8)

cdef inline void pe_set_count(PendingEntry* pe, int64_t c) noexcept nogil:
    if c > <int64_t>0x7fffffffffffLL:
        c = <int64_t>0x7fffffffffffLL
    elif c < -<int64_t>0x800000000000LL:
        c = -<int64_t>0x800000000000LL
    memcpy(pe.delivery_count, &c, 6)

cdef enum:
    ENTRIES_READ_UNKNOWN = -1

cdef class Consumer:
    cdef readonly bytes name
    cdef uint32_t id
    cdef RadixTree* pel              # 16-byte IDs, no value: the entries it owns, and
                                     # maybe stale keys of others (see groups.pyx)
    cdef uint64_t pending            # entries of the group PEL it owns
    cdef bint sweeping               # its stale keys are being swept (groups.pyx)
    cdef uint32_t sweep_credit       # keys the sweep may look at in its next step
    cdef uint8_t sweep_from[16]      # the first key the next step looks at
    cdef public int64_t seen_time    # last interaction
    cdef public int64_t active_time  # last successful read/claim, -1 = never

    cdef uint64_t pending_count(self) noexcept

cdef class ConsumerGroup:
    cdef readonly bytes name
    cdef StreamID last_id
    cdef int64_t entries_read        # ENTRIES_READ_UNKNOWN when not known
    cdef RadixTree* pel              # 16-byte ID -> PendingEntry
    cdef RadixTree* pel_by_time      # 8-byte time + 16-byte ID, no value
    cdef dict consumers              # name -> Consumer
    cdef list consumer_by_id         # id -> Consumer, or None for a freed id
    cdef list free_ids

    cdef Consumer lookup_consumer(self, bytes name)
    cdef Consumer create_consumer(self, bytes name, int64_t now)
    # Removes the consumer and its pending entries; returns how many it had.
    cdef uint64_t delete_consumer(self, Consumer consumer) except? 0
    cdef Consumer owner_of(self, const PendingEntry* pe)
    # The pending entry of a key read from c's PEL, or NULL if c no longer owns it.
    cdef PendingEntry* owned_entry(self, Consumer c, const uint8_t* key) noexcept
    cdef int _take(self, Consumer c, const uint8_t* key) except -1
    cdef int _release(self, Consumer c) except -1
    cdef int _sweep(self, Consumer c) except -1

    cdef PendingEntry* find_pending(self, const StreamID* id) noexcept
    # New pending entry; returns 0 (and changes nothing) if `id` is already pending.
    cdef int add_pending(self, const StreamID* id, Consumer owner, uint64_t time,
                         int64_t count) except -1
    # Re-delivers/re-assigns an existing pending entry.
    cdef int update_pending(self, const StreamID* id, Consumer owner, uint64_t time,
                            int64_t count) except -1
    # Delivers pending entry `pe` (of `id`) once more: to `owner` at `time`, count + 1.
    cdef int redeliver(self, PendingEntry* pe, const StreamID* id, Consumer owner,
                       uint64_t time) except -1
    # redeliver for each of ids[0:n] (all pending, distinct), previous[j] receiving
    # entry j as it was, in fewer cache misses (batched, prefetched).
    # oldest: ids are the n oldest deliveries, in pel_by_time order (a claim), whose
    # time keys then leave pel_by_time in one sweep.
    cdef int redeliver_many(self, const StreamID* ids, Py_ssize_t n, Consumer owner,
                            uint64_t time, PendingEntry* previous, bint oldest) except -1
    cdef int _deliver(self, PendingEntry* pe, const uint8_t* key, const StreamID* id,
                      Consumer owner, uint64_t time, bint time_key_gone) except -1
    cdef bint remove_pending(self, const StreamID* id) except -1
    cdef uint64_t pending_count(self) noexcept

    cdef uint64_t memory_bytes(self) noexcept
    # A deep copy: the PELs cloned, each consumer copied with its PEL and times.
    cdef ConsumerGroup copy(self)

cdef void time_key(uint64_t time, const StreamID* id, uint8_t* out) noexcept

# A consumer's stale keys (see groups.pyx) are swept once they outnumber its owned keys
# and COMPACT_MIN.
cdef enum:
    COMPACT_MIN = 1024

cdef inline bint too_stale(uint64_t stale, uint64_t pending) noexcept:
    """Whether a consumer's stale keys call for a sweep."""
    return stale > pending and stale >= COMPACT_MIN

# Splits a pel_by_time key into its delivery time and ID.
cdef inline uint64_t time_key_split(const uint8_t* key, StreamID* id) noexcept:
    id_decode(key + 8, id)
    return u64_from_be(key)

from engine.core.stream cimport Stream

# The logical read counter of `id` (how many entries were ever added up to it), or
# ENTRIES_READ_UNKNOWN when tombstones or its position make it unknowable.
cdef int64_t estimate_entries_read(Stream s, const StreamID* id) except? -2
# Whether an XDEL tombstone may lie in [start, +inf).
cdef bint tombstones_after(Stream s, const StreamID* start) noexcept
# The group's lag (entries not yet delivered), or None when it cannot be known.
cdef object group_lag(Stream s, ConsumerGroup g)
# Advances last_id/entries_read for a delivery of `id` (a new entry).
cdef void advance_last_delivered(Stream s, ConsumerGroup g, const StreamID* id) noexcept
# A deep copy of a stream: its entries, counters, groups, consumers and PELs (COPY).
cpdef Stream copy_stream(Stream s)

# Reference policies (XDELEX, XACKDEL, XADD/XTRIM with ACKED or DELREF, Redis 8.2+).
# Whether some group still needs entry `id`: it lies after the group's last-delivered
# ID (not read yet) or is in the group's PEL (read, not acknowledged).
cdef bint entry_referenced(Stream s, const StreamID* id) except -1
# Removes `id` from every group's PEL; returns the groups that had it (DELREF).
cdef list drop_references(Stream s, const StreamID* id)
