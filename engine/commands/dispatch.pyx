"""From an argv to a reply: lookup, arity check, the call, and the bookkeeping after.

Lazy expiry discovered during a command becomes a `DEL` effect and an `expired`
event here, so the keyspace never needs to know about logs or clients.
"""
from engine.commands.context cimport CommandContext
from engine.commands.table import ENGINE_COMMANDS
from engine.core.errors import ResponseError, arity_refused, unknown_command, unknown_subcommand

cdef dict _commands = ENGINE_COMMANDS


cpdef object resolve(list argv):
    """The engine's record for argv (subcommand resolved: engine/commands/table/),
    or raises Redis's error."""
    cdef bytes name = argv[0]
    spec = _commands.get(name)
    if spec is None:
        spec = _commands.get(name.lower())
        if spec is None:
            raise unknown_command(argv)
    return _check(spec, argv)


cpdef object check(object spec, list argv):
    """Redis's lookup checks for argv, whose command is `spec`: the subcommand's record
    for a container (unless it runs alone: COMMAND), and the arity; raises their
    error."""
    return _check(spec, argv)


cdef inline object _check(object spec, list argv):
    cdef Py_ssize_t argc = len(argv)
    if spec.subcommands is not None and (argc >= 2 or not spec.base_ok):
        if argc < 2:
            raise arity_refused(spec.name)
        sub = spec.subcommands.get(argv[1].lower())
        if sub is None:
            raise unknown_subcommand(argv[0], argv[1])
        spec = sub
    cdef int arity = spec.arity
    if (arity > 0 and argc != arity) or (arity < 0 and argc < -arity):
        raise arity_refused(spec.name)
    return spec


cpdef object dispatch(CommandContext ctx, list argv):
    """Runs one command; effects/touched/events accumulate on ctx."""
    spec = resolve(argv)
    ctx.now = ctx.clock.now_ms()
    ctx.null_array = False
    try:
        return spec.handler(ctx, argv)
    finally:
        if ctx.pending(ctx.db):
            ctx.fire_pending(ctx.db)
        if ctx.db.expired:
            drain_expired(ctx)


cpdef void drain_expired(CommandContext ctx):
    """Turns keys the keyspace expired into DEL effects and `expired` events."""
    cdef list expired = ctx.db.expired
    cdef Py_ssize_t fired = ctx.expired_fired     # (their events fired as they expired)
    ctx.db.expired = []
    ctx.expired_fired = 0
    # The log must delete an expired key before any later change to it, so these
    # effects go before whatever the command itself reported.
    # Expiring is no change for the save points (Redis does not count it either).
    if ctx.logging:
        ctx.effects[0:0] = [[b"DEL", key] for key in expired]
    for key in expired[fired:]:
        ctx.touch(key, "x", b"expired")


cdef inline bytes _as_bytes(object arg):
    if type(arg) is bytes:
        return <bytes>arg
    if isinstance(arg, str):
        return (<str>arg).encode()
    if isinstance(arg, bool):
        raise TypeError("booleans are not valid command arguments")
    if isinstance(arg, (int, float)):
        return repr(arg).encode()
    if isinstance(arg, (bytearray, memoryview)):
        return bytes(arg)
    raise TypeError(f"invalid argument type {type(arg).__name__}")


cpdef list to_argv(tuple args):
    """Command arguments as bytes, the way redis-py encodes them."""
    return [_as_bytes(a) for a in args]
