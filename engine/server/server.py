"""The Sluice server: listeners, admission (protected mode, maxclients), the cron
(active expiry, client timeouts, output-limit checks, stats), configuration changes
at runtime, and shutdown.

    cfg = ServerConfig(); cfg.apply_args(argv)
    server = Server(cfg)
    await server.start()          # listens; logs "Ready to accept connections tcp"
    await server.wait_closed()    # until SHUTDOWN / SIGTERM / request_shutdown()

Persistence: the engine is created with the data directory (persist.durability),
which loads it before anything listens. With the AOF on, replies wait for the end
of the event-loop round: `flush_pending` first writes what the round logged (and
with appendfsync always fsyncs it, once for every client of the round: group
commit), then sends the replies. The cron reaps BGSAVE/BGREWRITEAOF children and
starts due saves and rewrites; shutdown finishes the AOF and the last snapshot
(`shutdown_hooks` run after the listeners closed, before clients are disconnected).

Persistence errors: while a background save has failed (stop-writes-on-bgsave-error)
or AOF writes fail, `hub.write_refusal` holds Redis's MISCONF text and the sessions
refuse write commands (and PING) with it; the round's AOF write is retried every
round and cron tick until it succeeds. A failed AOF write under `appendfsync always`
ends the process at once instead: nothing of that round is answered.

TLS: with `tls-port` set, a second set of listeners (on the same `bind` addresses)
speaks TLS with the context engine/server/tls.py builds; `port 0` leaves only them.
A CONFIG SET of a `tls-*` directive builds a new context and new listeners on the same
sockets take it: new connections get it, open ones keep theirs.

A script running past busy-reply-threshold: see engine/server/busy.py (the other clients
are served with BUSY meanwhile); SHUTDOWN NOSAVE then exits inside the script
(`exit_inside_script`).
"""
from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
import ssl
import stat
import sys
import time
from typing import Callable, Optional

from engine import Engine
from engine.core.encoding_limits import EncodingLimits
from engine.server.blocking import ServerHub
from engine.server.busy import BusyScript
from engine.server.call_watch import LatencyMonitor, Monitors, SlowLog
from engine.server.config.errors import ConfigApplyError
from engine.server.config.keyspace_events import NOTIFY_KEYEVENT, NOTIFY_KEYSPACE, NOTIFY_NEW
from engine.server.config.server_config import ServerConfig
from engine.server.config.version import VERSION
from engine.server.connection import ClientConnection, is_loopback, set_keepalive
from engine.server.info import Stats
from engine.server.pubsub import PubSub
from engine.server.tls import UNABLE_TO_UPDATE, TlsConfigError, build_context
from persist import DirectoryInUse, DirectoryLock

log = logging.getLogger("sluice")

DENIED = (
    b"-DENIED Redis is running in protected mode because protected mode is enabled and no "
    b"password is set for the default user. In this mode connections are only accepted from "
    b"the loopback interface. If you want to connect from external computers to Redis you "
    b"may adopt one of the following solutions: 1) Just disable protected mode sending the "
    b"command 'CONFIG SET protected-mode no' from the loopback interface by connecting to "
    b"Redis from the same host the server is running, however MAKE SURE Redis is not "
    b"publicly accessible from internet if you do so. Use CONFIG REWRITE to make this change "
    b"permanent. 2) Alternatively you can just disable the protected mode by editing the "
    b"Redis configuration file, and setting the protected mode option to 'no', and then "
    b"restarting the server. 3) If you started the server manually just for testing, "
    b"restart it with the '--protected-mode no' option. 4) Setup a an authentication "
    b"password for the default user. NOTE: You only need to do one of the above things in "
    b"order for the server to start accepting connections from the outside.\r\n")
MAX_CLIENTS_REACHED = b"-ERR max number of clients reached\r\n"
TCP_BACKLOG = 511
CLIENTS_CRON_PERIOD = 1.0          # seconds between idle/output-limit scans of all clients


def protected_mode_refuses(protected_mode: bool, password_set: bool,
                           peer_ip: Optional[str]) -> bool:
    """Redis 7.0's protected mode: with protected-mode yes and no password for the
    default user, only loopback clients (and Unix sockets: peer_ip None) are accepted."""
    return protected_mode and not password_set and not is_loopback(peer_ip)


def _password(value: str) -> Optional[bytes]:
    if not value:
        return None
    return value.encode("utf-8", "surrogateescape") if isinstance(value, str) else value


class Limits:
    """Parser limits every new connection gets (CONFIG SET updates them)."""

    __slots__ = ("proto_max_bulk_len", "query_buffer_limit")

    def __init__(self, cfg: ServerConfig) -> None:
        self.proto_max_bulk_len = cfg.proto_max_bulk_len
        self.query_buffer_limit = cfg.client_query_buffer_limit


class ListenError(Exception):
    """A listening socket could not be opened (the text says which and why); `kind` and
    `port` name the listener ("tcp" or "tls")."""

    def __init__(self, text: str, kind: str = "tcp", port: Optional[int] = None) -> None:
        super().__init__(text)
        self.kind, self.port = kind, port


class Server:
    """See the module docstring."""

    def __init__(self, cfg: ServerConfig, *, engine: Optional[Engine] = None) -> None:
        self.cfg = cfg
        self.version = VERSION
        # Before the data loads, as Redis: a TLS setting that does not work ends the start.
        self.tls_context: Optional[ssl.SSLContext] = build_context(cfg) if cfg.tls_port else None
        self.engine = engine if engine is not None else Engine(
            databases=cfg.databases, stream_node_max_entries=cfg.stream_node_max_entries,
            stream_node_max_bytes=cfg.stream_node_max_bytes,
            stream_idmp_duration=cfg.stream_idmp_duration,
            stream_idmp_maxsize=cfg.stream_idmp_maxsize, encoding_limits=encoding_limits(cfg),
            **memory_options(cfg),
            **persistence_options(cfg))
        self.durability = self.engine.durability
        self.shutdown_save: Optional[bool] = None   # SHUTDOWN SAVE / NOSAVE
        self.defer_replies = False                  # replies wait for the AOF write
        self.loop: Optional[asyncio.AbstractEventLoop] = None
        self.loop_name = "asyncio"
        self.log = log
        self.hub = ServerHub(self)
        if self.durability is not None:
            self.durability.fsync_listeners.append(self.hub.blocked_clients.fsynced)
        self.hub.password = _password(cfg.requirepass)     # the aclfile's default wins
        self.hub.acl.configure(cfg.aclfile, cfg.user_lines, cfg.acl_pubsub_default,
                               cfg.acllog_max_len)
        cfg.user_rewrite = lambda: [] if self.hub.acl.aclfile else self.hub.acl.list_lines()
        self.hub.busy_threshold = cfg.busy_reply_threshold / 1000
        self.pubsub = PubSub()
        self._set_notify_flags(cfg.notify_keyspace_events)
        self.stats = Stats()
        self.hub.stats = self.stats         # every command's call counts there
        self.slowlog = SlowLog(cfg.slowlog_log_slower_than, cfg.slowlog_max_len)
        self.latency = LatencyMonitor(cfg.latency_monitor_threshold)
        self.monitors = Monitors()
        self.hub.watch_calls()
        self.clients: dict = {}             # client id -> ClientConnection
        self.limits = Limits(cfg)
        self.obuf_limits = cfg.client_output_buffer_limit
        self.timeout = cfg.timeout
        self.run_id = os.urandom(20).hex()
        self.start_time = time.time()
        self.now = time.monotonic()         # cached clock for idle times
        self.executable = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
        self.shutdown_hooks: list[Callable[["Server"], None]] = []
        self.exit_hooks: list[Callable[[], None]] = []   # before exiting inside a script
        self._busy: Optional[BusyScript] = None
        self.exit_code = 0
        self._listeners: list = []          # (asyncio server, description)
        self._sockets_desc: list = []
        self._unix_path: Optional[str] = None
        self._cron_handle = None
        self._last_clients_cron = 0.0
        self._flush_queue: list = []
        self._flush_scheduled = False
        self._dir_locks: dict = {}          # directories owned after CONFIG SET dir
        self._stopped: Optional[asyncio.Future] = None
        self._shutting_down = False
        cfg.add_resetstat_hook(self.stats.reset)
        cfg.add_resetstat_hook(self.hub.acl.reset_denied)
        self._register_config_listeners()
        if self.durability is not None:
            self.shutdown_hooks.append(self._close_durability)
            self._update_defer_replies()
            self.durability.on_refusal = self._on_write_refusal
            self.durability.update_refusal()

    def _on_write_refusal(self, text: Optional[str]) -> None:
        self.hub.write_refusal = text

    def _update_defer_replies(self) -> None:
        self.defer_replies = self.durability is not None and self.durability.logging

    def _close_durability(self, server: "Server") -> None:
        self.durability.close(self.shutdown_save)
        self.defer_replies = False

    def _set_notify_flags(self, flags: int) -> None:
        """notify-keyspace-events: the hub then hands every command's events over."""
        self.pubsub.notify_flags = flags
        self.hub.notify_events = bool(flags)
        new_keys = bool(flags & NOTIFY_NEW and flags & (NOTIFY_KEYSPACE | NOTIFY_KEYEVENT))
        for db in self.engine.databases:       # the keyspace notes the keys it creates
            db.added = [] if new_keys else None

    def on_events(self, db: int, events: list) -> None:
        """A command's keyspace events: count expirations, notify subscribers."""
        if events[-1][1] == b"expired":
            self.stats.expired_keys += sum(1 for e in events if e[1] == b"expired")
        if self.pubsub.notify_flags:
            self.pubsub.notify(db, events)

    def max_output_buffer(self) -> int:
        best = 0
        for conn in self.clients.values():
            if not conn.closed:
                best = max(best, conn.transport.get_write_buffer_size() + len(conn.out))
        return best

    def tcp_port(self) -> int:
        return self.cfg.port

    # connections -------------------------------------------------------------------

    def admission_error(self, peer_ip: Optional[str]) -> Optional[bytes]:
        """The reply refusing a new connection (then closed), or None to accept it."""
        if self._shutting_down:
            return b""
        if len(self.clients) >= self.cfg.maxclients:
            return MAX_CLIENTS_REACHED
        if protected_mode_refuses(self.cfg.protected_mode, self.hub.password_required(),
                                  peer_ip):
            return DENIED
        return None

    def configure_socket(self, sock) -> None:
        keepalive = self.cfg.tcp_keepalive
        if keepalive:
            set_keepalive(sock, keepalive)

    def client_connected(self, conn: ClientConnection) -> None:
        self.clients[conn.session.id] = conn
        self.stats.total_connections += 1
        self.log.log(15, "Accepted %s", conn.addr.decode("utf-8", "replace"))

    def client_disconnected(self, conn: ClientConnection) -> None:
        self.clients.pop(conn.session.id, None)
        if self.monitors.conns.pop(conn, None) is not None:
            self.hub.watch_calls()

    def start_monitor(self, conn: ClientConnection) -> None:
        """MONITOR: conn hears every command from now on."""
        self.monitors.conns[conn] = None
        self.hub.watch_calls()

    def kill_client(self, conn: ClientConnection, killer: ClientConnection) -> None:
        """CLIENT KILL: the caller itself gets its reply first."""
        if conn is killer:
            conn.session.quitting = True       # closed once its reply is written
        else:
            conn.abort()

    def schedule_flush(self, conn: ClientConnection) -> None:
        self._flush_queue.append(conn)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.loop.call_soon(self.flush_pending)

    def flush_pending(self) -> None:
        """End of the round: the AOF write (and fsync) first, then the replies."""
        self._flush_scheduled = False
        queue, self._flush_queue = self._flush_queue, []
        if self.defer_replies and not self._write_aof():
            for conn in queue:
                conn.flush_scheduled = False
            return
        for conn in queue:
            conn.flush_scheduled = False
            conn.write_out()

    def _write_aof(self) -> bool:
        """Writes the round's log; False when replies must not go out. A failed
        write is retried next round (write commands are refused meanwhile), except
        with appendfsync always: nothing unsynced may be acknowledged, so the
        server stops as if it had crashed."""
        try:
            self.durability.before_reply()
            return True
        except OSError as exc:
            if self.durability.appendfsync != "always":
                return True
            if self.durability.fsync_failing:
                self.log.warning("Can't persist AOF for fsync error when the AOF fsync "
                                 "policy is 'always': %s. Exiting...", exc.strerror)
            else:
                self.log.warning("Can't recover from AOF write error when the AOF fsync "
                                 "policy is 'always'. Exiting...")
        self._exit_unanswered()
        return False

    def _exit_unanswered(self) -> None:
        """Stops listening and drops every client with its unsent replies now, then
        shuts down with exit code 1 and no final snapshot."""
        self.exit_code = 1
        self.shutdown_save = False
        self.defer_replies = False
        for srv, _ in self._listeners:
            srv.close()
        for conn in list(self.clients.values()):
            conn.out.take()
            conn.abort()
        self.request_shutdown()

    # a script running long ---------------------------------------------------------

    def busy_script(self) -> BusyScript:
        """The busy state of the script running past busy-reply-threshold."""
        if self._busy is None:
            self._busy = BusyScript(self)
        return self._busy

    def busy_script_over(self) -> None:
        busy, self._busy = self._busy, None
        if busy is not None:
            busy.end()

    def exit_inside_script(self) -> None:
        """SHUTDOWN NOSAVE while a script is busy: as Redis, the process exits inside
        the command. Nothing of the script is kept: the AOF gets none of what this round
        logged (the script's writes, and commands of the round whose replies were never
        sent), then is closed; no snapshot."""
        self._shutting_down = True
        self.log.warning("User requested shutdown...")
        self.shutdown_save = False
        if self.durability is not None:
            self.durability.drop_unwritten_round()
        self._run_shutdown_hooks()
        self._remove_unix_socket()
        for hook in self.exit_hooks:
            hook()
        self.log.warning("Sluice is now ready to exit, bye bye...")
        for handler in self.log.handlers:
            handler.flush()
        os._exit(self.exit_code)

    # listening -----------------------------------------------------------------------

    def _tcp_sockets(self, port: int, binds: list, kind: str = "tcp",
                     listening: Optional[dict] = None) -> list:
        """Bound, listening sockets for `bind` (a '-' prefix: skip if unavailable);
        `listening` maps (host, port) to a socket already listening there, taken again
        (a copy of its descriptor) rather than bound a second time."""
        socks = []
        listening = listening or {}
        if not port:
            return socks
        try:
            for entry in binds:
                optional = entry.startswith("-")
                host = entry[1:] if optional else entry
                if host == "*":
                    family, host = socket.AF_INET, "0.0.0.0"
                elif host == "::*":
                    family, host = socket.AF_INET6, "::"
                else:
                    family = socket.AF_INET6 if ":" in host else socket.AF_INET
                if (host, port) in listening:
                    socks.append(socket.socket(fileno=os.dup(listening[host, port].fileno())))
                    continue
                try:
                    sock = socket.socket(family, socket.SOCK_STREAM)
                except OSError as exc:
                    if optional:
                        continue
                    raise ListenError(f"Could not create server TCP listening socket "
                                      f"{host}:{port}: {exc.strerror}", kind, port) from None
                try:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                    if family == socket.AF_INET6:
                        sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                    sock.bind((host, port))
                    sock.listen(TCP_BACKLOG)
                    sock.setblocking(False)
                except OSError as exc:
                    sock.close()
                    if optional and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT,
                                                  errno.EPROTONOSUPPORT, errno.EINVAL):
                        continue
                    raise ListenError(f"Could not create server TCP listening socket "
                                      f"{host}:{port}: bind: {exc.strerror}", kind,
                                      port) from None
                socks.append(sock)
        except BaseException:
            for sock in socks:
                sock.close()
            raise
        return socks

    def _unix_socket(self, path: str, perm: int) -> socket.socket:
        try:
            if os.path.exists(path) and stat.S_ISSOCK(os.stat(path).st_mode):
                os.unlink(path)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.bind(path)
            if perm:
                os.chmod(path, perm)
            sock.listen(TCP_BACKLOG)
            sock.setblocking(False)
        except OSError as exc:
            raise ListenError(f"Failed opening Unix socket: {exc.strerror}") from None
        return sock

    async def _serve_sockets(self, socks: list, kind: str = "tcp") -> None:
        """Serves listening sockets: kind "tcp", "unix" or "tls" (with tls_context; the
        handshake is done before the connection is made, and it times out with the
        client's idle `timeout`, or after a minute)."""
        loop = self.loop
        for sock in socks:
            if kind == "unix":
                srv = await loop.create_unix_server(
                    lambda: ClientConnection(self, unix=True), sock=sock, backlog=TCP_BACKLOG)
            elif kind == "tls":
                srv = await loop.create_server(
                    lambda: ClientConnection(self, tls=True), sock=sock, backlog=TCP_BACKLOG,
                    ssl=self.tls_context, ssl_handshake_timeout=self.timeout or 60.0)
            else:
                srv = await loop.create_server(
                    lambda: ClientConnection(self), sock=sock, backlog=TCP_BACKLOG)
            self._listeners.append((srv, kind))

    async def start(self, bound: Optional[Callable[[], None]] = None) -> None:
        """Opens the listeners and starts the cron. Raises ListenError. `bound` runs
        once every socket is bound, before any client is served (the pid file)."""
        self.loop = asyncio.get_running_loop()
        self.hub.start(self.loop)
        module = type(self.loop).__module__
        self.loop_name = "epoll (uvloop)" if module.startswith("uvloop") else \
            f"{getattr(getattr(self.loop, '_selector', None), '__class__', type(None)).__name__} (asyncio)"
        self._stopped = self.loop.create_future()
        socks = self._tcp_sockets(self.cfg.port, self.cfg.bind)
        tls_socks: list = []
        unix = None
        try:
            tls_socks = self._tcp_sockets(self.cfg.tls_port, self.cfg.bind, "tls")
            if self.cfg.unixsocket:
                unix = self._unix_socket(self.cfg.unixsocket, self.cfg.unixsocketperm)
        except ListenError:
            for sock in socks + tls_socks:
                sock.close()
            raise
        if unix is not None:
            self._unix_path = self.cfg.unixsocket
        if not socks and not tls_socks and unix is None:
            self.log.warning("Configured to not listen anywhere, exiting.")
            raise ListenError("Configured to not listen anywhere, exiting.")
        if bound is not None:
            bound()
        await self._serve_sockets(socks)
        await self._serve_sockets(tls_socks, "tls")
        if unix is not None:
            await self._serve_sockets([unix], "unix")
        self._schedule_cron()
        if socks:
            self.log.info("Ready to accept connections tcp")
        if tls_socks:
            self.log.info("Ready to accept connections tls")
        if unix is not None:
            self.log.info("Ready to accept connections unix")

    def addresses(self, kind: str = "tcp") -> list:
        """(host, port) of every TCP (or "tls") listener (tests read the port when it was 0)."""
        out = []
        for srv, listener_kind in self._listeners:
            if listener_kind == kind:
                for sock in srv.sockets:
                    out.append(sock.getsockname()[:2])
        return out

    # the cron ------------------------------------------------------------------------

    def _schedule_cron(self) -> None:
        hz = max(1, min(500, self.cfg.hz or 10))
        self._cron_handle = self.loop.call_later(1.0 / hz, self._cron)

    def _cron(self) -> None:
        self._cron_handle = None
        if self._shutting_down:
            return
        try:
            self.now = time.monotonic()
            self._active_expire()
            self.stats.sample_ops()
            if self.durability is not None:
                self.durability.cron()
            if self.now - self._last_clients_cron >= CLIENTS_CRON_PERIOD:
                self._last_clients_cron = self.now
                self._clients_cron()
                self.stats.roll_peaks()
            self.flush_pending()
        except Exception:  # noqa: BLE001 - the cron must survive a bug in one step
            self.log.exception("cron step failed")
        finally:
            if not self._shutting_down:
                self._schedule_cron()

    def _active_expire(self) -> None:
        if self.hub.paused:         # nothing expires actively while clients are paused
            return
        fired = self.engine.active_expire()
        if not fired:
            return
        self.stats.expired_keys += len(fired)
        hub = self.hub
        by_db: dict = {}
        for db, key in fired:
            by_db.setdefault(db, []).append(key)
        for db, keys in by_db.items():
            hub.touched(db, keys)
            if self.pubsub.notify_flags:
                self.pubsub.notify(db, [("x", b"expired", key) for key in keys])
        if hub.ready:
            hub.serve_ready()

    def _clients_cron(self) -> None:
        timeout = self.timeout
        now = self.now
        for conn in list(self.clients.values()):
            if conn.closed:
                continue
            session = conn.session
            if (timeout and conn.blocked_read is None and not session.channels
                    and not session.patterns and not session.shard_channels and now - conn.last_interaction > timeout):
                self.log.log(15, "Closing idle client")
                conn.close_after_reply()
                continue
            conn.check_output_limits()

    # configuration changes -----------------------------------------------------------

    def _register_config_listeners(self) -> None:
        cfg = self.cfg
        cfg.add_listener(["stream-node-max-entries", "stream-node-max-bytes"], self._on_node_limits)
        cfg.add_listener(["stream-idmp-duration", "stream-idmp-maxsize"],
                         lambda name, old, new: setattr(self.engine, name.replace("-", "_"), new))
        cfg.add_listener("requirepass", self._on_requirepass)
        cfg.add_listener("acllog-max-len", self._on_acl_config)
        cfg.add_listener("acl-pubsub-default", self._on_acl_config)
        cfg.add_listener(["slowlog-log-slower-than", "slowlog-max-len",
                          "latency-monitor-threshold"], self._on_call_watch)
        cfg.add_listener(list(MEMORY_DIRECTIVES), self._on_memory_config)
        cfg.add_listener("notify-keyspace-events",
                         lambda name, old, new: self._set_notify_flags(new))
        cfg.add_listener("timeout", lambda name, old, new: setattr(self, "timeout", new))
        cfg.add_listener("busy-reply-threshold",
                         lambda name, old, new: setattr(self.hub, "busy_threshold", new / 1000))
        cfg.add_listener(["proto-max-bulk-len", "client-query-buffer-limit"], self._on_parser_limits)
        cfg.add_listener("client-output-buffer-limit", self._on_output_limits)
        cfg.add_listener("loglevel", lambda name, old, new: set_log_level(new))
        cfg.add_listener(list(ENCODING_DIRECTIVES), lambda name, old, new: setattr(
            self.engine.encoding_limits, name.replace("-", "_"), new))
        cfg.add_listener("dir", self._on_dir)
        cfg.add_listener(["port", "tls-port", "bind"], self._on_listen_change)
        cfg.add_listener([d.name for d in cfg.directives
                          if d.name.startswith("tls-") and d.name != "tls-port"],
                         self._on_tls_change)
        cfg.add_listener(list(PERSISTENCE_DIRECTIVES), self._on_persistence_config)

    def _on_node_limits(self, name, old, new) -> None:
        engine = self.engine
        if name == "stream-node-max-entries":
            engine.stream_node_max_entries = new
        else:
            engine.stream_node_max_bytes = new
        for conn in self.clients.values():
            conn.ctx.node_max_entries = engine.stream_node_max_entries
            conn.ctx.node_max_bytes = engine.stream_node_max_bytes

    def _on_memory_config(self, name, old, new) -> None:
        options = memory_options(self.cfg)
        engine = self.engine
        engine.maxmemory = options["maxmemory"]
        engine.eviction_tenacity = options["maxmemory_eviction_tenacity"]
        if name in ("maxmemory-policy", "maxmemory-samples"):
            engine.set_eviction_policy(options["maxmemory_policy"], options["maxmemory_samples"])
        engine.set_lfu_params(options["lfu_log_factor"], options["lfu_decay_time"])

    def _on_call_watch(self, name, old, new) -> None:
        if name == "slowlog-log-slower-than":
            self.slowlog.slower_than_us = new
        elif name == "slowlog-max-len":
            self.slowlog.max_len = new
            self.slowlog.trim()
        else:
            self.latency.threshold_ms = new
        self.hub.watch_calls()

    def _on_requirepass(self, name, old, new) -> None:
        self.hub.password = _password(new)
        for conn in self.clients.values():
            conn.parser.authenticated = not conn.session.auth_required()

    def _on_acl_config(self, name, old, new) -> None:
        acl = self.hub.acl
        if name == "acllog-max-len":
            acl.log.max_len = new
            acl.log.trim()
        else:
            acl.all_channels_default = new == "allchannels"

    def _on_parser_limits(self, name, old, new) -> None:
        if name == "proto-max-bulk-len":
            self.limits.proto_max_bulk_len = new
        else:
            self.limits.query_buffer_limit = new
        for conn in self.clients.values():
            conn.parser.proto_max_bulk_len = conn.ctx.max_string = self.limits.proto_max_bulk_len
            conn.parser.query_buffer_limit = self.limits.query_buffer_limit

    def _on_output_limits(self, name, old, new) -> None:
        self.obuf_limits = new
        for conn in self.clients.values():
            if not conn.closed:
                conn._update_water_marks()

    def _on_dir(self, name, old, new) -> None:
        try:
            os.chdir(new)
        except OSError as exc:
            raise ConfigApplyError(os.strerror(exc.errno or errno.EIO)) from None
        self._own_dir(os.getcwd())

    def _own_dir(self, path: str) -> None:
        """CONFIG SET dir: snapshots and a new AOF go to `path` from now on, so the
        server locks it as it locked the first (refused if another owner has it).
        Directories it owned before stay locked until it exits: files there may
        still be open."""
        if self.durability is None or path == self.durability.dir_lock.dir \
                or path in self._dir_locks:
            return
        try:
            self._dir_locks[path] = DirectoryLock(path).acquire()
        except DirectoryInUse as exc:
            raise ConfigApplyError(str(exc)) from None
        except OSError as exc:             # unwritable: saving there will fail and say so
            log.warning("Could not lock the data directory %s: %s", path, exc.strerror)

    def _on_persistence_config(self, name, old, new) -> None:
        durability = self.durability
        if durability is None:
            return
        if name == "appendonly":
            try:
                durability.set_appendonly(new)
            except OSError as exc:
                raise ConfigApplyError(exc.strerror or str(exc)) from None
            self._update_defer_replies()
        elif name == "appendfsync":
            durability.set_appendfsync(new)
        elif name == "dir":
            durability.dir = os.getcwd()           # _on_dir has changed to it
        else:
            setattr(durability, PERSISTENCE_DIRECTIVES[name], new)
            durability.update_refusal()

    def _on_listen_change(self, name, old, new) -> None:
        """port, tls-port or bind: new sockets first (an address listened on already
        keeps its socket; a failure changes nothing), then the old listeners of those
        kinds close (their clients stay)."""
        if self.loop is None:
            return
        cfg = self.cfg
        kinds = ["tcp", "tls"] if name == "bind" else ["tls" if name == "tls-port" else "tcp"]
        if "tls" in kinds and cfg.tls_port and (name == "tls-port" or self.tls_context is None):
            self._configure_tls()
        listening = {sock.getsockname()[:2]: sock for srv, kind in self._listeners
                     if kind in kinds for sock in srv.sockets}
        socks: dict = {}
        try:
            for kind in kinds:
                socks[kind] = self._tcp_sockets(cfg.tls_port if kind == "tls" else cfg.port,
                                                cfg.bind, kind, listening)
        except ListenError as exc:
            for opened in socks.values():
                for sock in opened:
                    sock.close()
            self.log.warning("%s", exc)
            raise ConfigApplyError("Unable to listen on this port. Check server logs.") from None
        for kind, opened in socks.items():
            self._replace_listeners(kind, opened)

    def _on_tls_change(self, name, old, new) -> None:
        """A `tls-*` setting (even set to its value): the files are read again and new
        connections get the new context (only while a tls-port is set, as in Redis)."""
        if self.loop is None or not self.cfg.tls_port:
            return
        self._configure_tls()
        self._replace_listeners("tls", [socket.socket(fileno=os.dup(sock.fileno()))
                                        for srv, kind in self._listeners if kind == "tls"
                                        for sock in srv.sockets])

    def _configure_tls(self) -> None:
        try:
            self.tls_context = build_context(self.cfg)
        except TlsConfigError as exc:
            self.log.warning("%s", exc)
            raise ConfigApplyError(UNABLE_TO_UPDATE) from None

    def _replace_listeners(self, kind: str, socks: list) -> None:
        """Listeners of `kind` on `socks` (already listening) replace the old ones."""
        old = [srv for srv, listener_kind in self._listeners if listener_kind == kind]
        self._listeners = [entry for entry in self._listeners if entry[1] != kind]
        for srv in old:
            srv.close()
        self.loop.create_task(self._serve_sockets(socks, kind))

    # shutdown ------------------------------------------------------------------------

    def request_shutdown(self, signal_name: Optional[str] = None) -> None:
        if self._shutting_down or self.loop is None:
            return
        if signal_name:
            self.log.warning("Received %s scheduling shutdown...", signal_name)
        self.loop.call_soon(lambda: self.loop.create_task(self.shutdown()))

    async def shutdown(self) -> None:
        """Stops accepting, runs the shutdown hooks, closes every client."""
        if self._shutting_down:
            return
        self._shutting_down = True
        self.log.warning("User requested shutdown...")
        if self._cron_handle is not None:
            self._cron_handle.cancel()
        for srv, _ in self._listeners:
            srv.close()
        self._run_shutdown_hooks()
        for conn in list(self.clients.values()):
            conn.write_out()
            conn.abort()
        for srv, _ in self._listeners:
            try:
                await asyncio.wait_for(srv.wait_closed(), 1.0)
            except (asyncio.TimeoutError, Exception):  # noqa: BLE001
                pass
        self._listeners = []
        self._remove_unix_socket()
        if self._stopped is not None and not self._stopped.done():
            self._stopped.set_result(None)

    def _run_shutdown_hooks(self) -> None:
        for hook in list(self.shutdown_hooks):
            try:
                hook(self)
            except Exception:  # noqa: BLE001 - report, keep shutting down
                self.log.exception("shutdown hook %r failed", hook)
                self.exit_code = 1

    def _remove_unix_socket(self) -> None:
        if self._unix_path:
            self.log.info("Removing the unix socket file.")
            try:
                os.unlink(self._unix_path)
            except OSError:
                pass

    async def wait_closed(self) -> None:
        await self._stopped


# CONFIG SET directives that persistence follows -> Durability attribute.
PERSISTENCE_DIRECTIVES = {
    "appendonly": "appendonly", "appendfsync": "appendfsync", "dir": "dir",
    "save": "save_points", "dbfilename": "dbfilename",
    "aof-use-rdb-preamble": "aof_use_rdb_preamble",
    "aof-load-truncated": "aof_load_truncated",
    "auto-aof-rewrite-percentage": "auto_aof_rewrite_percentage",
    "auto-aof-rewrite-min-size": "auto_aof_rewrite_min_size",
    "stop-writes-on-bgsave-error": "stop_writes_on_bgsave_error",
}


ENCODING_DIRECTIVES = ("hash-max-listpack-entries", "hash-max-listpack-value",
                       "set-max-intset-entries", "set-max-listpack-entries",
                       "set-max-listpack-value", "zset-max-listpack-entries",
                       "zset-max-listpack-value", "list-max-listpack-size",
                       "list-compress-depth")
"""The directives of the engine's EncodingLimits (each the attribute of its name)."""


def encoding_limits(cfg: ServerConfig) -> EncodingLimits:
    """The engine's collection encoding thresholds, as configured."""
    limits = EncodingLimits()
    for name in ENCODING_DIRECTIVES:
        setattr(limits, name.replace("-", "_"), cfg.get(name))
    return limits


def persistence_options(cfg: ServerConfig) -> dict:
    """Engine keyword arguments that make it persistent in the configured dir."""
    return dict(dir=cfg.dir, appendonly=cfg.appendonly, appendfsync=cfg.appendfsync,
                dbfilename=cfg.dbfilename, appenddirname=cfg.appenddirname,
                appendfilename=cfg.appendfilename,
                aof_use_rdb_preamble=cfg.aof_use_rdb_preamble,
                aof_load_truncated=cfg.aof_load_truncated, save=list(cfg.save),
                auto_aof_rewrite_percentage=cfg.auto_aof_rewrite_percentage,
                auto_aof_rewrite_min_size=cfg.auto_aof_rewrite_min_size,
                stop_writes_on_bgsave_error=cfg.stop_writes_on_bgsave_error, embedded=False)


# The directives of maxmemory and eviction: the Engine's keyword arguments of the same names.
MEMORY_DIRECTIVES = ("maxmemory", "maxmemory-policy", "maxmemory-samples",
                     "maxmemory-eviction-tenacity", "lfu-log-factor", "lfu-decay-time")


def memory_options(cfg: ServerConfig) -> dict:
    """Engine keyword arguments for maxmemory and eviction."""
    return {name.replace("-", "_"): getattr(cfg, name.replace("-", "_"))
            for name in MEMORY_DIRECTIVES}


LEVELS = {"debug": logging.DEBUG, "verbose": 15, "notice": logging.INFO,
          "warning": logging.WARNING, "nothing": logging.CRITICAL + 10}


def set_log_level(level: str) -> None:
    log.setLevel(LEVELS.get(level, logging.INFO))


__all__ = ["Server", "ListenError", "protected_mode_refuses", "set_log_level"]
