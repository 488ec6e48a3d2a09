# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Consumer groups inspected from Python, for the PEL and claim tests: pel_by_time in
order, a consumer's PEL state, and verify_group, which checks that the group PEL, the
consumers' PELs and pel_by_time agree. Built by `make test` (tests/native/setup.py),
never shipped."""
from libc.stdint cimport uint8_t, uint64_t

from engine.core.groups cimport (ConsumerGroup, Consumer, PendingEntry, COMPACT_MIN, pe_time,
                                 time_key, too_stale)
from engine.core.radix cimport (RadixIter, RADIX_FIRST, radix_count, radix_find,
                                radix_iter_init, radix_seek, radix_next)
from engine.core.streamid cimport StreamID, id_decode, u64_from_be


def pending_by_time(ConsumerGroup g) -> list:
    """pel_by_time in order, as (delivery_time, "ms-seq") pairs."""
    cdef RadixIter it
    cdef StreamID sid
    out = []
    radix_iter_init(&it, g.pel_by_time)
    cdef int ok = radix_seek(&it, RADIX_FIRST, NULL)
    while ok:
        id_decode(it.key + 8, &sid)
        out.append((u64_from_be(it.key), f"{sid.ms}-{sid.seq}"))
        ok = radix_next(&it)
    return out


def consumer_pel_state(ConsumerGroup g, bytes name) -> tuple:
    """(keys in the consumer's PEL, entries it owns, whether a sweep is under way)."""
    cdef Consumer c = g.consumers[name]
    return radix_count(c.pel), c.pending, bool(c.sweeping)


def verify_group(ConsumerGroup g) -> None:
    """Raises AssertionError unless the PEL, consumer PELs and pel_by_time agree."""
    cdef RadixIter it
    cdef StreamID sid
    cdef PendingEntry* pe
    cdef uint8_t tkey[24]
    cdef Consumer c
    cdef uint64_t stale
    owned = {}
    radix_iter_init(&it, g.pel)
    cdef int ok = radix_seek(&it, RADIX_FIRST, NULL)
    while ok:
        id_decode(it.key, &sid)
        pe = <PendingEntry*>it.value
        c = g.consumer_by_id[pe.consumer_id]
        assert c is not None, "pending entry owned by a deleted consumer"
        assert radix_find(c.pel, it.key) != NULL, "entry missing from its owner's PEL"
        owned[c.name] = owned.get(c.name, 0) + 1
        time_key(pe_time(pe), &sid, tkey)
        assert radix_find(g.pel_by_time, tkey) != NULL, "entry missing from pel_by_time"
        ok = radix_next(&it)
    for c in g.consumers.values():
        assert c.pending == owned.get(c.name, 0), "a consumer's pending count is wrong"
        stale = radix_count(c.pel) - c.pending
        assert c.pending > 0 or stale == 0, "stale keys kept by a consumer owning none"
        assert stale <= 3 * c.pending + 2 * COMPACT_MIN, "too many stale keys kept"
        assert c.sweeping or not too_stale(stale, c.pending), \
            "too many stale keys kept, and no sweep under way"
    assert radix_count(g.pel_by_time) == radix_count(g.pel), "pel_by_time size differs"
