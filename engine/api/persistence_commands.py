"""SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE: the engine's handlers of these records of
engine/commands/table.py live here, in the API layer, because they drive the
engine's persistence (persist.durability): the command layer reaches the disk only
through the effects list and imports nothing from persist/."""
import logging

from engine.commands.table import command
from engine.core.errors import SYNTAX, ResponseError
from engine.resp.reply import OK, Status
from persist import PersistError

NOT_PERSISTENT = "ERR persistence is off: this engine was created without a data directory"


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
