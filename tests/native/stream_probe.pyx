# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A Stream driven from Python, for tests/core/test_stream_storage.py: StreamTestView appends,
deletes, trims and iterates through the cdef API and reads the nodes' layout back.
Built by `make test` (tests/native/setup.py), never shipped."""
from libc.stdint cimport uint8_t, uint32_t, uint64_t, int64_t
from libc.stdlib cimport malloc, free

from engine.core.radix cimport RadixIter, RADIX_FIRST, radix_iter_init, radix_seek, radix_next
from engine.core.streamid cimport StreamID, id_cmp, id_encode
from engine.core.stream cimport (
    Stream, StreamNode, StreamIter, EntryPos, Entry, TrimStrategy, TRIM_NONE, TRIM_MAXLEN,
    TRIM_MINID, FLAG_DELETED, CP_EVERY, CP_NARROW_MAX, stream_iter_start, stream_iter_next,
    stream_iter_fields, stream_iter_stop, _entry_head, _entry_skip, _node_at, _node_for,
    _find_in, _lp_bytes, _cap, _cp_end, _cp_count, _cp_width, _cp_get)

cdef extern from "<malloc.h>":
    size_t malloc_usable_size(void* ptr) nogil

CHECKPOINT_EVERY = CP_EVERY
CHECKPOINT_NARROW_MAX = CP_NARROW_MAX


cdef inline StreamID _sid(tuple t):
    cdef StreamID sid
    sid.ms = t[0]
    sid.seq = t[1]
    return sid


cdef class StreamTestView:
    """Drives a Stream from Python so tests can check it against a model and Redis."""
    cdef readonly Stream stream

    def __cinit__(self, Stream stream=None):
        self.stream = stream if stream is not None else Stream()

    def append(self, tuple id, list fields, uint64_t max_bytes=4096, uint64_t max_entries=100):
        cdef StreamID sid = _sid(id)
        self.stream.append(&sid, fields, 0, len(fields) // 2, max_bytes, max_entries)

    def append_many(self, list ids, list fields, uint64_t max_bytes=4096,
                    uint64_t max_entries=100):
        """ids[i] gets fields[2i:2i+2]... (one pair each); one call for bulk loads."""
        cdef StreamID sid
        cdef Py_ssize_t i
        for i in range(len(ids)):
            sid = _sid(ids[i])
            self.stream.append(&sid, fields, 2 * i, 1, max_bytes, max_entries)

    def delete(self, tuple id):
        cdef StreamID sid = _sid(id)
        return self.stream.delete(&sid)

    def contains(self, tuple id):
        cdef StreamID sid = _sid(id)
        return self.stream.contains(&sid)

    def fields_of(self, tuple id):
        cdef StreamID sid = _sid(id)
        return self.stream.fields_of(&sid)

    def locate_many(self, list ids):
        """Stream.locate_many over ids (one batch, in the given order): for each,
        whether it found a live entry, checked to be the right one."""
        cdef Py_ssize_t n = len(ids), i
        cdef StreamID* sids = <StreamID*>malloc(max(n, 1) * sizeof(StreamID))
        cdef EntryPos* out = <EntryPos*>malloc(max(n, 1) * sizeof(EntryPos))
        cdef Entry e
        found = []
        try:
            for i in range(n):
                sids[i] = _sid(ids[i])
            self.stream.locate_many(sids, n, out)
            for i in range(n):
                if out[i].node != NULL:
                    _entry_head(out[i].node, out[i].off, &e)
                    assert id_cmp(&e.id, &sids[i]) == 0 and not e.flags & FLAG_DELETED
                found.append(out[i].node != NULL)
        finally:
            free(sids)
            free(out)
        return found

    def find_guessing(self, tuple id, uint32_t guess):
        """Whether the lookup in id's node finds an entry (live or not) with this ID
        when its search starts from entry number `guess`, however wrong."""
        cdef StreamID sid = _sid(id), lo, hi
        cdef uint64_t key[2]
        cdef bint bounded
        cdef Entry e
        id_encode(&sid, <uint8_t*>key)
        cdef StreamNode* n = _node_for(self.stream, key, &lo, &hi, &bounded, NULL)
        return n != NULL and _find_in(n, &sid, &e, guess) == 1

    def trim(self, str strategy, uint64_t maxlen=0, tuple minid=(0, 0),
             bint approx=False, int64_t limit=0):
        cdef StreamID sid = _sid(minid)
        cdef TrimStrategy st = TRIM_NONE
        if strategy == "maxlen":
            st = TRIM_MAXLEN
        elif strategy == "minid":
            st = TRIM_MINID
        return self.stream.trim(st, maxlen, &sid, approx, limit)

    def range(self, tuple start, tuple end, int64_t count=-1, bint rev=False):
        """XRANGE's reply shape: [[b"ms-seq", [f, v, ...]], ...], at most count."""
        return [[b"%d-%d" % (ms, seq), fields]
                for (ms, seq), fields in self.iterate(start, end, rev, count)]

    def iterate(self, tuple start, tuple end, bint rev=False, int64_t count=-1):
        """[((ms, seq), [f, v, ...]), ...] through the C iterator, at most count."""
        cdef StreamID a = _sid(start), b = _sid(end), sid
        cdef StreamIter it
        cdef list out = []
        stream_iter_start(&it, self.stream, &a, &b, rev)
        while len(out) != count and stream_iter_next(&it, &sid):
            out.append(((sid.ms, sid.seq), stream_iter_fields(&it)))
        stream_iter_stop(&it)
        return out

    def nodes(self):
        """[(master (ms, seq), live, deleted, listpack bytes, data bytes), ...]."""
        cdef RadixIter ri
        cdef StreamNode* n
        cdef list out = []
        radix_iter_init(&ri, self.stream.nodes)
        found = radix_seek(&ri, RADIX_FIRST, NULL)
        while found:
            n = _node_at(&ri)
            out.append(((n.master.ms, n.master.seq), n.live, n.deleted, _lp_bytes(n), n.used))
            found = radix_next(&ri)
        return out

    def layout(self):
        """Per node: (entry offsets, checkpoint offsets, checkpoint width, used,
        capacity, capacity from malloc_usable_size), read from the node itself."""
        cdef RadixIter ri
        cdef StreamNode* n
        cdef Entry e
        cdef uint32_t off, i, width
        cdef list out = [], offs, cps
        radix_iter_init(&ri, self.stream.nodes)
        found = radix_seek(&ri, RADIX_FIRST, NULL)
        while found:
            n = _node_at(&ri)
            offs = []
            off = n.entries_off
            while off < n.used:
                offs.append(off)
                _entry_head(n, off, &e)
                _entry_skip(n, &e)
                off = e.end
            width = _cp_width(n.used)
            cps = [_cp_get(_cp_end(n), width, i)
                   for i in range(_cp_count(<uint64_t>n.live + n.deleted))]
            out.append((offs, cps, width, n.used, _cap(n),
                        malloc_usable_size(n) - sizeof(StreamNode)))
            found = radix_next(&ri)
        return out

    @property
    def length(self):
        return self.stream.length

    @property
    def first_id(self):
        return (self.stream.first_id.ms, self.stream.first_id.seq)

    @property
    def node_count(self):
        return self.stream.node_count()

    @property
    def memory_bytes(self):
        return self.stream.memory_bytes()
