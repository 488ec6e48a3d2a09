"""Connection/server commands for the embedded API: PING, ECHO, TIME, SELECT."""
from libc.stdint cimport int64_t

from engine.commands.context cimport CommandContext
from engine.commands.parsing cimport parse_int
from engine.commands.table import command
from engine.core.errors import ResponseError, wrong_arity
from engine.resp.reply import OK, PONG


@command("ping")
def ping(CommandContext ctx, list argv):
    if len(argv) > 2:
        raise wrong_arity("ping")
    if len(argv) == 2:
        return argv[1]
    return PONG


@command("echo")
def echo(CommandContext ctx, list argv):
    return argv[1]


@command("time")
def time(CommandContext ctx, list argv):
    cdef int64_t us = ctx.clock.now_us()
    return [str(us // 1000000).encode(), str(us % 1000000).encode()]


@command("select")
def select(CommandContext ctx, list argv):
    """Switches this caller's context to another database."""
    cdef int64_t index = parse_int(argv[1], NULL)
    if index < -2147483648 or index > 2147483647:
        raise ResponseError("ERR value is out of range, value must between "
                            "-2147483648 and 2147483647")
    databases = ctx.keyspace.databases
    if index < 0 or index >= len(databases):
        raise ResponseError("ERR DB index is out of range")
    ctx.db = databases[index]
    return OK
