"""One client connection: an asyncio Protocol (no streams) driving a session.

data_received feeds the RESP parser; every complete command of that read runs at
once, in order, its reply appended to the connection's ReplyBuffer; one
transport.write per read (or per 64 KiB of replies) sends them, so a pipeline of
thousands of commands costs one write. The loop over a batch is compiled
(engine/server/fastpath.pyx): each command enters the one road
(engine/api/road.pyx process_command: Redis's checks, then the command by its
layer), and its reply is written as the client's CLIENT REPLY mode says.

Flow control: while the transport's write buffer is above its high-water mark (the
client does not read its replies), reading from the client is paused and commands
already received wait; the hard output-buffer limit of the client's class
(client-output-buffer-limit) closes the client instead. A client blocked in
XREAD/XREADGROUP keeps being read (its input waits in the parser, bounded by the
query-buffer limit) so that a disconnect is noticed at once.
"""
from __future__ import annotations

import asyncio
import socket
from time import monotonic
from typing import TYPE_CHECKING, Optional

from engine.core.errors import ResponseError
from engine.server.session import Pushes, ServerSession
from engine.server.fastpath import run_batch
from engine.resp.codec import (ProtocolError, QueryBufferLimitError, ReplyBuffer,
                                RequestParser)
from engine.api.command_stats import Outcome

if TYPE_CHECKING:  # pragma: no cover
    from engine.server.server import Server

DEFAULT_HIGH_WATER = 1024 * 1024   # pause reading a client with this much unsent output


class ClientConnection(asyncio.Protocol):
    """A client of the server (see the module docstring)."""

    def __init__(self, server: "Server", unix: bool = False, tls: bool = False) -> None:
        self.server = server
        self.tls = tls          # its bytes are TLS records: read only through the transport
        self.loop = server.loop
        self.hub = server.hub
        self.unix = unix
        self.transport = None
        self.session: Optional[ServerSession] = None
        self.ctx = None
        self.parser: Optional[RequestParser] = None
        self.out = ReplyBuffer()
        self.execute_in = server.engine.execute_in
        self.addr = b"?"
        self.laddr = b"?"
        self.fd = -1
        self.is_local = unix
        self.created = monotonic()
        self.last_interaction = monotonic()
        self.pending: Optional[list] = None      # received commands not yet run
        self.resume_after_flush = False           # they wait for the round's replies to go out
        self.input_ended = False                  # the client half-closed
        self.blocked_read = None                  # its parked command (blocked_clients.py)
        self.write_paused = False
        self.closing = False                      # no more commands are run
        self.close_when_sent = False              # close once the due replies are out
        self.closed = False
        self.registered = False
        self.soft_since: Optional[float] = None   # over the soft output limit since
        self.obuf_class: Optional[str] = None
        self.obuf_hard = 0                        # that class's hard limit (0: none)
        self.last_cmd = b"NULL"
        self.flush_scheduled = False
        self.held_lines: list = []                # MONITOR lines of its own command

    # lifecycle ---------------------------------------------------------------------

    def connection_made(self, transport) -> None:
        if self.transport is not None:      # a client accepted while a script was busy
            self._adopt(transport)
            return
        self.transport = transport
        server = self.server
        sock = transport.get_extra_info("socket")
        peer = transport.get_extra_info("peername")
        local = transport.get_extra_info("sockname")
        if sock is not None:
            self.fd = sock.fileno()
        if self.unix:
            path = (local or "").encode() if isinstance(local, str) else (local or b"")
            self.addr = path + b":0"
            self.laddr = path + b":0"
            peer_ip = None
        else:
            peer_ip = peer[0] if peer else ""
            self.addr = _format_addr(peer)
            self.laddr = _format_addr(local)
            self.is_local = is_loopback(peer_ip)
        refusal = server.admission_error(peer_ip)
        if refusal is not None:
            server.stats.rejected_connections += 1
            transport.write(refusal)
            self.closing = self.closed = True
            transport.close()
            return
        if sock is not None and not self.unix:
            server.configure_socket(sock)
        self.session = ServerSession(self.hub, self)
        self.ctx = self.session.ctx
        cfg = server.limits
        self.parser = RequestParser(cfg.proto_max_bulk_len, cfg.query_buffer_limit,
                                    not self.session.auth_required())
        self.ctx.node_max_bytes = server.engine.stream_node_max_bytes
        self.ctx.node_max_entries = server.engine.stream_node_max_entries
        self.ctx.max_string = cfg.proto_max_bulk_len
        self.registered = True
        server.client_connected(self)
        self._update_water_marks()

    def _adopt(self, transport) -> None:
        """The event loop takes over the socket of a client accepted while a script
        was busy (engine/server/busy.py): what did not fit its socket yet goes first."""
        guest, self.transport = self.transport, transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            self.fd = sock.fileno()
        self._update_water_marks()
        if guest.unsent:
            transport.write(bytes(guest.unsent))

    def connection_lost(self, exc) -> None:
        self.closed = True
        self.closing = True
        if not self.registered:
            return
        self.registered = False
        server = self.server
        if self.blocked_read is not None:
            self.hub.blocked_clients.unpark(self.blocked_read)
            self.blocked_read = None
        self.pending = None
        server.pubsub.drop(self)
        self.session.close()
        server.client_disconnected(self)

    def eof_received(self) -> bool:
        """The client closed its side: what it sent before runs (now, or after the
        replies it waits for), its replies still go out, then the connection closes
        (True: we close it, not asyncio)."""
        self.input_ended = True
        if not self.resume_after_flush:
            self.close_after_reply()
        return True

    def close_after_reply(self) -> None:
        """Runs nothing more; the replies already due are sent (with the AOF on,
        after the log write they depend on, see Server.flush_pending), then the
        connection closes: QUIT, protocol errors, the query-buffer limit, CLIENT
        KILL of oneself, an idle timeout, the client's half-close."""
        if not self.closing:
            self.closing = True
            self.close_when_sent = True
            self.flush()

    def abort(self) -> None:
        """Closes at once, dropping unsent replies (output limit, CLIENT KILL)."""
        if not self.closed:
            self.closing = True
            self.transport.abort()

    def hold_until_exit(self) -> None:
        """SHUTDOWN: Redis exits inside the command, so this client gets nothing
        more, not even the replies of the commands before it in the same read; the
        connection stays open until the server has shut down (then it is closed)."""
        self.closing = True
        self.out.take()

    # input ---------------------------------------------------------------------------

    def data_received(self, data) -> None:
        if self.closing:
            return
        server = self.server
        stats = server.stats
        stats.net_input += len(data)
        stats.reads += 1
        self.last_interaction = server.now
        parser = self.parser
        try:
            parser.feed(data)
            if parser.pending > stats.max_input_buffer:
                stats.max_input_buffer = parser.pending
        except QueryBufferLimitError:
            server.log.warning("Closing client that reached max query buffer length: %s",
                               self.client_line().decode("utf-8", "replace"))
            self.close_after_reply()
            return
        if self.blocked_read is not None or self.write_paused or self.resume_after_flush:
            return
        self.process()

    def process(self) -> None:
        """Runs every complete command received (stops while blocked or paused, and,
        with replies deferred to the round's end, once they pass FLUSH_AT: what a
        client that never reads gets sent stays bounded, as with the AOF off)."""
        parser = self.parser
        while not self.closing:
            cmds = self.pending
            if cmds is not None:
                self.pending = None
            else:
                try:
                    cmds = parser.get_commands()
                except ProtocolError as err:
                    self.protocol_error(err)
                    return
                if not cmds:
                    break
            stop = self.run_batch(cmds)
            if stop >= 0:
                if stop < len(cmds) and not self.closing:
                    self.pending = cmds[stop:]
                break
        self.flush()
        if self.input_ended and not self.resume_after_flush:
            self.close_after_reply()

    def resume(self) -> None:
        """Continues with received commands after a block or an output pause."""
        if not self.closing and self.blocked_read is None and not self.write_paused:
            self.process()

    def protocol_error(self, err: Exception) -> None:
        text = str(err)
        self.server.log.log(15, "Protocol error (%s) from client: %s", text,
                            self.client_line().decode("utf-8", "replace"))
        self.write_error(text)
        self.close_after_reply()

    # running commands ---------------------------------------------------------------

    def run_batch(self, cmds: list) -> int:
        """Runs cmds in order (engine/server/fastpath.pyx): -1 when all ran, else the
        index of the first one that must wait."""
        return run_batch(self, cmds)

    def internal_error(self, argv: list, exc: Exception) -> None:
        """An unexpected exception (a bug) while running a command: logged with its
        traceback; the client gets an error reply and the connection stays usable."""
        self.server.log.error("Internal error running %r", argv[0][:64], exc_info=exc)
        self.write_error("ERR internal error: %s: %s" % (type(exc).__name__, exc))

    def write_reply(self, reply, null_array: bool = False) -> None:
        resp3 = self.ctx.resp3
        if reply.__class__ is Pushes:
            for push in reply:
                self.out.write_push(push, resp3)
        else:
            self.out.write(reply, resp3, null_array)

    def write_error(self, text: str) -> None:
        self.out.write_error(text)
        self.server.stats.error(text)

    # blocking ------------------------------------------------------------------------

    def park(self, br) -> None:
        self.blocked_read = br
        self.hub.blocked_clients.park(br, self.answer_blocked)

    def postpone(self) -> None:
        """CLIENT PAUSE holds this client's next command (engine/api/client_pause.py):
        it stays pending, and runs once the pause is over."""
        self.blocked_read = self.hub.client_pause.postpone(self.session,
                                                           self.resume_postponed)

    def resume_postponed(self, br, reply, null_array: bool) -> None:
        self.blocked_read = None
        if not self.closing:
            self.loop.call_soon(self.resume)

    def answer_blocked(self, br, reply, null_array: bool) -> None:
        """The parked read is answered (entries, an error, or nil at the timeout)."""
        self.blocked_read = None
        if self.closing:
            return
        session = self.session
        quiet = session.replies_quiet
        if session.reply_modes:
            session.reply_done()
        if isinstance(reply, ResponseError):
            # The call was counted when it blocked; ending in an error makes it a
            # failed call too (Redis's updateStatsOnUnblock / the reprocessed call).
            self.server.stats.count(br.argv[0].lower().decode(), 0, Outcome.FAILED_AFTER_BLOCK)
            if quiet:
                self.server.stats.error(str(reply))
            else:
                self.write_error(str(reply))
        elif not quiet:
            self.out.write(reply, self.ctx.resp3, null_array)
        self.flush()
        self.last_interaction = self.server.now
        if self.pending is not None or self.parser.pending:
            self.loop.call_soon(self.resume)

    # output --------------------------------------------------------------------------

    def flush(self) -> None:
        """Sends the replies; with the AOF on, at the end of the round (after the
        log write they depend on, see Server.flush_pending). A client over its
        hard output limit is closed at once, as Redis does."""
        if self.server.defer_replies and (len(self.out) or self.flush_scheduled):
            if not self.over_hard_limit(len(self.out)) and not self.flush_scheduled:
                self.flush_scheduled = True
                self.server.schedule_flush(self)
            return
        self.write_out()

    def write_out(self) -> None:
        """Hands the replies to the transport - none if they would take the client
        over its hard output limit: it is closed instead, Redis sends nothing then -
        and closes the connection after them when close_after_reply asked for it
        (the transport sends what it holds before closing)."""
        if self.closed or self.transport.is_closing():
            return
        out = self.out
        if len(out):
            if self.over_hard_limit(len(out)):
                return
            data = out.take()
            self.transport.write(data)
            stats = self.server.stats
            stats.net_output += len(data)
            stats.writes += 1
            self.check_output_limits()
        if self.close_when_sent:
            self.transport.close()
        elif self.resume_after_flush:
            self.resume_after_flush = False
            if not self.write_paused:
                self.loop.call_soon(self.resume)

    def send_status(self, line: bytes) -> None:
        """A status line for a MONITOR client, written now and sent with the round's
        flush."""
        if self.closing:
            return
        self.out.write_raw(b"+%s\r\n" % line)
        if not self.flush_scheduled:
            self.flush_scheduled = True
            self.server.schedule_flush(self)

    def hold_status(self, line: bytes) -> None:
        """A MONITOR line of this client's own command: it follows the command's reply
        (Redis feeds the monitors once the command has run), see release_held."""
        self.held_lines.append(line)

    def release_held(self) -> None:
        """The command's reply is written: the lines held for it follow."""
        lines = self.held_lines
        self.held_lines = []
        for line in lines:
            self.send_status(line)

    def push(self, items: list) -> None:
        """A pub/sub message (or keyspace notification) for this client."""
        if self.closing:
            return
        self.out.write_push(items, self.ctx.resp3)
        if not self.flush_scheduled:
            self.flush_scheduled = True
            self.server.schedule_flush(self)

    def pause_writing(self) -> None:
        self.write_paused = True
        if not self.closing:
            self.transport.pause_reading()

    def resume_writing(self) -> None:
        self.write_paused = False
        if not self.closing:
            self.transport.resume_reading()
            self.loop.call_soon(self.resume)

    def client_type(self) -> str:
        session = self.session
        return ("pubsub" if session.channels or session.patterns or session.shard_channels
                else "normal")

    def _update_water_marks(self) -> None:
        cls = self.client_type()
        self.obuf_class = cls
        hard = self.obuf_hard = self.server.obuf_limits[cls][0]
        # With a hard limit the buffer may grow up to it (then the client is closed,
        # as in Redis); without one, reading pauses at DEFAULT_HIGH_WATER instead of
        # letting a client that never reads grow server memory without bound.
        high = hard + 1 if hard else DEFAULT_HIGH_WATER
        self.transport.set_write_buffer_limits(high=high, low=high // 4)

    def over_hard_limit(self, pending: int) -> bool:
        """Whether `pending` more reply bytes take the unsent output over the hard
        limit; the client is then closed without them, as Redis closes it as soon
        as a reply takes it there."""
        hard = self.obuf_hard
        if hard and self.transport.get_write_buffer_size() + pending > hard:
            self._output_limit_exceeded()
            return True
        return False

    def check_output_limits(self) -> None:
        """client-output-buffer-limit: the hard limit closes at once, the soft limit
        after being exceeded continuously for its seconds."""
        if self.closed:
            return
        if self.client_type() != self.obuf_class:
            self._update_water_marks()
        size = self.transport.get_write_buffer_size()
        if not size and self.soft_since is None:
            return
        hard, soft, seconds = self.server.obuf_limits[self.obuf_class]
        if hard and size > hard:
            self._output_limit_exceeded()
        elif soft and size > soft:
            now = monotonic()
            if self.soft_since is None:
                self.soft_since = now
            elif now - self.soft_since > seconds:
                self._output_limit_exceeded()
        else:
            self.soft_since = None

    def _output_limit_exceeded(self) -> None:
        self.server.log.warning(
            "Client %s scheduled to be closed ASAP for overcoming of output buffer limits.",
            self.client_line().decode("utf-8", "replace"))
        self.abort()

    # introspection -------------------------------------------------------------------

    def age(self) -> int:
        return int(monotonic() - self.created)

    def client_line(self) -> bytes:
        """This client's CLIENT LIST line (Redis 7.2's fields)."""
        session = self.session
        if session is None:
            return b"addr=" + self.addr
        flags = b"O" if session.monitor else b""
        if session.multi is not None:
            flags += b"x"
        if self.blocked_read is not None:
            flags += b"b"
        if session.channels or session.patterns or session.shard_channels:
            flags += b"P"
        if self.closing:
            flags += b"A"
        if self.unix:
            flags += b"U"
        if session.no_evict:
            flags += b"e"
        if session.no_touch:
            flags += b"T"

        parser = self.parser
        qbuf = parser.pending
        omem = 0 if self.closed else self.transport.get_write_buffer_size()
        multi_mem = sum(sum(len(a) for a in argv) for argv, _ in session.multi) \
            if session.multi else 0
        now = monotonic()
        return (b"id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d "
                b"sub=%d psub=%d ssub=%d multi=%d watch=%d qbuf=%d qbuf-free=%d argv-mem=0 "
                b"multi-mem=%d rbs=%d rbp=%d obl=%d oll=0 omem=%d tot-mem=%d events=r cmd=%s "
                b"user=%s redir=-1 resp=%d lib-name=%s lib-ver=%s"
                % (session.id, self.addr, self.laddr, self.fd, session.name or b"",
                   now - self.created, now - self.last_interaction, flags or b"N",
                   self.ctx.db.index, len(session.channels), len(session.patterns),
                   len(session.shard_channels),
                   -1 if session.multi is None else len(session.multi), len(session.watched),
                   qbuf, max(parser.capacity - qbuf, 0), multi_mem, parser.capacity,
                   parser.capacity, len(self.out), omem,
                   parser.capacity + len(self.out) + omem + multi_mem,
                   self.last_cmd.lower(), session.user.name, 3 if self.ctx.resp3 else 2,
                   session.lib_name or b"", session.lib_ver or b""))


def _format_addr(addr) -> bytes:
    if not addr:
        return b"?"
    host, port = addr[0], addr[1]
    if ":" in host:
        return b"[%s]:%d" % (host.encode(), port)
    return b"%s:%d" % (host.encode(), port)


def is_loopback(ip: Optional[str]) -> bool:
    """Whether a peer address is local: a Unix socket (None), 127.0.0.0/8 or ::1, as
    Redis's connIsLocal (plus IPv4-mapped loopback)."""
    if ip is None:
        return True
    if ip.startswith("::ffff:"):
        ip = ip[7:]
    return ip.startswith("127.") or ip == "::1"


def set_keepalive(sock: socket.socket, interval: int) -> None:
    """Redis's anetKeepAlive: SO_KEEPALIVE, first probe after `interval` seconds."""
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
        if hasattr(socket, "TCP_KEEPIDLE"):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPIDLE, interval)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPINTVL, max(interval // 3, 1))
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_KEEPCNT, 3)
    except OSError:
        pass
