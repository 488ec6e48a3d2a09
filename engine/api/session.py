"""Client sessions: what Redis keeps per connection, shared by the embedded redis-py
client (engine/api/client.py) and the network server (engine/server/).

A `Session` is one client: a `Client` of the one road (engine/api/road.pyx: its
command context, flag bits, MULTI queue and subscriptions) with its CLIENT ID and
name, the MULTI/EXEC rules (EXECABORT), WATCHed keys and the commands it runs itself.
`Session.call(argv)` is `process_command(session, argv)`, the one road from a client
to a command (Redis's processCommand, then call()). It returns the reply (plain
values, as Engine.execute does), raises engine.ResponseError with Redis's text, or
returns the `BlockedRead` of a blocking command (XREAD ... BLOCK, BLPOP...) that has
to wait: the caller parks it in the hub's registry of blocked clients
(engine/api/blocked_clients.py), which serves it; the caller only waits its own way
(a condition variable in the embedded client, the event loop in the server).

A `Hub` is what the sessions of one engine share: CLIENT IDs, the WATCH registry,
the blocked clients, and the password (the part the road reads is its `HubState`).

The commands of the `session` layer are methods here: PING, HELLO, AUTH, CLIENT ID |
SETNAME | GETNAME | SETINFO | INFO | HELP, MULTI, EXEC, DISCARD, WATCH, UNWATCH,
RESET, QUIT and FLUSHALL (the engine's, plus WATCH/blocked-reader bookkeeping for the
other databases); EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT come from
engine/api/scripts.py. A subclass that runs more layers (the server: INFO, CONFIG,
COMMAND, pub/sub...) names them in `layers` and `commands`.
"""
from __future__ import annotations

from itertools import count as _count
from typing import Any, Optional

from engine.api.acl.acl_command import AclCommands
from engine.api.acl.permissions import acl_refusal
from engine.api.acl.users import AclUsers, may_stay_subscribed
from engine.api.blocked_clients import BlockedClients
from engine.api.client_pause import ClientPause
from engine.api.functions import FunctionCommands
from engine.api.road import QUEUED, Client, HubState, call, process_command, run_engine
from engine.api.scripts import ScriptCommands
from engine.commands.dispatch import resolve
from engine.commands.reads import claim_deadline
from engine.commands.table import Command, client_command, layer_commands
from engine.core.errors import OOM, ResponseError, arg_text, wrong_arity
from engine.resp.numbers import strict_int
from engine.resp.reply import OK, Status, Verbatim

__all__ = ["Session", "Hub", "BlockedRead", "Verbatim", "QUEUED", "process_command",
           "SERVER_NAME", "SERVER_VERSION"]

# What HELLO, INFO, redis.REDIS_VERSION and `sluice-server --version` report: the
# newest Redis whose every command (and argument) of the groups Sluice implements
# exists here, so that clients and test suites that switch features on by the version
# find them all (tests/commands/test_reported_version.py checks it against Redis's
# command facts): 7.2 (WAITAOF is its last command Sluice had to add), at its newest
# patch release. Newer features Sluice has too (the 8.x stream commands) work
# whatever the version says.
SERVER_NAME = b"redis"
SERVER_VERSION = b"7.2.16"

RESET_REPLY = Status(b"RESET")
EXECABORT = "EXECABORT Transaction discarded because of previous errors."
WRONGPASS = "WRONGPASS invalid username-password pair or user is disabled."
AUTH_WITHOUT_PASSWORD = ("ERR AUTH <password> called without any password configured for "
                         "the default user. Are you sure your configuration is correct?")
HELLO_NOAUTH = ("NOAUTH HELLO must be called with the client already authenticated, "
                "otherwise the HELLO AUTH <user> <pass> option can be used to authenticate "
                "the client and select the RESP protocol version at the same time")


# -- what the sessions of one engine share -----------------------------------------

class Hub(HubState):
    """CLIENT IDs, the WATCH registry, blocked clients and the password of the
    sessions of one engine.

    `touched(db, keys)` is called after every command that changed keys: it dirties
    the WATCHes on them and calls `key_ready(db, key)` for keys someone is blocked on;
    `serve_ready()`, after the command, serves those clients."""

    def __init__(self, engine, *, track: bool = False) -> None:
        super().__init__(engine)
        self.ids = _count(1)
        self.sessions: dict = {}        # id -> Session (a WeakValueDictionary if wanted)
        # watchers: (db, key) -> set of sessions WATCHing it (HubState)
        # the parked clients (the side that owns the hub sets how they wait), and
        # the two dicts of it read after every command, by the road
        self.blocked_clients = BlockedClients(self)
        self.client_pause = ClientPause(self)     # CLIENT PAUSE (the server's command)
        self.blocked = self.blocked_clients.by_key    # (db, key) -> parked clients
        self.ready = self.blocked_clients.ready       # keys changed since served
        self.acl = AclUsers()           # the ACL users; requirepass is default's password
        self.acl.on_change = self.acl_users_changed
        self.accept_any_auth = False    # AUTH always succeeds (the embedded client)
        # write_refusal: the error write commands get instead of running while
        # persistence fails (Redis's MISCONF); None normally. Its owner (the server)
        # keeps it current.
        # tracking: whether contexts collect touched keys (costs every write a
        # little): always for the server; for the embedded client from the first
        # WATCH/blocked read.
        self.tracking = track
        # notify_events: whether every command's keyspace events go to events() (the
        # server's notify-keyspace-events); else only those that report expired keys.
        # busy: while a script runs past `busy_threshold` seconds
        # (busy-reply-threshold), the BUSY error every command without the
        # allow-busy flag gets; else None; busy_caller: whose script it is.
        self.busy_threshold = 5.0

    # maxmemory

    def memory_refusal(self, record: Command, session: "Session") -> Optional[str]:
        """With a maxmemory, before any command (Redis's performEvictions): keys are
        evicted by the policy, their WATCHes dirtied and their `evicted` events fired;
        then OOM for a command that may grow memory (denyoom, or EXEC of a queue
        holding one, or any command to queue in MULTI) when nothing is left to evict;
        a script with a shebang that may write is refused at its start (scripts'
        Script.refused_for_memory); inside a script nothing is evicted (it is atomic):
        its denyoom calls are refused while over the limit (script_calls.pyx)."""
        if self.paused:             # nothing is evicted while clients are paused
            within, fired = not self.engine.over_maxmemory(), ()
        else:
            within, fired = self.engine.make_room()
        if fired:
            by_db: dict = {}
            for db, key in fired:
                by_db.setdefault(db, []).append(key)
            for db, keys in by_db.items():
                self.touched(db, keys)
                if self.notify_events:
                    self.events(db, [("e", b"evicted", key) for key in keys])
        if within:
            return None
        if "denyoom" in record.flags:
            return OOM
        if session.multi is not None:
            # queueing takes memory too: only EXEC of a queue without denyoom commands,
            # DISCARD, QUIT and RESET go through (as Redis)
            if record.aborts_exec:
                if any("denyoom" in queued.flags for _, queued in session.multi):
                    return OOM
            elif record.name not in ("discard", "quit", "reset"):
                return OOM
        return None

    # a script running long

    def while_busy(self) -> None:
        """Called every ~100k Lua instructions while `busy` is set: the server serves
        its other clients here (engine/server/busy.py). The embedded engine's lock keeps
        its other threads out until the script ends, so it does nothing."""

    def busy_over(self) -> None:
        """The busy script has ended (`busy` is None again)."""

    # authentication

    def _set_password(self, password: Optional[bytes]) -> None:
        self.acl.set_requirepass(password)
        self.acl_users_changed([self.acl.default], False)

    password = property(fset=_set_password,
                        doc="requirepass (write-only): the default user's password; None: "
                            "nopass.")

    def password_required(self) -> bool:
        return self.acl.password_required()

    def acl_users_changed(self, users: list, deleted: bool) -> None:
        """ACL SETUSER, DELUSER, LOAD changed these users: their clients are checked
        as the users now say; those of a user that is gone, or subscribed to a channel
        it may no longer use, are disconnected (as Redis)."""
        for session in list(self.sessions.values()):
            if session.user in users:
                if deleted or not may_stay_subscribed(session.user, session):
                    self.disconnect(session)
                else:
                    session.restricted = not session.user.unrestricted()

    def disconnect(self, session: "Session") -> None:
        """A client whose user was deleted: the server closes its connection; an
        embedded client goes back to the default user, unauthenticated."""
        session.set_user(self.acl.default, not self.password_required())

    # tracking and readiness

    def track(self) -> None:
        """Makes every session's context report the keys its commands change."""
        if not self.tracking:
            self.tracking = True
            for session in list(self.sessions.values()):
                session.ctx.tracking = True

    def touched(self, db: int, keys: list) -> None:
        """Keys a command changed: dirty the WATCHes on them, wake blocked readers.
        Keys of database `db`, or (db, key) pairs for another one (COPY ... DB)."""
        watchers = self.watchers
        if watchers:
            for key in keys:
                sessions = watchers.get(key if type(key) is tuple else (db, key))
                if sessions:
                    for session in sessions:
                        session.watch_dirty = True
        self.wake(db, keys)

    def wake(self, db: int, keys: list) -> None:
        """Keys whose consumer groups changed: wake their blocked readers only."""
        if self.blocked:
            blocked = self.blocked
            for key in keys:
                where = key if type(key) is tuple else (db, key)
                if where in blocked:
                    self.key_ready(*where)

    def key_ready(self, db: int, key: bytes) -> None:
        """A key some client is blocked on changed: it is served after the command."""
        self.blocked_clients.key_ready(db, key)

    def serve_ready(self) -> None:
        """Runs the clients parked on the keys that changed, oldest first."""
        self.blocked_clients.serve_ready()

    def events(self, db: int, events: list) -> None:
        """Keyspace events of a command (override: notifications), when notify_events
        is on or some key expired."""

    def after_call(self, client: "Session", record: Optional[Command], argv: list, ns: int,
                   blocked: bool) -> None:
        """A command that ran at least `hook_ns` ns (the road's call): the server's
        slow log, latency monitor and MONITOR clients hear it (blocked: it waits now).
        The embedded engine keeps none of them."""

    def before_call(self, client: "Session", record: Optional[Command], argv: list) -> None:
        """A command about to run while `monitoring`: MONITOR hears EVAL & co. here."""

    def interesting_keys(self, db: int) -> set:
        """Keys of database `db` that a WATCH or a blocked reader looks at."""
        keys = {key for (d, key) in self.watchers if d == db}
        keys.update(key for (d, key) in self.blocked if d == db)
        return keys


# -- blocked reads ---------------------------------------------------------------------

class BlockedRead:
    """A blocking command that found nothing (XREAD/XREADGROUP ... BLOCK, BLPOP,
    BZPOPMIN...: engine/commands/reads.pyx BlockRequest), or a WAITAOF whose writes
    the AOF has not fsynced yet: what it waits for and how to run it again. The
    waiting itself is the caller's (thread or event loop).

    keys/where: the keys ((db, key) pairs) whose change may serve it;
    timeout_ms: 0 = forever; claim_min_idle: >= 0 for XREADGROUP ... CLAIM, which can
    also be served when a pending entry becomes claimable (see claim_due); on_fsync:
    WAITAOF (no keys), run again when the AOF's fsyncs advance or it is turned off."""

    __slots__ = ("session", "argv", "keys", "db", "where", "timeout_ms", "is_group",
                 "group", "claim_min_idle", "key_type", "on_fsync",
                 # the registry's bookkeeping (engine/api/blocked_clients.py): how it is
                 # answered (None: not parked), its timeout timer, its FIFO number and
                 # its CLAIM due time
                 "answer", "timer", "seq", "due", "skip_due", "__weakref__")

    def __init__(self, session: "Session", argv: list, request) -> None:
        self.session = session
        self.key_type = request.key_type
        self.is_group = argv[0].lower() == b"xreadgroup"
        self.keys = list(dict.fromkeys(request.keys))
        self.db = session.ctx.db.index
        self.where = [(self.db, key) for key in self.keys]
        self.timeout_ms = request.timeout_ms
        self.claim_min_idle = request.claim_min_idle if self.is_group else -1
        self.on_fsync = request.on_fsync
        self.group = _group_name(argv) if self.is_group else None
        # XREAD's `$` there is already the last ID when the command blocked (BlockRequest).
        self.argv = request.argv
        self.answer = None
        self.timer = None

    def retry(self) -> tuple:
        """Runs the read again: (True, reply) when it is answered (entries, or an error
        instance), (False, None) to keep waiting.

        As in Redis 7.2+, which runs a woken command again: an XREADGROUP whose stream
        was deleted, flushed or renamed away, or whose group was destroyed, gets that
        run's own NOGROUP error, and one whose key now holds another type gets
        WRONGTYPE (Redis 7.0 sent "UNBLOCKED the stream key no longer exists" or
        "NOGROUP the consumer group this client was blocked on no longer exists"). An
        XREAD is not woken by such a change: it keeps waiting for entries. A WAITAOF
        is answered once its writes are fsynced, or with its error once the AOF is
        off."""
        if self.key_type is not None and not self._holds_key_type():
            return False, None
        if self.session.restricted:     # its user may have lost the right meanwhile
            record = resolve(self.argv)
            if (error := acl_refusal(self.session, record, self.argv)) is not None:
                return True, ResponseError(error)
        try:
            reply, waits = run_engine(self.session, self.argv)
        except ResponseError as err:
            if self.key_type is not None or self.on_fsync:
                return True, err
            if not self.is_group:
                return False, None
            return True, err
        if waits:
            return False, None
        return True, reply

    def _holds_key_type(self) -> bool:
        """Whether one of its keys holds the type it waits for (a list for BLPOP)."""
        db = self.session.engine.databases[self.db]
        for key in self.keys:
            value = db.peek(key)
            if value is not None and getattr(value, "TYPE_NAME", None) == self.key_type:
                return True
        return False

    def timeout_reply(self):
        """The reply at the timeout: a null array; WAITAOF's is what it has reached
        by then (its command run once more, not waiting)."""
        if not self.on_fsync:
            return None
        try:
            return run_engine(self.session, self.argv)[0]
        except ResponseError as err:
            return err

    def claim_due(self) -> Optional[int]:
        """For XREADGROUP ... CLAIM: the earliest time (engine clock, ms) at which a
        pending entry of its group on one of its keys becomes claimable (oldest
        delivery + min-idle-time), or None."""
        if self.claim_min_idle < 0:
            return None
        return claim_deadline(self.session.engine.databases[self.db], self.keys, self.group,
                              self.claim_min_idle)


def _group_name(argv: list) -> Optional[bytes]:
    for i in range(1, len(argv) - 2):
        if argv[i].lower() == b"group":
            return argv[i + 1]
        if argv[i].lower() == b"streams":
            break
    return None


# -- the session -----------------------------------------------------------------------

def _valid_client_name(name: bytes):
    if any(c < 0x21 or c > 0x7E for c in name):
        raise ResponseError("ERR Client names cannot contain spaces, newlines or special "
                            "characters.")
    return name or None


CLIENT_HELP = (
    "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "GETNAME",
    "    Return the name of the current connection.",
    "ID",
    "    Return the ID of the current connection.",
    "INFO",
    "    Return information about the current client connection.",
    "SETINFO <option> <value>",
    "    Set client meta attr. Options are:",
    "    * LIB-NAME: the client lib name.",
    "    * LIB-VER: the client lib version.",
    "SETNAME <name>",
    "    Assign the name <name> to the current connection.",
    "NO-EVICT (ON|OFF)",
    "    Protect current client connection from eviction.",
    "NO-TOUCH (ON|OFF)",
    "    Will not touch LRU/LFU stats when this mode is on.",
    "HELP",
    "    Print this help.",
)


class Session(Client, ScriptCommands, FunctionCommands, AclCommands):
    """One client of an engine (see the module docstring).

    Session(hub, ctx=None): a new client (database 0, RESP2; authenticated unless a
    password is required). `call(argv)` runs a command; `run(argv)` runs an engine
    command directly (no checks, not counted) and reports touched keys to the hub;
    `close()` forgets its WATCHes and unregisters it. Its flags (multi, authenticated,
    no_touch... as properties) are the road's `Client` bits."""

    layers = ("session",)           # the layers of the command table it runs itself
    commands: dict = layer_commands(*layers)    # their records, by name
    version = SERVER_VERSION.decode()
    client_help_lines: tuple = CLIENT_HELP      # CLIENT HELP's text

    def __init__(self, hub: Hub, ctx=None) -> None:
        self.hub = hub
        self.engine = hub.engine
        self.execute_in = hub.engine.execute_in
        if ctx is None:
            ctx = hub.engine.new_context(0, False)
        if hub.tracking:
            ctx.tracking = True
        self.ctx = ctx
        self.id = next(hub.ids)
        self.name = None
        self.lib_name = None
        self.lib_ver = None
        self.set_user(hub.acl.default, not hub.password_required())
        self.watched: dict = {}             # (db, key) -> existed when WATCHed
        hub.sessions[self.id] = self

    @classmethod
    def script_client(cls, hub: Hub, ctx) -> "Session":
        """The scripts' own client for sessions of this kind (engine/api/
        script_calls.pyx), in the scripts' context `ctx`."""
        client = cls.__new__(cls)
        Session.__init__(client, hub, ctx)
        client.serve_scripts()
        return client

    # state -----------------------------------------------------------------------

    @property
    def resp3(self) -> bool:
        return self.ctx.resp3

    @property
    def db(self) -> int:
        return self.ctx.db.index

    @property
    def subscriptions(self) -> int:
        return len(self.channels) + len(self.patterns) + len(self.shard_channels)

    def set_user(self, user, authenticated: bool = True) -> None:
        """The client runs as ACL `user` (checked unless it is unrestricted)."""
        self.user = user
        self.restricted = not user.unrestricted()
        self.authenticated = authenticated

    def auth_required(self) -> bool:
        return not self.authenticated and self.hub.password_required()

    def close(self) -> None:
        """The client went away: nothing of it stays behind in the hub."""
        self.multi = None
        self.unwatch()
        self.hub.sessions.pop(self.id, None)

    # running commands -----------------------------------------------------------------

    def lookup(self, name: bytes) -> Optional[Command]:
        """The record of a command this session runs itself (not an engine one)."""
        commands = self.commands
        cmd = commands.get(name)
        if cmd is None and not name.isupper():
            cmd = commands.get(name.lower())
        return cmd

    def call(self, argv: list) -> Any:
        """Runs a command: process_command (engine/api/road.pyx)."""
        return process_command(self, argv)

    def run(self, argv: list) -> Any:
        """Runs an engine command now (no checks, not counted, never blocks), telling
        the hub what it touched and which keyspace events fired: what a command of the
        session runs of the engine's (WATCH's EXISTS, PING, FLUSHALL)."""
        return run_engine(self, argv)[0]

    def new_blocked_read(self, argv: list, request) -> BlockedRead:
        return BlockedRead(self, argv, request)

    # MULTI / EXEC / WATCH -------------------------------------------------------

    @client_command("multi")
    def cmd_multi(self, argv: list):
        if self.multi is not None:
            raise ResponseError("ERR MULTI calls can not be nested")
        self.multi = []
        self.multi_dirty = False
        return OK

    @client_command("discard")
    def cmd_discard(self, argv: list):
        if self.multi is None:
            raise ResponseError("ERR DISCARD without MULTI")
        self.multi = None
        self.multi_dirty = False
        self.unwatch()
        return OK

    @client_command("exec")
    def cmd_exec(self, argv: list):
        """Runs the queued commands in order, atomically; errors stay in place. None
        (a null array) when a WATCHed key changed."""
        if self.multi is None:
            raise ResponseError("ERR EXEC without MULTI")
        queued, self.multi = self.multi, None
        if self.multi_dirty:
            self.multi_dirty = False
            self.unwatch()
            raise ResponseError(EXECABORT)
        if self.watched:
            self._touch_expired_watched()
            aborted = self.watch_dirty
            self.unwatch()
            if aborted:
                self.null_array = True
                return None
        replies = []
        engine = self.engine
        engine.transaction_begin()
        self.deny_blocking = True           # inside a transaction nothing blocks
        try:
            for cmd_argv, record in queued:
                replies.append(self.exec_one(cmd_argv, record))
        finally:
            self.deny_blocking = False
            engine.transaction_end(self.ctx.db.index, self.ctx)
        self.null_array = False
        return replies

    def exec_one(self, argv: list, record: Command):
        """One queued command inside EXEC (the road's call): its reply, or the error
        instance."""
        self.null_array = False
        if self.restricted and (error := acl_refusal(self, record, argv, "exec")) is not None:
            return ResponseError(error)
        try:
            reply = call(self, record, argv)
        except ResponseError as err:
            return err
        if reply is None and self.null_array:
            reply = self.ctx.nil_array
        return reply

    @client_command("watch")
    def cmd_watch(self, argv: list):
        if self.multi is not None:
            raise ResponseError("ERR WATCH inside MULTI is not allowed")
        self.hub.track()
        db = self.ctx.db.index
        watchers = self.hub.watchers
        for key in argv[1:]:
            if (db, key) in self.watched:
                continue
            # EXISTS first: a key already expired is deleted now, not after the WATCH.
            self.watched[(db, key)] = self.run([b"EXISTS", key]) == 1
            watchers.setdefault((db, key), set()).add(self)
        return OK

    @client_command("unwatch")
    def cmd_unwatch(self, argv: list):
        self.unwatch()
        return OK

    def unwatch(self) -> None:
        if self.watched:
            watchers = self.hub.watchers
            for where in self.watched:
                sessions = watchers.get(where)
                if sessions is not None:
                    sessions.discard(self)
                    if not sessions:
                        del watchers[where]
            self.watched = {}
        self.watch_dirty = False

    def _touch_expired_watched(self) -> None:
        """A WATCHed key that existed and has expired since aborts EXEC (as in Redis):
        looking it up makes the engine delete it, which touches it."""
        ctx = self.ctx
        current = ctx.db
        try:
            for (db, key), existed in self.watched.items():
                if existed and not self.watch_dirty:
                    ctx.db = self.engine.databases[db]
                    self.run([b"EXISTS", key])
        finally:
            ctx.db = current

    @client_command("flushall")
    def cmd_flushall(self, argv: list):
        """The engine's FLUSHALL; the keys of the other databases that WATCHes or
        blocked readers look at count as touched too (the engine reports only the
        caller's database)."""
        hub = self.hub
        current = self.ctx.db.index
        gone = []
        if hub.watchers or hub.blocked:
            for db in self.engine.databases:
                if db.index != current:
                    keys = [key for key in hub.interesting_keys(db.index) if key in db]
                    if keys:
                        gone.append((db.index, keys))
        reply = self.run(argv)
        for db, keys in gone:
            hub.touched(db, keys)
        return reply

    # connection commands --------------------------------------------------------

    @client_command("ping")
    def cmd_ping(self, argv: list):
        """The engine's PING, except in a RESP2 subscribed context: a message."""
        if self.subscriptions and not self.ctx.resp3:
            if len(argv) > 2:
                raise wrong_arity("ping")
            return [b"pong", argv[1] if len(argv) == 2 else b""]
        return self.run(argv)

    @client_command("hello")
    def cmd_hello(self, argv: list):
        version = 0
        i = 1
        if len(argv) >= 2:
            version = strict_int(argv[1])
            if version is None:
                raise ResponseError("ERR Protocol version is not an integer or out of range")
            if version not in (2, 3):
                raise ResponseError("NOPROTO unsupported protocol version")
            i = 2
        credentials = None
        name = None
        setname = False
        while i < len(argv):
            opt, more = argv[i].lower(), len(argv) - i - 1
            if opt == b"auth" and more >= 2:
                credentials = (argv[i + 1], argv[i + 2])
                i += 3
            elif opt == b"setname" and more:
                name = _valid_client_name(argv[i + 1])
                setname = True
                i += 2
            else:
                raise ResponseError("ERR Syntax error in HELLO option '%s'"
                                    % arg_text(argv[i]))
        if credentials is not None:
            self.authenticate(*credentials)
        if self.auth_required():
            raise ResponseError(HELLO_NOAUTH)
        if setname:
            self.name = name
        if version:
            self.ctx.resp3 = version == 3
        return self.hello_reply()

    def hello_reply(self):
        fields = [b"server", SERVER_NAME, b"version", SERVER_VERSION,
                  b"proto", 3 if self.ctx.resp3 else 2, b"id", self.id,
                  b"mode", b"standalone", b"role", b"master", b"modules", []]
        if self.ctx.resp3:
            return dict(zip(fields[::2], fields[1::2]))
        return fields

    def authenticate(self, username: bytes, password: bytes) -> None:
        """AUTH / HELLO AUTH: raises WRONGPASS unless the credentials open an enabled
        user (the embedded client's accept_any_auth: any user that exists)."""
        acl = self.hub.acl
        user = acl.authenticate(username, password)
        if user is None and self.hub.accept_any_auth:
            user = acl.users.get(username, acl.default)
        if user is None:
            acl.auth_failed(username, "multi" if self.multi is not None else "toplevel",
                            self.client_line())
            raise ResponseError(WRONGPASS)
        self.set_user(user)
        self.on_authenticated()

    def on_authenticated(self) -> None:
        """Hook: the client just authenticated (the server lifts parser limits)."""

    @client_command("auth")
    def cmd_auth(self, argv: list):
        if len(argv) > 3:
            raise ResponseError("ERR syntax error")
        if len(argv) == 2:
            if not self.hub.password_required() and not self.hub.accept_any_auth:
                raise ResponseError(AUTH_WITHOUT_PASSWORD)
            self.authenticate(b"default", argv[1])
        else:
            self.authenticate(argv[1], argv[2])
        return OK

    @client_command("client|setinfo")
    def client_setinfo(self, argv: list):
        attr = argv[2].lower()
        if attr not in (b"lib-name", b"lib-ver"):
            raise ResponseError("ERR Unrecognized option '%s'" % arg_text(argv[2]))
        if any(c < 0x21 or c > 0x7E for c in argv[3]):
            raise ResponseError("ERR %s cannot contain spaces, newlines or special "
                                "characters." % arg_text(argv[2]).upper())
        if attr == b"lib-name":
            self.lib_name = argv[3] or None
        else:
            self.lib_ver = argv[3] or None
        return OK

    @client_command("client|no-evict")
    def client_no_evict(self, argv: list):
        """CLIENT NO-EVICT ON|OFF: recorded (the `e` flag of the server's CLIENT LIST)
        - Sluice has no client eviction (maxmemory-clients) to exempt a connection from."""
        self.no_evict = _on_off(argv[2])
        return OK

    @client_command("client|no-touch")
    def client_no_touch(self, argv: list):
        """CLIENT NO-TOUCH ON|OFF: whether this client's reads leave keys' access
        times (OBJECT IDLETIME) as they were (see call)."""
        self.no_touch = _on_off(argv[2])
        return OK

    @client_command("client|setname")
    def client_setname(self, argv: list):
        self.name = _valid_client_name(argv[2])
        return OK

    @client_command("client|getname")
    def client_getname(self, argv: list):
        return self.name

    @client_command("client|id")
    def client_id(self, argv: list):
        return self.id

    @client_command("client|info")
    def client_info(self, argv: list):
        return Verbatim(self.client_line() + b"\n")

    def client_line(self) -> bytes:
        """This client's line of CLIENT LIST / CLIENT INFO (no newline)."""
        return (b"id=%d addr=embedded laddr=embedded fd=-1 name=%s db=%d multi=%d "
                b"watch=%d resp=%d lib-name=%s lib-ver=%s"
                % (self.id, self.name or b"", self.ctx.db.index,
                   -1 if self.multi is None else len(self.multi), len(self.watched),
                   3 if self.ctx.resp3 else 2, self.lib_name or b"", self.lib_ver or b""))

    @client_command("client|help")
    def client_help(self, argv: list):
        return [Status(line.encode()) for line in self.client_help_lines]

    @client_command("reset")
    def cmd_reset(self, argv: list):
        """RESET: back to a fresh connection's state (keeps the CLIENT ID)."""
        self.multi = None
        self.multi_dirty = False
        self.unwatch()
        self.ctx.db = self.engine.databases[0]
        self.ctx.resp3 = False
        self.name = None
        self.reset_modes()
        self.set_user(self.hub.acl.default, not self.hub.password_required())
        self.on_reset()
        return RESET_REPLY

    def on_reset(self) -> None:
        """Hook: RESET (the server drops subscriptions and restores parser limits)."""

    @client_command("quit")
    def cmd_quit(self, argv: list):
        self.multi = None
        self.unwatch()
        self.quitting = True
        return OK


def _on_off(arg: bytes) -> bool:
    mode = arg.lower()
    if mode not in (b"on", b"off"):
        raise ResponseError("ERR syntax error")
    return mode == b"on"
