from engine.api.road cimport Client
from engine.commands.context cimport CommandContext


cdef class _Entry:
    cdef object record              # the command's record (None: unknown)
    cdef bint direct                # only the flag tests of ScriptCalls.call concern it
    cdef bint write
    cdef int arity


cdef class ScriptCalls:
    cdef readonly object session    # the client whose script runs (None between scripts)
    cdef readonly Client client     # the scripts' own client, their commands run as
    cdef readonly bint refuse_writes    # whether its writes are refused
    cdef public bint wrote          # it called a write command (SCRIPT KILL cannot stop it)
    cdef CommandContext ctx         # the scripts' command context (the client's)
    cdef dict records               # spelling -> its _Entry

    cpdef begin(self, session, bint refuse_writes)
    cpdef end(self)
    cpdef object call(self, list argv)
    cdef _Entry _entry(self, bytes name)
    cdef object _checked(self, object record, list argv)
