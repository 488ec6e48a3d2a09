# What follows every command a client runs, on both roads (Session.run and the
# server's compiled fast path, engine/server/fastpath.pyx): the keys it changed go
# to the hub (WATCH, blocked readers), the keys whose groups changed wake their
# readers, and its keyspace events go to hub.events when someone wants them (the
# server's notify-keyspace-events) or a key expired (the server counts those).
from engine.commands.context cimport CommandContext


cdef inline int report_command(object hub, CommandContext ctx, list touched, list woken,
                               list events) except -1:
    """touched/woken/events: the lists ctx held while the command ran."""
    if touched and (hub.watchers or hub.blocked):
        hub.touched(ctx.db.index, touched)
    if woken and hub.blocked:
        hub.wake(ctx.db.index, woken)
    if events and (hub.notify_events or events[len(events) - 1][1] == b"expired"):
        hub.events(ctx.db.index, events)
    return 0
