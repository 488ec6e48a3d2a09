# What follows every command a client runs, on both roads (Session.run and the
# server's compiled fast path, engine/server/fastpath.pyx): the keys it changed go
# to the hub (WATCH, blocked readers), the keys whose groups changed wake their
# readers, and its keyspace events go to hub.events when someone wants them (the
# server's notify-keyspace-events) or a key expired (the server counts those).
from engine.commands.context cimport CommandContext


cdef inline int report_command(object hub, CommandContext ctx, list touched, list woken,
                               list events, bint notify) except -1:
    """touched/woken/events: the lists ctx held while the command ran; notify:
    hub.notify_events (a caller running many commands reads it once)."""
    if touched and (hub.watchers or hub.blocked):
        hub.touched(ctx.db.index, touched)
    if woken and hub.blocked:
        hub.wake(ctx.db.index, woken)
    if events and (notify or events[len(events) - 1][1] == b"expired"):
        hub.events(ctx.db.index, events)
    return 0
