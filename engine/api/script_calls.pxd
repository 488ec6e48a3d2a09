from engine.api.road cimport Client
from engine.commands.context cimport CommandContext


cdef class ScriptCalls:
    cdef readonly object session    # the client whose script runs (None between scripts)
    cdef readonly Client client     # the scripts' own client, their commands run as
    cdef readonly bint refuse_writes    # whether its writes are refused
    cdef public bint wrote          # it called a write command (SCRIPT KILL cannot stop it)
    cdef CommandContext ctx         # the scripts' command context (the client's)
    cdef dict records               # spelling -> (record or None, runs without checks)

    cpdef begin(self, session, bint refuse_writes)
    cpdef end(self)
    cpdef object call(self, list argv)
    cdef tuple _entry(self, bytes name)
    cdef object _checked(self, object record, list argv)
