"""The server's hub: its sessions share WATCH, the password and the registry of
blocked clients (engine/api/blocked_clients.py), which waits on the event loop: its
timers are the loop's, the fsync listener's news reaches it through
call_soon_threadsafe, and the replies it answers go out with the round's flush.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from engine.api.session import Hub

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

    def events(self, db: int, events: list) -> None:
        self.server.on_events(db, events)
