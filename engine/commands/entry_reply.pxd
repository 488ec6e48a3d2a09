# Replies made of stream entries (XRANGE, XREAD, XREADGROUP, XCLAIM...), built in
# the form the caller's context asks for: Python values for the embedded API, or
# RESP written straight from the stream's nodes for the server (no Python object
# per entry, field or value). See entry_reply.pyx.

from libc.stdint cimport int64_t
from engine.core.streamid cimport StreamID
from engine.core.stream cimport Stream, StreamNode, EntryFields
from engine.resp.writer cimport EncodedReply, WBuf
from engine.commands.context cimport CommandContext

cdef class EntryReply:
    cdef bint encoded                 # RESP into `out` (else Python lists)
    cdef bint resp3
    cdef EncodedReply out
    cdef WBuf* b                      # &out.b
    cdef EntryFields fields
    cdef object nil_array
    cdef list streams                 # Python: [key, entries] pairs served
    cdef list entries                 # Python: the entry list being filled
    cdef bytes key                    # Python: the stream being filled
    cdef readonly Py_ssize_t nstreams
    cdef readonly Py_ssize_t nentries # entries of the list being filled
    cdef Py_ssize_t streams_at        # RESP: where each header goes
    cdef Py_ssize_t stream_at
    cdef Py_ssize_t entries_at
    cdef int64_t idle                 # Python: the idle time last boxed, and its box
    cdef object idle_obj

    # A list of entries: begin, add, end (returns the reply, or keeps it for the
    # stream list it belongs to).
    cdef int begin_entries(self) except -1
    cdef int entry(self, const StreamID* id, StreamNode* n, unsigned int off) except -1
    # With CLAIM's two extra fields: idle ms and the delivery count before this one.
    cdef int entry_meta(self, const StreamID* id, StreamNode* n, unsigned int off,
                        int64_t idle, int64_t delivered) except -1
    # [id, nil]: a pending entry whose stream entry is gone.
    cdef int entry_missing(self, const StreamID* id) except -1
    # The ID alone (XCLAIM/XAUTOCLAIM JUSTID).
    cdef int entry_id(self, const StreamID* id) except -1
    # The live entries of [start, end] in either direction, at most count (< 0: all).
    cdef int entry_range(self, Stream s, const StreamID* start, const StreamID* end,
                         int64_t count, bint rev) except -1
    cdef object end_entries(self)
    # XAUTOCLAIM's [cursor, entries, deleted IDs] around the entries just added.
    cdef object end_autoclaim(self, const StreamID* cursor, list deleted)

    # XREAD's streams: [[key, entries], ...] (a map in RESP3). end_stream drops a
    # stream without entries unless keep_empty; end_streams gives None when no
    # stream is left.
    cdef int begin_streams(self) except -1
    cdef int begin_stream(self, bytes key) except -1
    cdef int end_stream(self, bint keep_empty) except -1
    cdef object end_streams(self)

cdef EntryReply entry_reply(CommandContext ctx)
# The bytes of [id, [field, value, ...]] in RESP2, as a reply would carry the entry
# (XREAD/XREADGROUP MAXSIZE measure replies with it, whatever the protocol).
cdef int64_t entry_resp_size(const StreamID* id, StreamNode* n, unsigned int off) noexcept
# Python values whatever the context (a part of a bigger reply, as XINFO's).
cdef EntryReply entry_lists(CommandContext ctx)
