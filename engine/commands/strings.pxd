# What the string command modules share (strings.pyx, string_edits.pyx).
from libc.stdint cimport int64_t
from engine.commands.context cimport CommandContext

# The string at key, None if absent; WRONGTYPE for any other type.
cdef object string_at(CommandContext ctx, bytes key)
# A string of `offset` + `length` bytes would exceed proto-max-bulk-len (the client's,
# ctx.max_string):
# Redis's error (checkStringLength), else nothing.
cdef int check_string_length(CommandContext ctx, int64_t offset, int64_t length) except -1
# An integer Redis keeps as one of its shared objects (0..9999: OBJECT REFCOUNT says so).
cdef bint shared_integer(bytes s)
