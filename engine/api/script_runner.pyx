# cython: language_level=3
"""A script's run, compiled: what EVALSHA does per request once its script is cached
(engine/api/scripts.py's Scripting builds on it: the cache, SCRIPT, the busy state).

`ScriptRunner.eval` finds the script and runs it with the caller's session: the
script's command context in the session's place, the caller's subscriptions out of
the way, its writes bracketed as one transaction for the AOF, and everything put back
however the script ends."""
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.api.script_calls cimport ScriptCalls
from engine.commands.context cimport CommandContext
from engine.core.errors import NOT_INTEGER, OOM, ResponseError
from engine.resp.numbers import strict_int
from engine.scripting.script_run cimport run_script

NOSCRIPT = "NOSCRIPT No matching script. Please use EVAL."
NEGATIVE_KEYS = "ERR Number of keys can't be negative"
TOO_MANY_KEYS = "ERR Number of keys can't be greater than number of args"
WRITE_FLAG_IN_RO = "ERR Can not execute a script with write flag using *_ro command."

cdef object _ResponseError = ResponseError
cdef object _strict_int = strict_int


cdef inline double monotonic() noexcept nogil:
    """time.monotonic()'s clock, without the call."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef class Script:
    """A compiled script of the cache; `flags` are its shebang's (None: no shebang, it
    may write unless run by EVAL_RO/EVALSHA_RO)."""

    cdef readonly object fn
    cdef readonly object flags

    def __init__(self, fn, flags):
        self.fn = fn
        self.flags = flags

    cpdef bint readonly(self, bint by_ro_command) except -1:
        """Whether its writes are refused, or raises: a shebang script that may write
        cannot run through the _RO commands."""
        if self.flags is None:
            return by_ro_command
        cdef bint no_writes = b"no-writes" in self.flags
        if by_ro_command and not no_writes:
            raise _ResponseError(WRITE_FLAG_IN_RO)
        return no_writes


    def refused_for_memory(self, engine) -> bool:
        """Whether it may not start: over maxmemory, a shebang script that may write and
        has no allow-oom flag (a script without a shebang is checked at its writes)."""
        return (self.flags is not None and b"no-writes" not in self.flags
                and b"allow-oom" not in self.flags and engine.maxmemory != 0
                and engine.over_maxmemory())


cpdef tuple keys_and_args(list argv, str not_a_count):
    """The keys and arguments of `<command> <script> numkeys key... arg...` (EVAL,
    FCALL), with Redis's errors (`not_a_count`: when numkeys is not an integer)."""
    numkeys = _strict_int(argv[2])
    if numkeys is None:
        raise _ResponseError(not_a_count)
    if numkeys > len(argv) - 3:
        raise _ResponseError(TOO_MANY_KEYS)
    if numkeys < 0:
        raise _ResponseError(NEGATIVE_KEYS)
    cdef Py_ssize_t n = numkeys
    return argv[3:3 + n], argv[3 + n:]


cdef class ScriptRunner:
    """The running part of an engine's scripting (see the module docstring)."""

    cdef public object engine
    cdef public object runtime          # the interpreter (engine.scripting.ScriptRuntime)
    cdef public dict scripts            # sha1 (lower-case hex) -> Script
    cdef public ScriptCalls _calls      # the running script's commands
    cdef public CommandContext _ctx     # the scripts' command context (they never overlap)
    # the running script's start, name (sha or function) and FCALL argv; its busy state
    # once past busy-reply-threshold
    cdef public double _started
    cdef public str _name
    cdef public object _command
    cdef public object _busy

    cpdef object eval(self, session, list argv, bint by_sha, bint readonly):
        """EVAL / EVALSHA (and _RO) script numkeys key... arg...: the script's reply."""
        cdef tuple split = keys_and_args(argv, NOT_INTEGER)
        cdef Script script
        cdef bytes sha
        if by_sha:
            sha = argv[1]
            script = self.scripts.get(sha)
            if script is None:
                sha = sha.lower()
                script = self.scripts.get(sha)
                if script is None:
                    raise _ResponseError(NOSCRIPT)
        else:
            sha = self.load(argv[1])
            script = self.scripts[sha]
        if script.refused_for_memory(self.engine):
            raise _ResponseError(OOM)
        return self.run(session, script.fn, sha.decode(), split[0], split[1],
                        readonly if script.flags is None else script.readonly(readonly))

    cpdef object run(self, session, fn, str name, list keys, list args, bint readonly,
                     object command=None):
        """Runs a script (`command` None) or a function (FCALL's argv) for session."""
        cdef object engine = self.engine
        cdef ScriptCalls calls = self._calls
        cdef CommandContext ctx = self._ctx
        self._started = monotonic()
        self._name = name
        self._command = command
        hub = session.hub
        own = session.ctx
        calls.begin(session, readonly)
        channels, patterns, cmd_name = session.channels, session.patterns, session.cmd_name
        shard_channels = session.shard_channels
        cdef bint subscribed = channels or patterns or shard_channels
        session.ctx = ctx
        if subscribed:
            # the caller's subscriptions do not apply to the script's commands (a RESP3
            # subscriber may run scripts)
            session.channels, session.patterns, session.shard_channels = {}, {}, {}
        engine.transaction_begin()
        try:
            return run_script(self.runtime, fn, keys, args, name)
        finally:
            try:
                engine.transaction_end(ctx.db.index, own)
            finally:
                calls.end()
                if self._busy is not None:
                    self._busy_over()
                session.ctx = own
                if subscribed:
                    session.channels = channels
                    session.patterns = patterns
                    session.shard_channels = shard_channels
                session.cmd_name = cmd_name
                session.null_array = session.rejected = False   # (the script ran)
                if hub.tracking:
                    own.tracking = True
