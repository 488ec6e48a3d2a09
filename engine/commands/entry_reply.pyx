"""Replies made of stream entries, built for the caller's context.

The embedded API gets Python lists (untracked by the cycle collector, see
engine/core/reply_lists.pxd). The server's contexts set `encode_replies`: the reply is
then RESP written as the command finds the entries, straight from the stream's
nodes into one buffer (an EncodedReply the server copies out as is). A claim of
1,000 entries so skips ~6,000 Python objects, their encoding and their freeing.

Counts that are only known at the end (entries that survived a filter, streams
that had entries) get their headers inserted before the elements when a list
closes (resp_writer.put_hdr_at).
"""
from libc.stdint cimport uint8_t, uint64_t, int64_t

from engine.core.streamid cimport StreamID, id_write, id_format
from engine.core.stream cimport (Stream, StreamNode, StreamIter, EntryFields, stream_iter_start,
                            stream_iter_next, stream_iter_stop, stream_entry_raw,
                            stored_string)
from libc.stdlib cimport free
from engine.resp.writer cimport (EncodedReply, WBuf, wb_mark, wb_insert, put_hdr, put_hdr_at,
                                 put_bulk, put_lit)
from engine.core.reply_lists cimport leaf_list
from engine.commands.context cimport CommandContext


cdef EntryReply entry_reply(CommandContext ctx):
    return _new(ctx, ctx.encode_replies)


cdef EntryReply entry_lists(CommandContext ctx):
    return _new(ctx, False)


cdef EntryReply _new(CommandContext ctx, bint encoded):
    cdef EntryReply r = EntryReply.__new__(EntryReply)
    r.encoded = encoded
    r.resp3 = ctx.resp3
    r.nil_array = ctx.nil_array
    r.idle = -1
    if r.encoded:
        r.out = EncodedReply.__new__(EncodedReply)
        r.b = &r.out.b
    else:
        r.fields = EntryFields.__new__(EntryFields)
    return r


cdef inline int put_id(WBuf* b, const StreamID* id) except -1:
    cdef char text[48]
    return put_bulk(b, text, id_write(text, id))


cdef int put_fields(WBuf* b, StreamNode* n, unsigned int off) except -1:
    """The entry's [field, value, ...] array, from its stored strings."""
    cdef const uint8_t* names
    cdef const uint8_t* values
    cdef const uint8_t* end
    cdef const char* s
    cdef Py_ssize_t length
    cdef uint64_t npairs = stream_entry_raw(n, off, &names, &values, &end), i
    put_hdr(b, c'*', <long long>(2 * npairs))
    if names == NULL:
        for i in range(2 * npairs):
            values = stored_string(values, &s, &length)
            put_bulk(b, s, length)
    else:
        for i in range(npairs):
            names = stored_string(names, &s, &length)
            put_bulk(b, s, length)
            values = stored_string(values, &s, &length)
            put_bulk(b, s, length)
    return 0


cdef inline int64_t hdr_size(uint64_t n) noexcept:
    """Bytes of a RESP header line with the number n: *<n>\\r\\n (or $<n>\\r\\n)."""
    cdef int64_t digits = 1
    while n >= 10:
        n //= 10
        digits += 1
    return 1 + digits + 2


cdef int64_t entry_resp_size(const StreamID* id, StreamNode* n, unsigned int off) noexcept:
    cdef char text[48]
    cdef const uint8_t* names
    cdef const uint8_t* values
    cdef const uint8_t* end
    cdef const char* s
    cdef Py_ssize_t length, id_length = id_write(text, id)
    cdef uint64_t npairs = stream_entry_raw(n, off, &names, &values, &end), i
    cdef int64_t size = 4 + hdr_size(id_length) + id_length + 2 + hdr_size(2 * npairs)
    for i in range(npairs):
        if names != NULL:
            names = stored_string(names, &s, &length)
        else:
            values = stored_string(values, &s, &length)
        size += hdr_size(length) + length + 2
        values = stored_string(values, &s, &length)
        size += hdr_size(length) + length + 2
    return size


cdef class EntryReply:
    """See the module docstring; made by entry_reply(ctx)."""

    cdef int begin_entries(self) except -1:
        self.nentries = 0
        if self.encoded:
            self.entries_at = wb_mark(self.b)
        else:
            self.entries = []
        return 0

    cdef int entry(self, const StreamID* id, StreamNode* n, unsigned int off) except -1:
        self.nentries += 1
        if not self.encoded:
            self.entries.append(leaf_list([id_format(id), self.fields.at(n, off)]))
            return 0
        put_lit(self.b, "*2\r\n", 4)
        put_id(self.b, id)
        return put_fields(self.b, n, off)

    cdef int entry_meta(self, const StreamID* id, StreamNode* n, unsigned int off,
                        int64_t idle, int64_t delivered) except -1:
        self.nentries += 1
        if not self.encoded:
            if idle != self.idle:           # entries claimed together often share it
                self.idle = idle
                self.idle_obj = idle
            self.entries.append(leaf_list([id_format(id), self.fields.at(n, off),
                                           self.idle_obj, delivered]))
            return 0
        put_lit(self.b, "*4\r\n", 4)
        put_id(self.b, id)
        put_fields(self.b, n, off)
        put_hdr(self.b, c':', idle)
        return put_hdr(self.b, c':', delivered)

    cdef int entry_missing(self, const StreamID* id) except -1:
        self.nentries += 1
        if not self.encoded:
            self.entries.append([id_format(id), self.nil_array])
            return 0
        put_lit(self.b, "*2\r\n", 4)
        put_id(self.b, id)
        if self.resp3:
            return put_lit(self.b, "_\r\n", 3)
        return put_lit(self.b, "*-1\r\n", 5)

    cdef int entry_id(self, const StreamID* id) except -1:
        self.nentries += 1
        if not self.encoded:
            self.entries.append(id_format(id))
            return 0
        return put_id(self.b, id)

    cdef int entry_range(self, Stream s, const StreamID* start, const StreamID* end,
                         int64_t count, bint rev) except -1:
        cdef StreamIter it
        cdef StreamID id
        cdef int64_t emitted = 0
        if count == 0:
            return 0
        stream_iter_start(&it, s, start, end, rev)
        try:
            while stream_iter_next(&it, &id):
                self.entry(&id, it.node, it.cur)
                emitted += 1
                if emitted == count:
                    break
        finally:
            stream_iter_stop(&it)
        return 0

    cdef object end_entries(self):
        if not self.encoded:
            return self.entries
        put_hdr_at(self.b, self.entries_at, c'*', self.nentries)
        return self.out

    cdef object end_autoclaim(self, const StreamID* cursor, list deleted):
        cdef WBuf head
        cdef bytes id_text
        if not self.encoded:
            return [id_format(cursor), self.entries, deleted]
        head.data = NULL
        head.len = head.cap = 0
        try:
            put_lit(&head, "*3\r\n", 4)
            put_id(&head, cursor)
            put_hdr(&head, c'*', self.nentries)
            wb_insert(self.b, self.entries_at, head.data, head.len)
        finally:
            free(head.data)
        put_hdr(self.b, c'*', len(deleted))
        for id_text in deleted:
            put_bulk(self.b, id_text, len(id_text))
        return self.out

    cdef int begin_streams(self) except -1:
        self.nstreams = 0
        if self.encoded:
            self.streams_at = wb_mark(self.b)
        else:
            self.streams = []
        return 0

    cdef int begin_stream(self, bytes key) except -1:
        if self.encoded:
            self.stream_at = wb_mark(self.b)
            if not self.resp3:
                put_lit(self.b, "*2\r\n", 4)
            put_bulk(self.b, key, len(key))
        else:
            self.key = key
        return self.begin_entries()

    cdef int end_stream(self, bint keep_empty) except -1:
        if self.nentries == 0 and not keep_empty:
            if self.encoded:
                self.b.len = self.stream_at
            return 0
        self.nstreams += 1
        if self.encoded:
            put_hdr_at(self.b, self.entries_at, c'*', self.nentries)
        else:
            self.streams.append([self.key, self.entries])
        return 0

    cdef object end_streams(self):
        if self.nstreams == 0:
            return None
        if self.encoded:
            put_hdr_at(self.b, self.streams_at, c'%' if self.resp3 else c'*', self.nstreams)
            return self.out
        if self.resp3:
            return {k: v for k, v in self.streams}
        return self.streams
