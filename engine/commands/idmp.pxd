# Idempotent production (Redis 8.6): XADD's IDMP / IDMPAUTO steps, XCFGSET, XIDMPRECORD.
from engine.core.streamid cimport StreamID
from engine.core.stream cimport Stream
from engine.commands.context cimport CommandContext

# XADD IDMP: the ID (formatted) of the entry this producer's iid already produced,
# counted as a duplicate; None when the iid is new (or forgotten).
cdef object idmp_duplicate(CommandContext ctx, Stream s, bytes pid, bytes iid)
# After XADD appended entry `id`: records the iid, logging XIDMPRECORD (preceded by
# XCFGSET when the stream's IDMP state is created here).
cdef int idmp_record(CommandContext ctx, bytes key, Stream s, bytes pid, bytes iid,
                     const StreamID* id) except -1
# XINFO STREAM's IDMP fields, [name, value, ...] (settings and zero counts from the
# configuration for a stream that has not used IDMP).
cdef list idmp_info(CommandContext ctx, Stream s)
