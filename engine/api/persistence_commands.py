"""SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, WAITAOF: the engine's handlers of these
records of engine/commands/table/ live here, in the API layer, because they drive
(or wait for) the engine's persistence (persist.durability): the command layer
reaches the disk only through the effects list and imports nothing from persist/."""
import logging

from engine.commands.parsing import py_parse_timeout
from engine.commands.reads import BlockRequest
from engine.commands.table import command
from engine.core.errors import SYNTAX, ResponseError
from engine.resp.numbers import strict_int
from engine.resp.reply import OK, Status
from persist import PersistError

NOT_PERSISTENT = "ERR persistence is off: this engine was created without a data directory"
NOT_AN_INTEGER = "ERR value is not an integer or out of range"
AOF_OFF = "ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled."
LONG_MAX = (1 << 63) - 1


def _durability(ctx):
    durability = ctx.engine.durability
    if durability is None:
        raise ResponseError(NOT_PERSISTENT)
    return durability


def _run(action):
    try:
        return action()
    except PersistError as exc:
        raise ResponseError(f"ERR {exc}" if str(exc) else "ERR") from None
    except OSError as exc:
        raise ResponseError(f"ERR {exc.strerror or exc}") from None


@command("save")
def save(ctx, argv):
    durability = _durability(ctx)

    def write() -> None:
        try:
            durability.save()
        except OSError as exc:
            # Redis answers a failed SAVE with a bare ERR; the reason goes to the log.
            logging.getLogger("sluice").warning("Error saving DB on disk: %s",
                                                exc.strerror or exc)
            raise PersistError("") from None
    _run(write)
    return OK


@command("bgsave")
def bgsave(ctx, argv):
    schedule = False
    if len(argv) > 1:
        if len(argv) > 2 or argv[1].lower() != b"schedule":
            raise ResponseError(SYNTAX)
        schedule = True
    durability = _durability(ctx)
    return Status(_run(lambda: durability.bgsave(schedule)).encode())


@command("bgrewriteaof")
def bgrewriteaof(ctx, argv):
    return Status(_run(_durability(ctx).bgrewriteaof).encode())


@command("lastsave")
def lastsave(ctx, argv):
    return _durability(ctx).lastsave


def _long_in(arg: bytes, low: int, high: int, message: str) -> int:
    """An integer argument within [low, high] (Redis's getRangeLongFromObjectOrReply)."""
    value = strict_int(arg)
    if value is None:
        raise ResponseError(NOT_AN_INTEGER)
    if not low <= value <= high:
        raise ResponseError(message)
    return value


@command("waitaof")
def waitaof(ctx, argv):
    """WAITAOF numlocal numreplicas timeout: [1 when the AOF has fsynced this client's
    writes so far (ctx.write_seq) else 0, the replicas that did: always 0, Sluice has
    none]. Until numlocal and numreplicas are reached it waits (a BlockRequest the
    fsyncs wake; a client that may not block - MULTI, a script, Engine.execute - gets
    this reply at once), up to `timeout` ms (0: forever): numreplicas > 0 waits for
    the whole timeout, as Redis does with no replica. Without an AOF, numlocal 1 is
    an error and the local count 0."""
    numlocal = _long_in(argv[1], 0, 1, "ERR value is out of range, value must between 0 and 1")
    numreplicas = _long_in(argv[2], 0, LONG_MAX, "ERR value is out of range, must be positive")
    deadline = py_parse_timeout(argv[3], ctx.now, False)
    durability = ctx.engine.durability
    fsynced = -1 if durability is None else durability.fsynced_seq
    if numlocal and fsynced < 0:
        raise ResponseError(AOF_OFF)
    local = int(fsynced >= ctx.write_seq)
    if local < numlocal or numreplicas > 0:
        ctx.block = BlockRequest([], deadline - ctx.now if deadline else 0, argv,
                                 on_fsync=True)
    return [local, 0]
