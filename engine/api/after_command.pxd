# What follows every command a client runs (engine/api/road.pyx's call and
# run_engine): the keys it changed go
# to the hub (WATCH, blocked readers), the keys whose groups changed wake their
# readers, and its keyspace events go to hub.events when someone wants them (the
# server's notify-keyspace-events) or a key expired (the server counts those). The
# context keeps them until this report takes them (the engine leaves them there), so
# callers need not save them around a call.
from engine.commands.context cimport CommandContext


cdef inline int report_command(object hub, CommandContext ctx, bint notify) except -1:
    """Hands over (and empties) ctx's touched keys, woken keys and events; notify:
    hub.notify_events (a caller running many commands reads it once)."""
    cdef list touched = ctx.touched, woken = ctx.woken, events = ctx.events
    if touched:
        ctx.touched = []
    if woken:
        ctx.woken = []
    if events:
        ctx.events = []
    if touched and (hub.watchers or hub.blocked):
        hub.touched(ctx.db.index, touched)
    if woken and hub.blocked:
        hub.wake(ctx.db.index, woken)
    if events and (notify or events[len(events) - 1][1] == b"expired"):
        hub.events(ctx.db.index, events)
    return 0
