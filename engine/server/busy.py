"""Serving the other clients while a script runs past busy-reply-threshold.

A script runs inside an event-loop callback (its client's data_received) and uvloop has
no nested run, so nothing of the loop runs until it ends: no timers (expiry, the cron's
saves and fsyncs), no other client. Once it has run for busy-reply-threshold, its count
hook (engine/api/scripts.py, every 100k Lua instructions) calls `BusyScript.serve`,
which polls the other clients' sockets and the listening sockets without waiting:
what a client sent goes through its connection's usual parsing and process_command,
which answer BUSY to all but the allow-busy commands (SCRIPT KILL, SHUTDOWN NOSAVE,
AUTH, HELLO, MULTI, WATCH...), whose replies are written at once (uvloop's transports
write directly). The keyspace is untouched meanwhile, as in Redis.

Served only when the script ends: its own client (its reply comes then), TLS clients
(their bytes are the TLS transport's to decrypt; new ones wait in the backlog), clients
blocked in XREAD/XREADGROUP, clients whose reading is paused, and clients whose
earlier replies wait for this round's AOF write (they must not go out before it).

A client that connects meanwhile is accepted here, on a plain non-blocking socket
(`GuestTransport`), and handed to the event loop when the script ends.

SIGTERM and SIGINT are the event loop's, which does not run: while the script is busy a
Python handler of our own notes them, and the next pass exits as SHUTDOWN NOSAVE does
(nothing of the script is kept). redis-server 7.0 leaves them until the script ends.
"""
from __future__ import annotations

import os
import select
import signal
import socket
from typing import TYPE_CHECKING, Any, Optional

from engine.server.connection import ClientConnection

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.server import Server

READ_SIZE = 65536
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


class GuestTransport:
    """The transport of a client accepted while a script is busy: writes go straight to
    its non-blocking socket (what does not fit waits for the next pass), until the event
    loop adopts the socket (ClientConnection.connection_made)."""

    def __init__(self, sock: socket.socket, conn: ClientConnection) -> None:
        self.sock = sock
        self.conn = conn
        self.unsent = bytearray()
        self.closing = False

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        try:
            if name == "socket":
                return self.sock
            if name == "peername":
                return self.sock.getpeername()
            if name == "sockname":
                return self.sock.getsockname()
        except OSError:
            pass
        return default

    def write(self, data: bytes) -> None:
        self.unsent += data
        self.send()

    def send(self) -> None:
        if self.unsent and not self.closing:
            try:
                sent = self.sock.send(self.unsent)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.abort()
                return
            del self.unsent[:sent]

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        """Sends what fits now, then closes (QUIT, a refused connection)."""
        self.send()
        self.abort()

    def abort(self) -> None:
        if not self.closing:
            self.closing = True
            self.sock.close()
            self.conn.connection_lost(None)

    def get_write_buffer_size(self) -> int:
        return len(self.unsent)

    def set_write_buffer_limits(self, high: Optional[int] = None,
                                low: Optional[int] = None) -> None:
        pass

    def pause_reading(self) -> None:
        pass

    def resume_reading(self) -> None:
        pass


class BusyScript:
    """The server's state while one script runs long (see the module docstring)."""

    def __init__(self, server: "Server") -> None:
        self.server = server
        self.defer_replies = server.defer_replies
        server.defer_replies = False        # BUSY replies do not wait for the AOF write
        # our own descriptors of the listening sockets (uvloop keeps its own); TLS
        # clients wait for the event loop, which makes their handshakes
        self.listeners = [(socket.socket(fileno=os.dup(sock.fileno())), kind == "unix")
                          for srv, kind in server._listeners if kind != "tls"
                          for sock in srv.sockets]
        self.guests: list = []
        self.signalled: Optional[str] = None
        self.handlers = {sig: signal.signal(sig, self._note_signal) for sig in STOP_SIGNALS}

    def _note_signal(self, signum: int, frame: Any) -> None:
        self.signalled = signal.Signals(signum).name

    def serve(self) -> None:
        """One pass: reads and runs what clients sent, accepts new clients; exits on
        a stop signal."""
        server = self.server
        if self.signalled is not None:
            server.log.warning("Received %s scheduling shutdown...", self.signalled)
            server.exit_inside_script()
        caller = server.hub.busy_caller
        targets: dict = {}
        poll = select.poll()
        for conn in list(server.clients.values()):
            if (conn.session is caller or conn.closing or conn.write_paused or conn.fd < 0
                    or conn.tls
                    or conn.blocked_read is not None or conn.flush_scheduled):
                continue
            targets[conn.fd] = conn
            poll.register(conn.fd, select.POLLIN)
        for sock, unix in self.listeners:
            targets[sock.fileno()] = (sock, unix)
            poll.register(sock, select.POLLIN)
        for fd, _ in poll.poll(0):
            target = targets[fd]
            if type(target) is tuple:
                self._accept(*target)
            else:
                _read(target)
        for conn in self.guests:
            conn.transport.send()

    def _accept(self, listener: socket.socket, unix: bool) -> None:
        try:
            sock, _ = listener.accept()
        except OSError:        # none waiting any more, or out of descriptors: later
            return
        sock.setblocking(False)
        if not unix:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        conn = ClientConnection(self.server, unix=unix)
        conn.connection_made(GuestTransport(sock, conn))
        if not conn.closed:
            self.guests.append(conn)

    def end(self) -> None:
        """The script is over: replies wait for the AOF again, and the guests move to
        the event loop."""
        server = self.server
        server.defer_replies = self.defer_replies
        for sig, handler in self.handlers.items():
            signal.signal(sig, handler)
        for sock, _ in self.listeners:
            sock.close()
        loop = server.loop
        for conn in self.guests:
            if not conn.transport.closing:
                loop.create_task(loop.connect_accepted_socket(
                    lambda conn=conn: conn, conn.transport.sock))


def _read(conn: ClientConnection) -> None:
    """What the client sent, run now. A closed or reset connection is left to the
    event loop, which notices it again when the script is over."""
    try:
        data = os.read(conn.fd, READ_SIZE)
    except OSError:
        return
    if data:
        conn.data_received(data)
