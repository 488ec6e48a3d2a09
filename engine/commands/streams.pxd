from engine.core.streamid cimport StreamID
from engine.core.stream cimport Stream
from engine.commands.context cimport CommandContext

cdef bint stream_edge_id(Stream s, bint last, StreamID* out) except -1
cdef void refresh_first_id(Stream s) except *
cdef Stream stream_for_write(CommandContext ctx, bytes key, bint create)
# Deletes one entry as XDEL does (max_deleted_id, first_id); 1 if it was there.
cdef bint delete_entry(Stream s, const StreamID* id) except -1
# XACK effects for acks: group name -> list of ID texts.
cdef void log_acks(CommandContext ctx, bytes key, dict acks) except *
