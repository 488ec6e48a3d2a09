"""The server's hub: its sessions share WATCH, the password and the registry of
blocked clients (engine/api/blocked_clients.py), which waits on the event loop: its
timers are the loop's, the fsync listener's news reaches it through
call_soon_threadsafe, and the replies it answers go out with the round's flush.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from engine.api.session import Hub
from engine.commands.dispatch import resolve
from engine.commands.table import Command
from engine.core.errors import ResponseError

INT64_MAX = (1 << 63) - 1

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.server import Server


class ServerHub(Hub):
    """The sessions of the server: WATCH (Hub), blocked clients, password, and the
    busy script's hooks."""

    def __init__(self, server: "Server") -> None:
        super().__init__(server.engine, track=True)
        self.server = server
        self.blocked_clients.after_serving = server.flush_pending

    def start(self, loop) -> None:
        """The event loop is running: blocked clients wait on it."""
        self.blocked_clients.waiting = loop

    def while_busy(self) -> None:
        self.server.busy_script().serve()

    def busy_over(self) -> None:
        self.server.busy_script_over()

    def disconnect(self, session) -> None:
        """A client whose ACL user was deleted is disconnected (as Redis), after the
        reply of the command that deleted it when it is the caller."""
        if session.conn is not None:
            self.server.kill_client(session.conn, self.acl.caller and self.acl.caller.conn)

    def events(self, db: int, events: list) -> None:
        self.server.on_events(db, events)

    # what the server keeps of the commands it runs (engine/server/call_watch.py)

    def watch_calls(self) -> None:
        """The slow log, latency monitor or MONITOR clients changed: the road hands
        over calls from the shortest duration one of them wants to hear."""
        server = self.server
        wanted = [ns for ns in (server.slowlog.hook_ns(), server.latency.hook_ns(),
                                server.monitors.hook_ns()) if ns >= 0]
        # (a threshold past 2**63 ns - 292 years - is one no call reaches either)
        self.hook_ns = min(min(wanted), INT64_MAX) if wanted else -1
        self.monitoring = bool(server.monitors.conns)

    def after_call(self, client, record: Optional[Command], argv: list, ns: int,
                   blocked: bool) -> None:
        if record is None:
            try:
                record = resolve(argv)
            except ResponseError:
                return              # refused by the engine's lookup: not a call
        server = self.server
        flags = record.flags
        if server.monitors.conns and "skip_monitor" not in flags and "admin" not in flags:
            server.monitors.feed(client.ctx.db.index, _monitor_addr(client), argv,
                                 client.conn)
        if not blocked and "skip_slowlog" not in flags:
            server.slowlog.heard(argv, ns, _peer(client), client.name)
        server.latency.heard(b"fast-command" if "fast" in flags else b"command", ns)

    def before_call(self, client, record: Optional[Command], argv: list) -> None:
        if record is not None and "skip_monitor" in record.flags:
            self.server.monitors.feed(client.ctx.db.index, _monitor_addr(client), argv,
                                 client.conn)


def _peer(client) -> bytes:
    """The client's address in the slow log (the scripts' client has none)."""
    return b"?:0" if client.conn is None else client.conn.addr


def _monitor_addr(client) -> bytes:
    """The client as MONITOR names it: `lua` for scripts, `unix:<path>` for a Unix
    socket, else ip:port."""
    conn = client.conn
    if conn is None:
        return b"lua"
    if conn.unix:
        return b"unix:" + conn.laddr[:-2]
    return conn.addr
