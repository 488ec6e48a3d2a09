"""The bookkeeping after a command (after_command.pxd), for Python callers."""
from engine.commands.context cimport CommandContext


def report(object hub, CommandContext ctx) -> None:
    """Hands a command's touched keys, woken keys and events to the hub."""
    report_command(hub, ctx, hub.notify_events)
