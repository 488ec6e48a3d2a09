from libc.stdint cimport int64_t, uint64_t
from engine.core.streamid cimport StreamID
from engine.core.stream cimport Stream
from engine.core.groups cimport ConsumerGroup, Consumer
from engine.commands.context cimport CommandContext

cdef void propagate_delivery(CommandContext ctx, bytes key, ConsumerGroup g,
                             const StreamID* id) except *
# The same for a caller that knows the entry's state (`id_text`: its ID formatted)
# and has counted the change with ctx.logs(), which said to log it.
cdef void propagate_pending(CommandContext ctx, bytes key, ConsumerGroup g, bytes id_text,
                            Consumer owner, uint64_t time, int64_t count) except *
cdef void propagate_group_position(CommandContext ctx, bytes key, ConsumerGroup g) except *
cdef void propagate_consumer(CommandContext ctx, bytes key, ConsumerGroup g,
                             Consumer c) except *
cdef Consumer consumer_for(CommandContext ctx, bytes key, ConsumerGroup g, bytes name)
cdef void drop_vanished(CommandContext ctx, bytes key, ConsumerGroup g,
                        const StreamID* id) except *
