# cython: language_level=3
"""redis.call and redis.pcall, compiled (a script may call them millions of times): the
arguments as a command's argv, the command run by the runtime's `call`, its reply as the
Lua value the script gets; a failure is the {err=...} table, raised by redis.call and
returned by redis.pcall."""
from engine.core.errors import ResponseError
from engine.scripting.errors import LuaRaise, call_error_text

cdef object _ResponseError = ResponseError
cdef object _LuaRaise = LuaRaise
NO_ARGUMENTS = b"ERR Please specify at least one argument for this redis lib call"


cdef class RedisCall:
    """redis.call (protected=False) or redis.pcall (protected=True) of one runtime
    (engine/scripting/runtime.py)."""

    cdef object runtime
    cdef object call, call_resp3, table
    cdef bint protected

    def __init__(self, runtime, call, call_resp3, bint protected):
        self.runtime = runtime
        self.call = call
        self.call_resp3 = call_resp3
        self.table = runtime.lua.table_from
        self.protected = protected

    def __call__(self, *args):
        cdef list argv = list(args)
        for arg in args:
            if type(arg) is not bytes:
                try:
                    argv = self.runtime.numbers_formatted(args)
                except _LuaRaise as failure:
                    return self.failed(failure.value)
                break
        if not argv:
            return self.failed(NO_ARGUMENTS)
        cdef bint resp3 = self.runtime.resp3
        try:
            reply = (self.call_resp3 if resp3 else self.call)(argv)
        except _ResponseError as err:
            return self.failed(call_error_text(err).encode("utf-8", "surrogateescape"))
        t = type(reply)
        if t is int or t is bytes:
            return reply
        return self.runtime.reply_to_lua(reply, resp3)

    def packed(self, Py_ssize_t count, table):
        """The call with more arguments than lupa passes on a Lua stack, as the
        C closure of engine/scripting/wide_call.pyx hands them over."""
        return self(*[table[i] for i in range(1, count + 1)])

    cdef object failed(self, bytes text):
        """The {err=text} table: redis.pcall's value, redis.call's error."""
        error = self.table({b"err": text})
        if self.protected:
            return error
        raise _LuaRaise(error)
