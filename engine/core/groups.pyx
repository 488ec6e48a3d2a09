"""Consumer groups, consumers and their pending entries (PEL + pel_by_time)."""
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcmp, memcpy, memset

from engine.core.streamid cimport StreamID, id_encode, id_decode, u64_to_be, u64_from_be
from engine.core.radix cimport (RadixTree, RadixIter, RadixHint, radix_new, radix_new_sized,
                           radix_free, radix_clone, radix_count, radix_bytes, radix_insert,
                           radix_try_insert, radix_find, radix_remove, radix_iter_init,
                           radix_seek, radix_next, RADIX_FIRST, RADIX_GE, radix_locate_many,
                           radix_find_at, radix_remove_first, radix_floor)


# A consumer's PEL loses entries in any order (acks of entries processed out of order),
# and a removal moves up to half a bucket: 1 KiB buckets (63 IDs, one malloc chunk)
# make that a few cache lines instead of a dozen. In-order deliveries fill buckets of
# any size, so bytes per pending entry stay the same.
cdef enum:
    CONSUMER_BUCKET_BYTES = 1016

# ConsumerGroup.redeliver_many works on groups of CLAIM_GROUP entries.
cdef enum:
    CLAIM_GROUP = 32

# A consumer's PEL indexes the entries of the group PEL it owns, and may also hold keys
# of entries other consumers have claimed since ("stale" keys): a claim updates the
# group PEL and the new owner's PEL but leaves the old owner's alone, as removing the
# key there would cost a descent into one more tree (in a PEL bigger than the CPU
# caches, a third of a claim's cache misses). Consumer.pending counts what a consumer
# owns; readers of its PEL skip the keys it no longer owns (owned_entry), and a
# consumer that gets such a key back simply owns it again. Stale keys go all at once
# when their consumer owns nothing any more, and by a sweep once they outnumber the
# owned keys and COMPACT_MIN: the sweep walks the PEL in key order, dropping the keys
# the consumer no longer owns, SWEEP_RATE keys for every entry the consumer loses, in
# steps of SWEEP_STEP keys (a few microseconds each; a one-shot rebuild of a PEL of a
# million keys would stall one command for tens of milliseconds). That is O(1)
# amortized per claim, and bounds what a consumer's PEL keeps: at most
# 3 * pending + 2 * COMPACT_MIN stale keys during a sweep (it looks at 4 keys per loss
# while 1 key goes stale), and no more stale than owned keys, or fewer than
# COMPACT_MIN, outside one.
# (COMPACT_MIN and too_stale: groups.pxd, shared with the test probe's verify_group.)
cdef enum:
    SWEEP_RATE = 4
    SWEEP_STEP = 256


cdef void time_key(uint64_t time, const StreamID* id, uint8_t* out) noexcept:
    u64_to_be(time, out)
    id_encode(id, out + 8)


cdef class Consumer:
    def __cinit__(self, bytes name, uint32_t cid, int64_t now):
        self.name = name
        self.id = cid
        self.pel = radix_new_sized(16, 0, CONSUMER_BUCKET_BYTES)
        self.seen_time = now
        self.active_time = -1
        self.pending = 0
        self.sweeping = False

    def __dealloc__(self):
        if self.pel != NULL:
            radix_free(self.pel)

    cdef uint64_t pending_count(self) noexcept:
        return self.pending


cdef class ConsumerGroup:
    def __cinit__(self, bytes name, uint64_t last_ms, uint64_t last_seq,
                  int64_t entries_read):
        self.name = name
        self.last_id.ms = last_ms
        self.last_id.seq = last_seq
        self.entries_read = entries_read
        self.pel = radix_new(16, sizeof(PendingEntry))
        self.pel_by_time = radix_new(24, 0)
        self.consumers = {}
        self.consumer_by_id = []
        self.free_ids = []

    def __dealloc__(self):
        if self.pel != NULL:
            radix_free(self.pel)
        if self.pel_by_time != NULL:
            radix_free(self.pel_by_time)

    cdef ConsumerGroup copy(self):
        cdef ConsumerGroup out = ConsumerGroup(self.name, self.last_id.ms, self.last_id.seq,
                                               self.entries_read)
        cdef Consumer c, twin
        radix_free(out.pel)
        out.pel = NULL
        out.pel = radix_clone(self.pel)
        radix_free(out.pel_by_time)
        out.pel_by_time = NULL
        out.pel_by_time = radix_clone(self.pel_by_time)
        out.consumer_by_id = [None] * len(self.consumer_by_id)
        out.free_ids = list(self.free_ids)
        for c in self.consumers.values():
            twin = Consumer(c.name, c.id, c.seen_time)
            radix_free(twin.pel)
            twin.pel = NULL
            twin.pel = radix_clone(c.pel)
            twin.pending = c.pending
            twin.sweeping = c.sweeping
            twin.sweep_credit = c.sweep_credit
            memcpy(twin.sweep_from, c.sweep_from, 16)
            twin.active_time = c.active_time
            out.consumers[c.name] = twin
            out.consumer_by_id[c.id] = twin
        return out

    # -- consumers -------------------------------------------------------------

    cdef Consumer lookup_consumer(self, bytes name):
        return self.consumers.get(name)

    cdef Consumer create_consumer(self, bytes name, int64_t now):
        cdef uint32_t cid
        if self.free_ids:
            cid = self.free_ids.pop()
        else:
            cid = len(self.consumer_by_id)
            self.consumer_by_id.append(None)
        cdef Consumer c = Consumer(name, cid, now)
        self.consumer_by_id[cid] = c
        self.consumers[name] = c
        return c

    cdef uint64_t delete_consumer(self, Consumer consumer) except? 0:
        cdef RadixIter it
        cdef StreamID sid
        cdef PendingEntry* pe
        cdef uint8_t tkey[24]
        cdef uint64_t removed = consumer.pending
        radix_iter_init(&it, consumer.pel)
        cdef int ok = radix_seek(&it, RADIX_FIRST, NULL)
        while ok:
            pe = self.owned_entry(consumer, it.key)
            if pe != NULL:
                id_decode(it.key, &sid)
                time_key(pe_time(pe), &sid, tkey)
                radix_remove(self.pel_by_time, tkey, NULL)
                radix_remove(self.pel, it.key, NULL)
            ok = radix_next(&it)
        del self.consumers[consumer.name]
        self.consumer_by_id[consumer.id] = None
        self.free_ids.append(consumer.id)
        return removed

    cdef Consumer owner_of(self, const PendingEntry* pe):
        return <Consumer>self.consumer_by_id[pe.consumer_id]

    cdef PendingEntry* owned_entry(self, Consumer c, const uint8_t* key) noexcept:
        cdef PendingEntry* pe = <PendingEntry*>radix_find(self.pel, key)
        if pe == NULL or pe.consumer_id != c.id:
            return NULL
        return pe

    cdef int _take(self, Consumer c, const uint8_t* key) except -1:
        """c now owns key's entry (its PEL may hold the key already, stale)."""
        radix_insert(c.pel, key, NULL)
        c.pending += 1
        return 0

    cdef int _release(self, Consumer c) except -1:
        """c no longer owns one of its entries (whose key may stay in its PEL): drops
        its stale keys when they are all it has, or sweeps them once they are too many
        (see COMPACT_MIN)."""
        c.pending -= 1
        cdef uint64_t stale = radix_count(c.pel) - c.pending
        if stale == 0:
            c.sweeping = False
            return 0
        if c.pending == 0:
            radix_remove_first(c.pel, stale)
            c.sweeping = False
            return 0
        if not c.sweeping:
            if not too_stale(stale, c.pending):
                return 0
            c.sweeping = True
            c.sweep_credit = SWEEP_STEP
            memset(c.sweep_from, 0, 16)
        c.sweep_credit += SWEEP_RATE
        if c.sweep_credit >= SWEEP_STEP:
            c.sweep_credit -= SWEEP_STEP
            self._sweep(c)
        return 0

    cdef int _sweep(self, Consumer c) except -1:
        """One step of c's sweep: the next SWEEP_STEP keys of its PEL from where the
        last step stopped, without those c no longer owns. The group PEL is read
        forward from its last find (radix_floor with a cursor), so both trees are read
        in order. After the PEL's last key the sweep ends, or starts over if stale keys
        still outnumber owned ones."""
        cdef RadixIter it
        cdef RadixHint cursor
        cdef const uint8_t* e
        cdef uint32_t budget = SWEEP_STEP
        cursor.finger.bucket = NULL
        radix_iter_init(&it, c.pel)
        cdef int ok = radix_seek(&it, RADIX_GE, c.sweep_from)
        while ok and budget:
            e = radix_floor(self.pel, it.key, NULL, &cursor)
            if not (e != NULL and memcmp(e, it.key, 16) == 0
                    and (<const PendingEntry*>(e + 16)).consumer_id == c.id):
                radix_remove(c.pel, it.key, NULL)
            budget -= 1
            ok = radix_next(&it)
        if ok:
            memcpy(c.sweep_from, it.key, 16)
            return 0
        c.sweeping = too_stale(radix_count(c.pel) - c.pending, c.pending)
        memset(c.sweep_from, 0, 16)
        return 0

    # -- pending entries -------------------------------------------------------

    cdef PendingEntry* find_pending(self, const StreamID* id) noexcept:
        cdef uint8_t key[16]
        id_encode(id, key)
        return <PendingEntry*>radix_find(self.pel, key)

    cdef int add_pending(self, const StreamID* id, Consumer owner, uint64_t time,
                         int64_t count) except -1:
        cdef uint8_t key[16]
        cdef uint8_t tkey[24]
        cdef PendingEntry pe
        pe_set_time(&pe, time)
        pe_set_count(&pe, count)
        pe.consumer_id = owner.id
        id_encode(id, key)
        if not radix_try_insert(self.pel, key, &pe):
            return 0
        self._take(owner, key)
        time_key(time, id, tkey)
        radix_insert(self.pel_by_time, tkey, NULL)
        return 1

    cdef int update_pending(self, const StreamID* id, Consumer owner, uint64_t time,
                            int64_t count) except -1:
        cdef uint8_t key[16]
        id_encode(id, key)
        cdef PendingEntry* pe = <PendingEntry*>radix_find(self.pel, key)
        pe_set_count(pe, count)
        return self._deliver(pe, key, id, owner, time, False)

    cdef int redeliver_many(self, const StreamID* ids, Py_ssize_t n, Consumer owner,
                            uint64_t time, PendingEntry* previous, bint oldest) except -1:
        """redeliver for each of ids[0:n], as a pipeline over groups of CLAIM_GROUP
        entries: one radix_locate_many call locates the PEL entries of a group, and the
        moves of the group before it run while the lines of those lookups arrive; the
        lookups then start from the hints instead of descending again. In a PEL bigger
        than the CPU caches a group then waits for memory a few times instead of a few
        times per entry."""
        cdef uint8_t* keys = <uint8_t*>malloc(16 * n)
        cdef PendingEntry** pes = <PendingEntry**>malloc(n * sizeof(PendingEntry*))
        cdef RadixHint found[CLAIM_GROUP]
        cdef Py_ssize_t lo = 0, hi, moving_lo = 0, moving_hi = 0, k
        try:
            if keys == NULL or pes == NULL:
                raise MemoryError()
            for k in range(n):
                id_encode(&ids[k], keys + 16 * k)
            if oldest:
                radix_remove_first(self.pel_by_time, n)
            while True:
                # Locate the PEL entries of [lo, hi), then move those of [moving_lo,
                # moving_hi), the group looked up last time.
                hi = lo + CLAIM_GROUP if n - lo > CLAIM_GROUP else n
                radix_locate_many(self.pel, keys + 16 * lo, <uint32_t>(hi - lo), found)
                for k in range(moving_lo, moving_hi):
                    pe_set_count(pes[k], pe_count(pes[k]) + 1)
                    self._deliver(pes[k], keys + 16 * k, &ids[k], owner, time, oldest)
                if lo == n:
                    return 0
                for k in range(lo, hi):
                    # Stays valid until its move: the PEL itself only changes in place.
                    pes[k] = <PendingEntry*>radix_find_at(self.pel, keys + 16 * k,
                                                          &found[k - lo])
                    previous[k] = pes[k][0]
                moving_lo = lo
                moving_hi = lo = hi
        finally:
            free(keys)
            free(pes)

    cdef int redeliver(self, PendingEntry* pe, const StreamID* id, Consumer owner,
                       uint64_t time) except -1:
        cdef uint8_t key[16]
        id_encode(id, key)
        pe_set_count(pe, pe_count(pe) + 1)
        return self._deliver(pe, key, id, owner, time, False)

    cdef int _deliver(self, PendingEntry* pe, const uint8_t* key, const StreamID* id,
                      Consumer owner, uint64_t time, bint time_key_gone) except -1:
        """Moves a pending entry to `owner` at `time`, keeping pel_by_time and the
        consumer PELs in step. `pe` stays valid: only the other trees change.
        time_key_gone: the entry's pel_by_time key was removed already."""
        cdef uint8_t tkey[24]
        cdef uint64_t old_time = pe_time(pe)
        cdef uint32_t old_owner = pe.consumer_id
        if old_time != time or time_key_gone:
            pe_set_time(pe, time)
            if not time_key_gone:
                time_key(old_time, id, tkey)
                radix_remove(self.pel_by_time, tkey, NULL)
            time_key(time, id, tkey)
            radix_insert(self.pel_by_time, tkey, NULL)
        if old_owner != owner.id:
            pe.consumer_id = owner.id
            self._take(owner, key)
            self._release(<Consumer>self.consumer_by_id[old_owner])
        return 0

    cdef bint remove_pending(self, const StreamID* id) except -1:
        cdef uint8_t key[16]
        cdef uint8_t tkey[24]
        cdef PendingEntry pe
        cdef Consumer owner
        id_encode(id, key)
        if not radix_remove(self.pel, key, &pe):
            return False
        owner = <Consumer>self.consumer_by_id[pe.consumer_id]
        radix_remove(owner.pel, key, NULL)
        self._release(owner)
        time_key(pe_time(&pe), id, tkey)
        radix_remove(self.pel_by_time, tkey, NULL)
        return True

    cdef uint64_t pending_count(self) noexcept:
        return radix_count(self.pel)

    def oldest_delivery(self):
        """Delivery time (ms) of the oldest pending entry, or None when the PEL is
        empty: with min-idle-time, when the first entry becomes claimable (the
        server's timer for XREADGROUP ... CLAIM ... BLOCK)."""
        cdef RadixIter it
        radix_iter_init(&it, self.pel_by_time)
        if not radix_seek(&it, RADIX_FIRST, NULL):
            return None
        return <int64_t>u64_from_be(it.key)

    cdef uint64_t memory_bytes(self) noexcept:
        cdef uint64_t total = radix_bytes(self.pel) + radix_bytes(self.pel_by_time)
        for c in self.consumers.values():
            total += radix_bytes((<Consumer>c).pel)
        return total



# -- the read counter (entries-read) and lag -------------------------------------

from engine.core.streamid cimport id_cmp, id_is_zero
from engine.core.stream cimport Stream


cdef bint tombstones_after(Stream s, const StreamID* start) noexcept:
    if s.length == 0 or id_is_zero(&s.max_deleted_id):
        return False
    if id_cmp(&s.first_id, &s.max_deleted_id) > 0:
        return False
    return id_cmp(start, &s.max_deleted_id) <= 0


cdef int64_t estimate_entries_read(Stream s, const StreamID* id) except? -2:
    if s.entries_added == 0:
        return 0
    if s.length == 0 and id_cmp(id, &s.last_id) < 1:
        return s.entries_added
    cdef int cmp_last = id_cmp(id, &s.last_id)
    if cmp_last == 0:
        return s.entries_added
    if cmp_last > 0:
        return ENTRIES_READ_UNKNOWN
    cdef int cmp_first = id_cmp(id, &s.first_id)
    if id_is_zero(&s.max_deleted_id) or id_cmp(&s.max_deleted_id, &s.first_id) < 0:
        if cmp_first < 0:
            return s.entries_added - s.length
        if cmp_first == 0:
            return s.entries_added - s.length + 1
    return ENTRIES_READ_UNKNOWN


cdef bint counter_usable(Stream s, ConsumerGroup g) noexcept:
    """Whether entries_read can be trusted: known, not behind a trimmed head, and
    no tombstone after the group's position (Redis 7.4+/8.0 rules)."""
    return (g.entries_read != ENTRIES_READ_UNKNOWN
            and id_cmp(&g.last_id, &s.first_id) >= 0
            and not tombstones_after(s, &g.last_id))


cdef object group_lag(Stream s, ConsumerGroup g):
    if s.entries_added == 0 or s.length == 0:
        return 0        # nothing ever added, or everything gone: nothing left to read
    if counter_usable(s, g):
        return <int64_t>s.entries_added - g.entries_read
    if (id_cmp(&g.last_id, &s.first_id) < 0
            and id_cmp(&s.max_deleted_id, &s.first_id) < 0):
        # Everything the group has not read is still in the stream, untouched.
        return s.length
    cdef int64_t read = estimate_entries_read(s, &g.last_id)
    if read == ENTRIES_READ_UNKNOWN:
        return None
    return <int64_t>s.entries_added - read


cdef void advance_last_delivered(Stream s, ConsumerGroup g, const StreamID* id) noexcept:
    if id_cmp(id, &g.last_id) <= 0:
        return
    if counter_usable(s, g):
        # wraps past INT64_MAX as Redis's counter does (and saves as it is)
        g.entries_read = <int64_t>(<uint64_t>g.entries_read + 1)
    elif s.entries_added:
        g.entries_read = estimate_entries_read(s, id)
    g.last_id = id[0]


cpdef Stream copy_stream(Stream s):
    cdef Stream out = s.copy_entries()
    cdef ConsumerGroup g
    for g in s.groups.values():
        out.groups[g.name] = g.copy()
    return out


# -- reference policies ------------------------------------------------------------

cdef bint entry_referenced(Stream s, const StreamID* id) except -1:
    """No group: nothing references anything (the policies then change nothing)."""
    cdef ConsumerGroup g
    for g in s.groups.values():
        if id_cmp(id, &g.last_id) > 0 or g.find_pending(id) != NULL:
            return True
    return False


cdef list drop_references(Stream s, const StreamID* id):
    cdef ConsumerGroup g
    cdef list hit = []
    for g in s.groups.values():
        if g.remove_pending(id):
            hit.append(g)
    return hit
