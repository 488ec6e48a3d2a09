from engine.commands.context cimport CommandContext


cdef class ScriptCalls:
    cdef readonly object session    # the running script's client (None between scripts)
    cdef object hub                 # its hub
    cdef readonly bint refuse_writes    # whether its writes are refused
    cdef readonly object stats      # where its commands count (the session's `stats`)
    cdef public bint wrote          # it called a write command (SCRIPT KILL cannot stop it)
    cdef CommandContext ctx         # the scripts' command context
    cdef object execute_in
    cdef object checked             # argv -> reply: the checked road
    cdef dict direct                # spelling -> (record, its stat) or _CHECKED
    cdef object stats_of            # the stats the cached stat objects belong to

    cpdef begin(self, session, bint refuse_writes)
    cpdef end(self)
    cpdef object call(self, list argv)
    cdef tuple _entry(self, bytes name)
