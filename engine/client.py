"""A redis-py client whose connections run commands in an in-process Engine.

    from engine.client import EmbeddedRedis
    r = EmbeddedRedis()                      # a fresh Engine, or EmbeddedRedis(engine=e)
    r.xadd("jobs", {"task": "resize"})
    r.xreadgroup("workers", "w1", {"jobs": ">"}, count=10, claim_min_idle_time=30000)

Everything above the connection is plain redis-py: ConnectionPool, Redis, the
command methods and their response callbacks, pipelines and MULTI/EXEC
transactions, WATCH. `EmbeddedConnection` replaces the socket: `send_command`
encodes the arguments the way redis-py does and runs the command in the engine at
once (a server also executes commands as they arrive), keeping the reply;
`read_response` hands back the next kept reply exactly as redis-py's RESP parsers
would have produced it (bytes, or str with decode_responses; error replies raised
as the redis.exceptions class that redis-py maps the error prefix to). Nothing is
packed to or parsed from RESP on this path.

The engine has no notion of connections, so this module provides what a server
does per connection: HELLO (RESP2/RESP3 per connection), AUTH (accepted: there is
no access control in-process), CLIENT SETINFO/SETNAME/GETNAME/ID/INFO, RESET,
QUIT, MULTI/EXEC/DISCARD (queued, then run atomically), WATCH/UNWATCH (from the
keys the engine reports as touched), and blocking XREAD/XREADGROUP ... BLOCK (the
caller waits until a client of the same engine changes one of the keys, or the
timeout). All clients of one Engine share one lock, so the client can be used from
several threads. Writes made by calling Engine.execute directly bypass that lock
(hold `engine_lock(engine)` around them when threads are involved) and neither
wake blocked readers nor abort WATCHed transactions.

Not available (the engine has no such commands): Pub/Sub, scripting (and therefore
redis-py's Lock), client-side caching, MONITOR, cluster mode.
"""
from __future__ import annotations

import threading
import weakref
from collections import deque
from itertools import count as _count
from time import monotonic
from typing import Any, Optional

from redis import Redis
from redis.connection import AbstractConnection, ConnectionPool, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError, DataError
from redis.maint_notifications import MaintNotificationsConfig
from redis.utils import SENTINEL

from engine import Engine
from engine.commands.dispatch import resolve, to_argv
from engine.errors import ResponseError as EngineError, unknown_subcommand, wrong_arity
from engine.reply import OK, Status

__all__ = ["EmbeddedRedis", "EmbeddedConnection", "EmbeddedConnectionPool", "engine_lock"]

# What HELLO reports. 8.4 is the first Redis with everything Sluice implements
# (XREADGROUP ... CLAIM).
SERVER_NAME = b"redis"
SERVER_VERSION = b"8.4.0"

QUEUED = Status(b"QUEUED")
RESET = Status(b"RESET")
EXECABORT = "EXECABORT Transaction discarded because of previous errors."


# -- per-engine state shared by every connection ----------------------------------

class _EngineState:
    """The lock, WATCH registry and blocked readers of one Engine."""

    __slots__ = ("lock", "cond", "watchers", "blocked", "waiters", "ids", "connections",
                 "tracking", "__weakref__")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.watchers: dict = {}    # (db index, key) -> set of connections WATCHing it
        self.blocked: dict = {}     # (db index, key) -> number of readers blocked on it
        self.waiters = 0            # readers blocked on any key
        self.ids = _count(1)        # CLIENT ID
        self.connections: "weakref.WeakSet[EmbeddedConnection]" = weakref.WeakSet()
        # Whether the connections' contexts collect touched keys. Off until the first
        # WATCH or blocked read on this engine (collecting costs every write a little),
        # then on for good.
        self.tracking = False

    def track(self) -> None:
        """Makes every connection's context report the keys its commands change."""
        if not self.tracking:
            self.tracking = True
            for conn in list(self.connections):
                if conn._ctx is not None:
                    _enable_tracking(conn._ctx)

    def touched(self, db: int, keys: list) -> None:
        """Keys a command changed: dirty the WATCHes on them, wake blocked readers."""
        watchers = self.watchers
        if watchers:
            for key in keys:
                conns = watchers.get((db, key))
                if conns:
                    for conn in conns:
                        conn._watch_dirty = True
        if self.waiters:
            blocked = self.blocked
            for key in keys:
                if (db, key) in blocked:
                    self.cond.notify_all()
                    break


def _enable_tracking(ctx) -> None:
    try:
        ctx.tracking = True
    except AttributeError:      # an engine that always collects touched keys
        pass


_states: "weakref.WeakKeyDictionary[Engine, _EngineState]" = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def _state_for(engine: Engine) -> _EngineState:
    with _states_lock:
        state = _states.get(engine)
        if state is None:
            state = _states[engine] = _EngineState()
        return state


def engine_lock(engine: Engine) -> threading.RLock:
    """The lock EmbeddedRedis clients of `engine` hold while it runs a command.

    Hold it around direct Engine.execute calls made while other threads use clients."""
    return _state_for(engine).lock


# -- reply conversion -------------------------------------------------------------

def _plain(reply):
    """A reply as redis-py's parsers give it without decoding: Status -> bytes."""
    return bytes(reply) if reply.__class__ is Status else reply


def _decode_utf8(value):
    """decode_responses=True with the default encoding: every bytes value -> str."""
    cls = value.__class__
    if cls is bytes or cls is Status:
        return value.decode()
    if cls is list:
        return [x.decode() if x.__class__ is bytes else _decode_utf8(x) for x in value]
    if cls is dict:
        return {_decode_utf8(k): _decode_utf8(v) for k, v in value.items()}
    if cls is set or cls is tuple:
        return cls(_decode_utf8(x) for x in value)
    return value


def _decoder(encoding: str, errors: str):
    if encoding.lower().replace("_", "-") in ("utf-8", "utf8") and errors == "strict":
        return _decode_utf8

    def decode(value):
        cls = value.__class__
        if cls is bytes or cls is Status:
            return value.decode(encoding, errors)
        if cls is list:
            return [decode(x) for x in value]
        if cls is dict:
            return {decode(k): decode(v) for k, v in value.items()}
        if cls is set or cls is tuple:
            return cls(decode(x) for x in value)
        return value
    return decode


class _Packed:
    """An encoded command, as pack_command/pack_commands return it."""

    __slots__ = ("argv",)

    def __init__(self, argv: list) -> None:
        self.argv = argv


class _NoSocket:
    """What `_sock` holds while connected: redis-py only tests it and closes it."""

    __slots__ = ()

    def shutdown(self, how) -> None:
        pass

    def close(self) -> None:
        pass

    def settimeout(self, timeout) -> None:
        pass


_NO_SOCKET = _NoSocket()


# -- the connection ---------------------------------------------------------------

class EmbeddedConnection(AbstractConnection):
    """A redis-py connection that executes commands in an Engine in this process."""

    # Arguments of redis.Connection (network options) accepted and ignored, so pools
    # built for TCP connections can be pointed at this class.
    _IGNORED = ("host", "port", "socket_keepalive", "socket_keepalive_options",
                "socket_type", "path", "ssl", "client_class")

    def __init__(self, engine: Optional[Engine] = None, **kwargs) -> None:
        if engine is None:
            raise TypeError("EmbeddedConnection needs engine=<engine.Engine>")
        for name in self._IGNORED:
            kwargs.pop(name, None)
        kwargs.setdefault("maint_notifications_config", MaintNotificationsConfig(enabled=False))
        self.engine = engine
        self._state = _state_for(engine)
        self._execute_in = engine.execute_in
        self._ctx = None
        self._replies: deque = deque()
        self._multi: Optional[list] = None     # queued argvs between MULTI and EXEC
        self._multi_dirty = False              # a command failed to queue: EXECABORT
        self._watched: dict = {}               # (db, key) -> existed when WATCHed
        self._watch_dirty = False
        self._client_id = 0
        self._client_name = None
        self._inbuf = bytearray()              # raw RESP given to send_packed_command
        super().__init__(**kwargs)
        enc = self.encoder
        self._decode = _decoder(enc.encoding, enc.encoding_errors) if enc.decode_responses else None
        self._fast_encode = (enc.encoding.lower().replace("_", "-") in ("utf-8", "utf8")
                             and enc.encoding_errors == "strict")

    def _parse_error(self, message: str):
        """The exception redis-py's parser makes of an error reply."""
        return self._parser.parse_error(message)

    # redis-py plumbing -----------------------------------------------------------

    def repr_pieces(self):
        pieces = [("engine", hex(id(self.engine))), ("db", self.db)]
        if self.client_name:
            pieces.append(("client_name", self.client_name))
        return pieces

    @property
    def host(self) -> str:
        return "embedded"

    @host.setter
    def host(self, value) -> None:
        pass

    port = None

    def _host_error(self) -> str:
        return "embedded Sluice engine"

    def _connect(self):
        ctx = self.engine.new_context(0, False)   # a new connection: db 0, RESP2
        state = self._state
        with state.lock:
            state.connections.add(self)
            if state.tracking:
                _enable_tracking(ctx)
            self._ctx = ctx
        self._client_id = next(state.ids)
        self._client_name = None
        return _NO_SOCKET

    def connect(self) -> None:
        if self._sock is None:
            super().connect()

    def activate_maint_notifications_handling_if_enabled(self, *args, **kwargs) -> None:
        # redis-py would resolve the host name for RESP3 maintenance notifications;
        # there is no server to send them.
        return None

    def disconnect(self, *args, **kwargs) -> None:
        super().disconnect(*args, **kwargs)
        self._ctx = None
        self._replies.clear()
        self._inbuf.clear()
        self._multi = None
        self._multi_dirty = False
        if self._watched:
            with self._state.lock:
                self._unwatch()

    def check_health(self) -> None:
        pass

    def can_read(self, timeout: float = 0) -> bool:
        return bool(self._replies)

    # The "packed" form of a command is its encoded argv (in a _Packed): encoding
    # happens up front, so a pipeline with an argument redis-py cannot encode fails
    # before any of its commands ran, as with a socket; no RESP in between.

    def pack_command(self, *args):
        return [_Packed(self._argv(args))]

    def pack_commands(self, commands):
        return [_Packed(self._argv(tuple(args))) for args in commands]

    def send_packed_command(self, command, check_health=True) -> None:
        if isinstance(command, (bytes, bytearray, memoryview, str)):
            command = [command]
        for item in command:
            if item.__class__ is _Packed:
                self._send(item.argv)
            elif isinstance(item, tuple):
                self._send(self._argv(item))
            else:
                self._feed_resp(item.encode() if isinstance(item, str) else item)

    # sending: run the command now, keep the reply --------------------------------

    def send_command(self, *args, **kwargs) -> None:
        self._send(self._argv(args))

    def _argv(self, args: tuple) -> list:
        """The command as the list of bytes redis-py would have sent."""
        name = args[0]
        if name.__class__ is str:
            if " " in name:
                args = (*name.split(), *args[1:])
        elif isinstance(name, (bytes, bytearray)) and b" " in name:
            args = (*bytes(name).split(), *args[1:])
        if self._fast_encode:
            try:
                return to_argv(args)
            except TypeError:
                pass
        encode = self.encoder.encode        # its rules, and its DataError
        return [bytes(v) if isinstance(v, (bytearray, memoryview)) else v
                for v in map(encode, args)]

    def _send(self, argv: list) -> None:
        ctx = self._ctx
        if ctx is None:
            self.connect()
            ctx = self._ctx
        special = _SPECIAL.get(argv[0])
        if special is None and not argv[0].isupper():
            special = _SPECIAL.get(argv[0].upper())
        if self._multi is not None:
            self._replies.append(self._queue(argv, special))
        elif special is not None:
            with self._state.lock:
                self._replies.append(self._special(special, argv))
        else:
            state = self._state
            with state.lock:
                touched = ctx.touched
                try:
                    reply = self._execute_in(ctx, argv)
                except EngineError as err:
                    reply = self._parse_error(str(err))
                if touched:
                    state.touched(ctx.db.index, touched)
                if ctx.block is not None:
                    reply = self._block(argv)
            self._replies.append(reply)

    def _run(self, argv: list):
        """Runs one engine command (lock held); the reply, or the error instance."""
        ctx = self._ctx
        touched = ctx.touched
        try:
            reply = self._execute_in(ctx, argv)
        except EngineError as err:
            reply = self._parse_error(str(err))
        if touched:
            self._state.touched(ctx.db.index, touched)
        return reply

    # reading ---------------------------------------------------------------------

    def read_response(self, disable_decoding=False, *, timeout=SENTINEL,
                      disconnect_on_error=True, push_request=False):
        try:
            reply = self._replies.popleft()
        except IndexError:
            if timeout is not SENTINEL:
                return None
            raise RedisConnectionError("read_response without a command sent "
                                       "(the embedded engine has no pushed messages)")
        if isinstance(reply, Exception):
            raise reply
        if self._decode is not None and not disable_decoding:
            return self._decode(reply)
        return bytes(reply) if reply.__class__ is Status else reply

    # raw RESP (send_packed_command with bytes) -------------------------------------

    def _feed_resp(self, data) -> None:
        """Parses RESP multibulk requests from raw bytes and sends each one."""
        buf = self._inbuf
        buf += data
        while buf:
            if buf[0] != 0x2A:                      # '*'
                raise DataError("the embedded connection takes RESP multibulk requests")
            end = buf.find(b"\r\n")
            if end < 0:
                return
            n, pos, argv = int(buf[1:end]), end + 2, []
            for _ in range(n):
                end = buf.find(b"\r\n", pos)
                if end < 0:
                    return
                size = int(buf[pos + 1:end])
                start = end + 2
                if len(buf) < start + size + 2:
                    return
                argv.append(bytes(buf[start:start + size]))
                pos = start + size + 2
            del buf[:pos]
            if argv:
                self._send(argv)

    # connection-level commands ----------------------------------------------------

    def _special(self, handler, argv: list):
        """Runs a command this module implements (lock held)."""
        try:
            _check_arity(handler, argv)
            return handler(self, argv)
        except EngineError as err:
            return self._parse_error(str(err))

    def _queue(self, argv: list, special):
        """Between MULTI and EXEC: queue the command, or run EXEC/DISCARD/..."""
        if special is not None:
            if special in _RUN_IN_MULTI:
                with self._state.lock:
                    return self._special(special, argv)
        try:
            if special is not None:
                _check_arity(special, argv)
            else:
                resolve(argv)
        except EngineError as err:
            self._multi_dirty = True
            return self._parse_error(str(err))
        self._multi.append((argv, special))
        return QUEUED

    def _hello(self, argv: list):
        resp3 = self._ctx.resp3
        name = SENTINEL
        i = 1
        if len(argv) >= 2:
            try:
                version = int(argv[1])
            except ValueError:
                raise EngineError("ERR Protocol version is not an integer or out of range")
            if version not in (2, 3):
                raise EngineError("NOPROTO unsupported protocol version")
            resp3 = version == 3
            i = 2
        while i < len(argv):
            opt, more = argv[i].lower(), len(argv) - i - 1
            if opt == b"auth" and more >= 2:
                i += 3
            elif opt == b"setname" and more:
                name = _valid_client_name(argv[i + 1])
                i += 2
            else:
                raise EngineError("ERR Syntax error in HELLO option '%s'"
                                  % argv[i].decode("utf-8", "replace"))
        if name is not SENTINEL:
            self._client_name = name
        self._ctx.resp3 = resp3
        fields = [b"server", SERVER_NAME, b"version", SERVER_VERSION,
                  b"proto", 3 if resp3 else 2, b"id", self._client_id,
                  b"mode", b"standalone", b"role", b"master", b"modules", []]
        if resp3:
            return dict(zip(fields[::2], fields[1::2]))
        return fields

    def _auth(self, argv: list):
        if len(argv) > 3:
            raise EngineError("ERR syntax error")
        return OK

    def _client(self, argv: list):
        sub = argv[1].lower()
        if sub == b"setinfo" and len(argv) == 4:
            if argv[2].lower() not in (b"lib-name", b"lib-ver"):
                raise EngineError("ERR Unrecognized option '%s'"
                                  % argv[2].decode("utf-8", "replace"))
            if any(c < 0x21 or c > 0x7E for c in argv[3]):
                raise EngineError("ERR %s cannot contain spaces, newlines or special "
                                  "characters." % argv[2].decode().upper())
            return OK
        if sub == b"setname" and len(argv) == 3:
            self._client_name = _valid_client_name(argv[2])
            return OK
        if sub == b"getname" and len(argv) == 2:
            return self._client_name
        if sub == b"id" and len(argv) == 2:
            return self._client_id
        if sub == b"info" and len(argv) == 2:
            return (b"id=%d addr=embedded laddr=embedded fd=-1 name=%s db=%d multi=%d "
                    b"watch=%d resp=%d lib-name= lib-ver=\n"
                    % (self._client_id, self._client_name or b"", self._ctx.db.index,
                       -1 if self._multi is None else len(self._multi), len(self._watched),
                       3 if self._ctx.resp3 else 2))
        if sub in (b"setinfo", b"setname", b"getname", b"id", b"info"):
            raise wrong_arity("client|" + sub.decode())
        raise unknown_subcommand(argv[0], argv[1])

    def _multi_cmd(self, argv: list):
        if self._multi is not None:
            raise EngineError("ERR MULTI calls can not be nested")
        self._multi = []
        self._multi_dirty = False
        return OK

    def _discard(self, argv: list):
        if self._multi is None:
            raise EngineError("ERR DISCARD without MULTI")
        self._multi = None
        self._unwatch()
        return OK

    def _exec(self, argv: list):
        """Runs the queued commands in order, atomically; errors stay in place."""
        if self._multi is None:
            raise EngineError("ERR EXEC without MULTI")
        queued, self._multi = self._multi, None
        if self._multi_dirty:
            self._multi_dirty = False
            self._unwatch()
            raise EngineError(EXECABORT)
        if self._watched:
            self._touch_expired_watched()
            aborted = self._watch_dirty
            self._unwatch()
            if aborted:
                return None
        ctx = self._ctx
        replies = []
        for cmd, special in queued:
            if special is not None:
                reply = self._special(special, cmd)
            else:
                reply = self._run(cmd)
                ctx.block = None        # inside a transaction nothing blocks
            replies.append(_plain(reply))
        return replies

    def _watch(self, argv: list):
        if self._multi is not None:
            raise EngineError("ERR WATCH inside MULTI is not allowed")
        self._state.track()
        db = self._ctx.db.index
        watchers = self._state.watchers
        for key in argv[1:]:
            if (db, key) in self._watched:
                continue
            # EXISTS first: a key already expired is deleted now, not after the WATCH.
            self._watched[(db, key)] = self._run([b"EXISTS", key]) == 1
            watchers.setdefault((db, key), set()).add(self)
        return OK

    def _unwatch_cmd(self, argv: list):
        self._unwatch()
        return OK

    def _unwatch(self) -> None:
        watchers = self._state.watchers
        for where in self._watched:
            conns = watchers.get(where)
            if conns is not None:
                conns.discard(self)
                if not conns:
                    del watchers[where]
        self._watched = {}
        self._watch_dirty = False

    def _touch_expired_watched(self) -> None:
        """A WATCHed key that existed and has expired since aborts EXEC (as in Redis):
        looking it up makes the engine delete it, which touches it."""
        ctx = self._ctx
        current = ctx.db
        try:
            for (db, key), existed in self._watched.items():
                if existed and not self._watch_dirty:
                    ctx.db = self.engine.databases[db]
                    self._run([b"EXISTS", key])
        finally:
            ctx.db = current

    def _reset(self, argv: list):
        self._multi = None
        self._multi_dirty = False
        self._unwatch()
        self._ctx.db = self.engine.databases[0]
        self._ctx.resp3 = False
        self._client_name = None
        return RESET

    def _quit(self, argv: list):
        self._multi = None
        self._unwatch()
        return OK

    # blocking reads ---------------------------------------------------------------

    def _block(self, argv: list):
        """XREAD/XREADGROUP ... BLOCK found nothing (lock held): wait until a client
        changes one of its keys, run it again; nil at the timeout."""
        ctx, state = self._ctx, self._state
        request, ctx.block = ctx.block, None
        state.track()
        if argv[0].lower() == b"xread":
            argv = self._resolve_dollar(argv, request)
        timeout = request.timeout_ms
        deadline = monotonic() + timeout / 1000.0 if timeout else None
        where = [(ctx.db.index, key) for key in request.keys]
        blocked = state.blocked
        for w in where:
            blocked[w] = blocked.get(w, 0) + 1
        state.waiters += 1
        try:
            while True:
                if deadline is None:
                    state.cond.wait()
                else:
                    remaining = deadline - monotonic()
                    if remaining <= 0 or not state.cond.wait(remaining):
                        return None
                reply = self._run(argv)
                if ctx.block is None:
                    if isinstance(reply, Exception) and argv[0].lower() == b"xreadgroup":
                        reply = self._unblocked_error(reply, request.keys)
                    return reply
                ctx.block = None
        finally:
            state.waiters -= 1
            for w in where:
                left = blocked[w] - 1
                if left:
                    blocked[w] = left
                else:
                    del blocked[w]

    def _unblocked_error(self, error, keys):
        """The error Redis gives a blocked XREADGROUP whose stream or group went away."""
        for key in keys:
            if self._run([b"TYPE", key]) != b"stream":
                return self._parse_error("UNBLOCKED the stream key no longer exists")
        if str(error).startswith("NOGROUP"):
            return self._parse_error("NOGROUP the consumer group this client was blocked on "
                                     "no longer exists")
        return error

    def _resolve_dollar(self, argv: list, request) -> list:
        """XREAD's `$` means the last ID when the command blocked, not when it wakes."""
        keys = request.keys
        first_id = len(argv) - len(keys)
        argv = list(argv)
        for i, key in enumerate(keys):
            if argv[first_id + i] == b"$":
                last = b"0-0"
                probe = self.engine.new_context(self._ctx.db.index, False)
                try:
                    info = self._execute_in(probe, [b"XINFO", b"STREAM", key])
                    last = info[info.index(b"last-generated-id") + 1]
                except (EngineError, ValueError):
                    pass
                argv[first_id + i] = last
        return argv


def _valid_client_name(name: bytes):
    if any(c < 0x21 or c > 0x7E for c in name):
        raise EngineError("ERR Client names cannot contain spaces, newlines or special "
                          "characters.")
    return name or None


def _check_arity(handler, argv: list) -> None:
    arity = _SPECIAL_ARITY[handler]
    if (arity > 0 and len(argv) != arity) or (arity < 0 and len(argv) < -arity):
        raise wrong_arity(argv[0].decode("utf-8", "replace").lower())


C = EmbeddedConnection
# Commands this module implements, by upper-case name; lower-case names resolve too.
_SPECIAL = {b"HELLO": C._hello, b"AUTH": C._auth, b"CLIENT": C._client,
            b"MULTI": C._multi_cmd, b"EXEC": C._exec, b"DISCARD": C._discard,
            b"WATCH": C._watch, b"UNWATCH": C._unwatch_cmd, b"RESET": C._reset,
            b"QUIT": C._quit}
_SPECIAL.update({name.lower(): handler for name, handler in _SPECIAL.items()})
# Their arity, as Redis counts it.
_SPECIAL_ARITY = {C._hello: -1, C._auth: -2, C._client: -2, C._multi_cmd: 1, C._exec: 1,
                  C._discard: 1, C._watch: -2, C._unwatch_cmd: 1, C._reset: 1, C._quit: -1}
# The ones a transaction runs at once instead of queueing (as Redis does).
_RUN_IN_MULTI = frozenset({C._exec, C._discard, C._multi_cmd, C._watch, C._reset, C._quit})
del C


# -- pool and client --------------------------------------------------------------

class EmbeddedConnectionPool(ConnectionPool):
    """A ConnectionPool of EmbeddedConnections to one engine."""

    def __init__(self, engine: Optional[Engine] = None, connection_class=EmbeddedConnection,
                 **connection_kwargs) -> None:
        connection_kwargs.setdefault("maint_notifications_config",
                                     MaintNotificationsConfig(enabled=False))
        super().__init__(connection_class=connection_class,
                         engine=engine if engine is not None else Engine(),
                         **connection_kwargs)

    @property
    def engine(self) -> Engine:
        return self.connection_kwargs["engine"]

    # The pool's bookkeeping without what only matters for sockets: no fork check
    # (a forked child has its own copy of the engine, nothing is shared), no
    # connection-count metrics, no re-authentication event on release.

    def get_connection(self, command_name=None, *keys, **options) -> EmbeddedConnection:
        with self._lock:
            try:
                connection = self._available_connections.pop()
            except IndexError:
                connection = self.make_connection()
            self._in_use_connections.add(connection)
        try:
            if connection._ctx is None:
                connection.connect()
            elif connection._replies:
                # Returned with replies nobody read (an exception mid-pipeline): a
                # socket would have data pending, so start over, as redis-py does.
                connection.disconnect()
                connection.connect()
        except BaseException:
            self.release(connection)
            raise
        return connection

    def release(self, connection: EmbeddedConnection) -> None:
        with self._lock:
            try:
                self._in_use_connections.remove(connection)
            except KeyError:
                return
            self._available_connections.append(connection)


# Redis() arguments about the network: accepted so code written for a server runs
# unchanged, and ignored.
_NETWORK_ARGS = frozenset({
    "host", "port", "socket_timeout", "socket_connect_timeout", "socket_keepalive",
    "socket_keepalive_options", "socket_read_size", "unix_socket_path", "retry_on_timeout",
    "retry_on_error", "retry", "ssl", "ssl_keyfile", "ssl_certfile", "ssl_cert_reqs",
    "ssl_include_verify_flags", "ssl_exclude_verify_flags", "ssl_ca_certs", "ssl_ca_path",
    "ssl_ca_data", "ssl_check_hostname", "ssl_password", "ssl_validate_ocsp",
    "ssl_validate_ocsp_stapled", "ssl_ocsp_context", "ssl_ocsp_expected_cert",
    "ssl_min_version", "ssl_ciphers", "maint_notifications_config",
    "oss_cluster_maint_notifications_handler",
})
# Redis() arguments passed on to the connections.
_CONNECTION_ARGS = frozenset({
    "db", "username", "password", "encoding", "encoding_errors", "decode_responses",
    "health_check_interval", "client_name", "lib_name", "lib_version", "driver_info",
    "redis_connect_func", "credential_provider", "protocol", "legacy_responses",
})


class EmbeddedRedis(Redis):
    """redis.Redis running on an in-process Engine: construct it instead of Redis.

    EmbeddedRedis(engine=None, db=0, decode_responses=False, protocol=2 or 3, ...)
    takes Redis's arguments; network ones (host, port, socket_*, ssl_*, retry...)
    are accepted and ignored. Without `engine` the client gets a new Engine of its
    own (`client.engine`); clients built on the same Engine see the same data.
    """

    def __init__(self, engine: Optional[Engine] = None, *,
                 connection_pool: Optional[ConnectionPool] = None,
                 max_connections: Optional[int] = None,
                 single_connection_client: bool = False,
                 event_dispatcher=None, **kwargs: Any) -> None:
        if engine is not None and not isinstance(engine, Engine):
            raise TypeError(f"engine must be an engine.Engine, not {type(engine).__name__} "
                            f"(EmbeddedRedis takes no address)")
        owns_pool = connection_pool is None
        if owns_pool:
            pool_kwargs = {}
            for name, value in kwargs.items():
                if name in _CONNECTION_ARGS:
                    pool_kwargs[name] = value
                elif name not in _NETWORK_ARGS:
                    raise TypeError(f"EmbeddedRedis() got an unexpected keyword argument "
                                    f"'{name}'")
            if not any(k in pool_kwargs for k in ("driver_info", "lib_name", "lib_version")):
                pool_kwargs["driver_info"] = _default_driver_info()
            connection_pool = EmbeddedConnectionPool(engine, max_connections=max_connections,
                                                     **pool_kwargs)
        super().__init__(connection_pool=connection_pool,
                         single_connection_client=single_connection_client,
                         event_dispatcher=event_dispatcher)
        self.auto_close_connection_pool = owns_pool

    @property
    def engine(self) -> Engine:
        return self.connection_pool.connection_kwargs["engine"]

    def _execute_command(self, *args, **options):
        """Redis._execute_command without what a socket needs: no retries (nothing
        here fails transiently), no timing for metrics, no reconnect check."""
        conn = self.connection
        if conn is not None:
            with self.single_connection_lock:
                conn.send_command(*args, **options)
                return self.parse_response(conn, args[0], **options)
        pool = self.connection_pool
        conn = pool.get_connection()
        try:
            conn.send_command(*args, **options)
            return self.parse_response(conn, args[0], **options)
        finally:
            pool.release(conn)

    @classmethod
    def from_url(cls, url: str, engine: Optional[Engine] = None, **kwargs: Any):
        """redis://host:port/db?decode_responses=True&protocol=3 -> an EmbeddedRedis
        (the database, credentials and query options are used; the address is not)."""
        options = {k: v for k, v in parse_url(url).items() if k in _CONNECTION_ARGS}
        options.update(kwargs)
        return cls(engine, **options)


_driver_info = None


def _default_driver_info():
    """redis-py's default DriverInfo, built once (it reads package metadata)."""
    global _driver_info
    if _driver_info is None:
        from redis.driver_info import resolve_driver_info
        _driver_info = resolve_driver_info()
    return _driver_info
