"""A redis-py client whose connections run commands in an in-process Engine.

    from engine.api.client import EmbeddedRedis
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

The engine has no notion of connections; what a server does per connection comes
from engine/api/session.py, which the network server (engine/server/) shares: HELLO
(RESP2/RESP3 per connection), AUTH (accepted: there is no access control
in-process), CLIENT SETINFO/SETNAME/GETNAME/ID/INFO, RESET, QUIT, MULTI/EXEC/DISCARD
(queued with Redis's queue-time error rules, then run atomically), WATCH/UNWATCH
(from the keys the engine reports as touched), and the blocking commands
(XREAD/XREADGROUP ... BLOCK, BLPOP & co.: parked in the registry of blocked clients
the server uses too, engine/api/blocked_clients.py, the caller's thread waits until
a client of the same engine changes one of the keys, a pending entry becomes
claimable for CLAIM, or the timeout; clients parked on a key are served oldest
first, by the thread whose command made the key ready; WAITAOF waits, the engine's
lock released, until the AOF has fsynced the connection's writes: the persistence's
fsync listener wakes it, and it looks again every FSYNC_POLL seconds when the lock
was busy then). All clients
of one Engine share one lock, so the client can be used from several threads.
Writes made by calling Engine.execute directly bypass that lock (hold
`engine_lock(engine)` around them when threads are involved) and neither wake
blocked readers nor abort WATCHed transactions.

Scripts run in-process too: EVAL/EVALSHA (redis-py's `register_script` and `Lock`),
FUNCTION and FCALL, each atomically under the engine's lock. One that runs long
holds the lock until it ends: the other threads' commands wait for it (no BUSY
errors), except SCRIPT KILL and FUNCTION KILL from a client already connected, which
stop one that has not written yet (one that has cannot be stopped, as in Redis; there
is no SHUTDOWN NOSAVE in-process).

Not available (the engine has no such commands): Pub/Sub (and so keyspace
notifications), client-side caching, MONITOR, cluster mode.
"""
from __future__ import annotations

import heapq
import threading
import weakref
from collections import deque
from time import monotonic
from typing import Any, Optional

from redis import Redis
from redis.connection import AbstractConnection, ConnectionPool, parse_url
from redis.exceptions import ConnectionError as RedisConnectionError, DataError
from redis.maint_notifications import MaintNotificationsConfig
from redis.utils import SENTINEL

from engine import Engine
from engine.commands.dispatch import to_argv
from engine.core.errors import ResponseError as EngineError
from engine.resp.reply import BigNumber, SetReply, Status
from engine.api.session import (SERVER_NAME, SERVER_VERSION, BlockedRead, Hub, Session,
                                Verbatim)

__all__ = ["EmbeddedRedis", "EmbeddedConnection", "EmbeddedConnectionPool", "engine_lock"]

# SERVER_NAME / SERVER_VERSION (what HELLO reports) come from engine/api/session.py and
# stay importable from here.

FSYNC_POLL = 0.1    # seconds between two looks of a waiting WAITAOF (Redis's 10 Hz)


# -- per-engine state shared by every connection ----------------------------------

class ThreadWaiting:
    """How the embedded client's blocked clients wait: each blocked thread waits on
    the engine's condition variable (its lock released) and, woken or at the next
    timer, runs what is due (engine/api/blocked_clients.py's timers, news from the
    fsync thread) under the lock. A timer exists only while some client is parked,
    so some thread is always waiting to run it."""

    def __init__(self, lock: threading.RLock) -> None:
        self.lock = lock
        self.cond = threading.Condition(lock)
        self._timers: list = []         # a heap of _Timer
        self._seq = 0
        self._soon: deque = deque()     # callbacks from other threads

    def call_later(self, delay: float, callback, *args) -> "_Timer":
        self._seq += 1
        timer = _Timer(monotonic() + delay, self._seq, callback, args)
        heapq.heappush(self._timers, timer)
        try:
            self.cond.notify_all()      # waiting threads wait until it is due
        except RuntimeError:
            # a CLAIM reader's due time moved by an Engine.execute made without the
            # lock (see engine_lock): the threads see the timer when they next wake
            pass
        return timer

    def call_soon_threadsafe(self, callback) -> None:
        """Called by the AOF's fsync thread: wakes the waiting threads, unless another
        thread holds the lock (they look within FSYNC_POLL: an fsync thread must not
        wait for a long script)."""
        self._soon.append(callback)
        if self.lock.acquire(blocking=False):
            try:
                self.cond.notify_all()
            finally:
                self.lock.release()

    def run_due(self) -> Optional[float]:
        """Runs the callbacks due now (lock held); seconds until the next timer, or
        None (FSYNC_POLL while news from another thread may be pending)."""
        soon = self._soon
        while soon:
            soon.popleft()()
        timers = self._timers
        while timers:
            timer = timers[0]
            if timer.cancelled:
                heapq.heappop(timers)
                continue
            wait = timer.when - monotonic()
            if wait > 0:
                return wait
            heapq.heappop(timers)
            timer.callback(*timer.args)
        return None


class _Timer:
    """A ThreadWaiting timer (cancel() as asyncio's TimerHandle)."""

    __slots__ = ("when", "seq", "callback", "args", "cancelled")

    def __init__(self, when: float, seq: int, callback, args: tuple) -> None:
        self.when = when
        self.seq = seq
        self.callback = callback
        self.args = args
        self.cancelled = False

    def __lt__(self, other: "_Timer") -> bool:
        return (self.when, self.seq) < (other.when, other.seq)

    def cancel(self) -> None:
        self.cancelled = True


class _EngineState(Hub):
    """The lock, WATCH registry and blocked clients of one Engine (a session Hub
    whose blocked clients wait on a condition variable: ThreadWaiting)."""

    def __init__(self, engine: Engine) -> None:
        # A proxy: the state lives in a WeakKeyDictionary keyed by the engine.
        super().__init__(weakref.proxy(engine))
        self.lock = threading.RLock()
        self.waiting = ThreadWaiting(self.lock)
        self.cond = self.waiting.cond
        self.blocked_clients.waiting = self.waiting
        self.blocked_clients.after_serving = self.cond.notify_all
        self.sessions = weakref.WeakValueDictionary()
        self.accept_any_auth = True     # no access control in-process
        if engine.durability is not None:
            engine.durability.fsync_listeners.append(self.blocked_clients.fsynced)

    def key_ready(self, db: int, key: bytes) -> None:
        super().key_ready(db, key)
        self.cond.notify_all()


class _Answer:
    """Where a blocked thread's reply is left (the registry's answer callback)."""

    __slots__ = ("cond", "done", "reply")

    def __init__(self, cond: threading.Condition) -> None:
        self.cond = cond
        self.done = False
        self.reply = None

    def __call__(self, blocked, reply, null_array: bool) -> None:
        self.done, self.reply = True, reply
        self.cond.notify_all()


_states: "weakref.WeakKeyDictionary[Engine, _EngineState]" = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()


def _state_for(engine: Engine) -> _EngineState:
    with _states_lock:
        state = _states.get(engine)
        if state is None:
            state = _states[engine] = _EngineState(engine)
        return state


def engine_lock(engine: Engine) -> threading.RLock:
    """The lock EmbeddedRedis clients of `engine` hold while it runs a command.

    Hold it around direct Engine.execute calls made while other threads use clients."""
    return _state_for(engine).lock


def _script_kill(argv: list) -> bool:
    """SCRIPT KILL or FUNCTION KILL."""
    return (len(argv) == 2 and argv[0].lower() in (b"script", b"function")
            and argv[1].lower() == b"kill")


# -- reply conversion -------------------------------------------------------------

def _plain(reply):
    """A reply as redis-py's parsers give it without decoding: Status -> bytes."""
    cls = reply.__class__
    return bytes(reply) if cls is Status or cls is Verbatim else reply


# the commands whose reply may hold RESP3 types on a RESP2 connection (a script's reply
# as it made it; EXEC's may hold one)
_SCRIPT_REPLIES = frozenset(("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro",
                             "exec"))


def _resp2(reply):
    """A reply as a RESP2 connection reads it back, as the server's codec downgrades it
    (engine/resp/codec.pyx): a double as its %.17g bulk string, a map as a flat array, a
    set as an array, true/false as 1/0, a big number as its digits."""
    cls = reply.__class__
    if cls is int:
        return reply if -2**63 <= reply < 2**63 else str(reply).encode()
    if cls is bytes or reply is None:
        return reply
    if cls is list or cls is SetReply or cls is tuple or cls is set or cls is frozenset:
        return [_resp2(item) for item in reply]
    if cls is dict:
        return [_resp2(x) for pair in reply.items() for x in pair]
    if cls is bool:
        return int(reply)
    if cls is float:
        return b"%.17g" % reply
    if cls is BigNumber:
        return bytes(reply)
    return reply


def _decode_utf8(value):
    """decode_responses=True with the default encoding: every bytes value -> str."""
    cls = value.__class__
    if cls is bytes or cls is Status or cls is Verbatim:
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
        if cls is bytes or cls is Status or cls is Verbatim:
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
        self._session: Optional[Session] = None   # the connection's client state
        self._ctx = None                          # its command context
        self._replies: deque = deque()
        self._inbuf = bytearray()              # raw RESP given to send_packed_command
        self._in_batch = False                 # inside send_packed_command
        super().__init__(**kwargs)
        enc = self.encoder
        self._decode = _decoder(enc.encoding, enc.encoding_errors) if enc.decode_responses else None
        self._fast_encode = (enc.encoding.lower().replace("_", "-") in ("utf-8", "utf8")
                             and enc.encoding_errors == "strict")

    def _parse_error(self, message: str):
        """The exception redis-py's parser makes of an error reply (whose bytes it
        decodes with replacement characters: engine errors keep a client's non-UTF-8
        bytes as surrogate escapes, see engine.core.errors.arg_text)."""
        message = message.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
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
        with self._state.lock:
            session = Session(self._state)        # a new connection: db 0, RESP2
            self._session = session
            self._ctx = session.ctx
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
        session, self._session = self._session, None
        self._ctx = None
        self._replies.clear()
        self._inbuf.clear()
        if session is not None:
            with self._state.lock:
                session.close()

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
        """Runs the commands as one batch (a pipeline, MULTI ... EXEC): what they
        change reaches the OS in one write at its end, as a server writes its AOF
        once per round. The batch holds the engine (see _block for the exception)."""
        if isinstance(command, (bytes, bytearray, memoryview, str)):
            command = [command]
        engine = self.engine
        with self._state.lock:
            engine.begin_batch()
            self._in_batch = True
            try:
                for item in command:
                    if item.__class__ is _Packed:
                        self._send(item.argv)
                    elif isinstance(item, tuple):
                        self._send(self._argv(item))
                    else:
                        self._feed_resp(item.encode() if isinstance(item, str) else item)
            finally:
                self._in_batch = False
                engine.end_batch()

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
        session = self._session
        if session is None:
            self.connect()
            session = self._session
        lock = self._state.lock
        if not lock.acquire(blocking=False):
            if self._state.busy is not None and _script_kill(argv):
                # the thread running a long script holds the lock: SCRIPT KILL (FUNCTION
                # KILL) only flags it (engine/api/scripts.py), as a server serves it then
                self._replies.append(self._call_unlocked(session, argv))
                return
            lock.acquire()
        try:
            try:
                reply = session.call(argv)
            except EngineError as err:
                reply = self._parse_error(str(err))
            else:
                if reply.__class__ is BlockedRead:
                    reply = self._block(reply)
                else:
                    if session.cmd_name in _SCRIPT_REPLIES and not session.ctx.resp3:
                        reply = _resp2(reply)
                    if reply.__class__ is list and session.cmd_name == "exec":
                        reply = [self._parse_error(str(r)) if isinstance(r, EngineError)
                                 else _plain(r) for r in reply]
        finally:
            lock.release()
        self._replies.append(reply)

    def _call_unlocked(self, session: Session, argv: list) -> Any:
        try:
            return session.call(argv)
        except EngineError as err:
            return self._parse_error(str(err))

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
        return _plain(reply)

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

    # blocking reads ---------------------------------------------------------------

    def _block(self, blocked: BlockedRead):
        """A blocking command found nothing (lock held): park it in the registry of
        blocked clients (engine/api/blocked_clients.py), which answers it; this
        thread waits until then, running the registry's timers when they are due."""
        state = self._state
        clients = state.blocked_clients
        waiting = state.waiting
        answer = _Answer(state.cond)
        clients.park(blocked, answer)
        if blocked.on_fsync and self._in_batch:
            # the pipeline's writes so far go to the log now: they are what it waits for
            self.engine.end_batch()
            self.engine.begin_batch()
        try:
            while True:
                if state.ready:
                    clients.serve_ready()   # changes made outside a client's _send
                if clients.fsync_waiters:
                    clients.serve_fsync_waiters()
                wait = None if answer.done else waiting.run_due()
                if answer.done:
                    return self._blocked_reply(answer.reply)
                if clients.fsync_waiters:
                    wait = FSYNC_POLL if wait is None else min(wait, FSYNC_POLL)
                if self._in_batch:
                    # Others run while this pipeline waits: the batch so far ends
                    # here, or their calls would return with their writes unwritten.
                    self.engine.end_batch()
                try:
                    state.cond.wait(wait)
                finally:
                    if self._in_batch:
                        self.engine.begin_batch()
        finally:
            if not answer.done:
                clients.unpark(blocked)

    def _blocked_reply(self, reply):
        if isinstance(reply, EngineError):
            return self._parse_error(str(reply))
        return reply


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
            if connection._session is None:
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
