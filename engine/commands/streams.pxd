from engine.core.streamid cimport StreamID
from engine.core.stream cimport Stream
from engine.commands.context cimport CommandContext

cdef bint stream_edge_id(Stream s, bint last, StreamID* out) except -1
cdef void refresh_first_id(Stream s) except *
cdef Stream stream_for_write(CommandContext ctx, bytes key, bint create)
