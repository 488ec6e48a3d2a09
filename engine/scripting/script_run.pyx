# cython: language_level=3
"""One run of a compiled script, compiled (EVALSHA runs it per request): KEYS and ARGV
handed to the sandbox's runner, the script's result checked and converted to a reply."""
from libc.stdint cimport INT64_MIN, INT64_MAX

from engine.core.errors import ResponseError
from engine.scripting.errors import script_error_text

cdef object _ResponseError = ResponseError
# KEYS and ARGV of up to this many values go to Lua as arguments of one call (cheaper
# than two tables made from Python); longer ones as tables (Lua's C stack is limited)
cdef Py_ssize_t MAX_VARARGS = 200


cpdef object run_script(object runtime, object fn, list keys, list args, str name):
    """Runs fn (runtime.compile's) with KEYS and ARGV; returns its reply, or raises
    ResponseError with the text Redis prints (`name`: the sha or the function).
    Booleans follow the protocol the script chose (redis.setresp): 1 and nil in RESP2,
    booleans in RESP3 (which a RESP2 client then reads as 1 and 0).

    A script that leaves a big heap behind has it collected at once: Lua 5.1 collects
    again only once the heap has doubled, and with no collection when an allocation
    fails, the next script would otherwise meet the heap's limit in garbage."""
    try:
        return _run(runtime, fn, keys, args, name)
    finally:
        lua = runtime.lua
        if lua.get_memory_used() > runtime.collect_above:
            lua.gccollect()


cdef object _run(object runtime, object fn, list keys, list args, str name):
    cdef Py_ssize_t nkeys = len(keys)
    runtime.resp3 = False
    if nkeys + len(args) <= MAX_VARARGS:
        result = runtime._run(fn, nkeys, *keys, *args)
    else:
        table = runtime._table
        result = runtime._run_tables(fn, table(keys), table(args))
    if type(result) is tuple:
        ok = (<tuple>result)[0]
        value = (<tuple>result)[1] if len(<tuple>result) > 1 else None
    else:
        ok, value = result, None
    if not ok:
        raise _ResponseError(script_error_text(runtime.failure(value), name))
    t = type(value)
    if t is bytes or (t is int and INT64_MIN <= value <= INT64_MAX):
        return value
    reply = runtime.lua_to_reply(value, runtime.resp3)
    if isinstance(reply, _ResponseError):
        raise reply
    return reply
