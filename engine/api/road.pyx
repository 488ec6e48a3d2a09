# cython: language_level=3
"""The one road of a command from a client, compiled: Redis's processCommand and call().

Every client command enters at `process_command(client, argv)`: the server's
connections (engine/server/fastpath.pyx), the embedded client (engine/api/client.py).
It looks the command up and makes Redis's checks once, in Redis's order - lookup and
arity, NOAUTH, the ACL of a restricted user (engine/api/acl/), maxmemory (evictions,
then OOM), MISCONF while persistence fails, the RESP2 pub/sub context, BUSY while a
script runs long, CLIENT PAUSE (the command waits: engine/api/client_pause.py), MULTI
queueing - and then calls it. When the client has no flag that needs a check and the engine is in its normal
state (no refusal, no busy script, no maxmemory), an engine command goes straight to
`call`: the checks cost one test of the client's flag bits.

`call(client, record, argv)` runs a command that passed its checks (EXEC's queued
commands and scripts' redis.call enter here, after their own checks): by its layer
(the engine's `execute_in`, or the record's `client_handler` for a session or server
command: a method bound by `@client_command`), then the keys it touched and its
events to the hub (after_command.pxd), INFO commandstats (CommandStat.count), the
hooks after a call (`hub.after_call` for a call that ran at least `HubState.hook_ns`:
where the slow log, the latency monitor and MONITOR listen), and a blocking command
that must wait becomes the `BlockedRead` it returns: the caller parks it in the
registry of blocked clients (engine/api/blocked_clients.py). Nothing else reads a
command's block request (`ctx.block`): `run_engine` is the engine part of call for a
parked command run again.

A `Client` is what the road needs of a client, as plain data: its context (database,
RESP version), the flag bits of road.pxd, the MULTI queue and subscriptions. Sessions
(engine/api/session.py) are clients with their commands as methods.
"""
from libc.stdint cimport int64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

from engine.api.acl.permissions cimport acl_refusal
from engine.api.after_command cimport report_command
from engine.api.command_stats cimport CALLED, FAILED, REJECTED, CommandStat, CommandStats
from engine.commands.dispatch cimport check, resolve
from engine.commands.table import classify
from engine.core.errors import OOM, ResponseError
from engine.core.keyspace import set_untouched
from engine.resp.reply import Status

cdef object _ResponseError = ResponseError
cdef object _classify = classify
cdef object _set_untouched = set_untouched

QUEUED = Status(b"QUEUED")
POSTPONED = object()    # process_command's answer for a command that waits for CLIENT PAUSE
EXECABORT_BECAUSE = "EXECABORT Transaction discarded because of: "
NOAUTH = "NOAUTH Authentication required."
NOT_IN_MULTI = "ERR Command not allowed inside a transaction"
REPLICA_KEYSPACE = "ERR Replica can't interact with the keyspace"
PUBSUB_CONTEXT = ("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                  "QUIT / RESET are allowed in this context")

cdef object ENGINE = object()       # lookup's answer for a command the engine runs
cdef dict _spellings_by_table = {}  # id of a class's command table -> its spellings cache
cdef enum:
    SPELLINGS_MAX = 4096


cdef inline int64_t now_ns() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return <int64_t>ts.tv_sec * 1000000000 + ts.tv_nsec


cdef class HubState:
    """What the road reads of the hub the clients of one engine share (engine/api/
    session.py's Hub is the rest): the engine's state that sends commands through
    the checks, the stats, the registries read after every command."""

    def __init__(self, engine):
        self.engine = engine
        self.memory = engine.memory
        self.hook_ns = -1
        self.blocked = {}
        self.ready = {}
        self.watchers = {}


cdef class Client:
    """A client of the road (see the module docstring). A subclass names the command
    records it runs itself in `commands` (engine/commands/table: layer_commands)."""

    def __cinit__(self, *args, **kwargs):
        table = type(self).commands
        spellings = _spellings_by_table.get(id(table))
        if spellings is None:
            spellings = _spellings_by_table[id(table)] = {}
        self.spellings = spellings
        self.channels = {}
        self.patterns = {}
        self.shard_channels = {}

    cdef object lookup(self, bytes name):
        """The record of a command the client runs itself, or ENGINE (the engine's, or
        unknown: the engine's lookup says which); cached by spelling."""
        record = self.spellings.get(name)
        if record is None:
            commands = type(self).commands
            record = commands.get(name)
            if record is None and not name.isupper():
                record = commands.get(name.lower())
            if record is None:
                record = ENGINE
            if len(self.spellings) < SPELLINGS_MAX:
                self.spellings[name] = record
        return record

    # the flags, by name --------------------------------------------------------------

    cdef void _set(self, unsigned int flag, bint on):
        if on:
            self.flags |= flag
        else:
            self.flags &= ~flag

    @property
    def multi(self):
        """The MULTI queue ((argv, record) pairs), or None outside MULTI."""
        return self._multi

    @multi.setter
    def multi(self, list queue):
        self._multi = queue
        self._set(CLIENT_MULTI, queue is not None)

    @property
    def multi_dirty(self):
        return self.flags & CLIENT_DIRTY_EXEC != 0

    @multi_dirty.setter
    def multi_dirty(self, bint on):
        self._set(CLIENT_DIRTY_EXEC, on)

    @property
    def watch_dirty(self):
        return self.flags & CLIENT_DIRTY_CAS != 0

    @watch_dirty.setter
    def watch_dirty(self, bint on):
        self._set(CLIENT_DIRTY_CAS, on)

    @property
    def authenticated(self):
        return self.flags & CLIENT_NOAUTH == 0

    @authenticated.setter
    def authenticated(self, bint on):
        self._set(CLIENT_NOAUTH, not on)

    @property
    def no_touch(self):
        return self.flags & CLIENT_NO_TOUCH != 0

    @no_touch.setter
    def no_touch(self, bint on):
        self._set(CLIENT_NO_TOUCH, on)

    @property
    def no_evict(self):
        return self.flags & CLIENT_NO_EVICT != 0

    @no_evict.setter
    def no_evict(self, bint on):
        self._set(CLIENT_NO_EVICT, on)

    @property
    def deny_blocking(self):
        return self.flags & CLIENT_DENY_BLOCKING != 0

    @deny_blocking.setter
    def deny_blocking(self, bint on):
        self._set(CLIENT_DENY_BLOCKING, on)

    @property
    def quitting(self):
        return self.flags & CLIENT_CLOSE_AFTER_REPLY != 0

    @quitting.setter
    def quitting(self, bint on):
        self._set(CLIENT_CLOSE_AFTER_REPLY, on)

    @property
    def monitor(self):
        """MONITOR: the client hears every command (only the server's clients)."""
        return self.flags & CLIENT_MONITOR != 0

    @monitor.setter
    def monitor(self, bint on):
        self._set(CLIENT_MONITOR, on)

    @property
    def restricted(self):
        """Its ACL user is restricted: every command is checked against it."""
        return self.flags & CLIENT_ACL != 0

    @restricted.setter
    def restricted(self, bint on):
        self._set(CLIENT_ACL, on)

    @property
    def replies_quiet(self):
        """CLIENT REPLY OFF, or SKIP for this command: the reply is not sent."""
        return self.flags & CLIENT_REPLY_QUIET != 0

    @property
    def reply_modes(self):
        """Whether any CLIENT REPLY mode (OFF, SKIP) is in force."""
        return self.flags & CLIENT_REPLY_MODES != 0

    def set_reply_mode(self, bytes mode):
        """CLIENT REPLY ON|OFF|SKIP (the mode lower-cased); False for another word."""
        if mode == b"on":
            self.flags &= ~CLIENT_REPLY_MODES
        elif mode == b"off":
            self.flags |= CLIENT_REPLY_OFF
        elif mode == b"skip":
            if not self.flags & CLIENT_REPLY_OFF:
                self.flags |= CLIENT_REPLY_SKIP_NEXT
        else:
            return False
        return True

    def reply_done(self):
        """A command has been answered (or its reply dropped): a SKIP moves on to the
        next command."""
        cdef unsigned int flags = self.flags & ~(CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT)
        if self.flags & CLIENT_REPLY_SKIP_NEXT:
            flags |= CLIENT_REPLY_SKIP
        self.flags = flags

    def serve_scripts(self):
        """Makes this the scripts' own client: a blocking command answers at once."""
        self.flags |= CLIENT_SCRIPT | CLIENT_DENY_BLOCKING

    def reset_modes(self):
        """RESET: CLIENT NO-EVICT, NO-TOUCH and REPLY back to their defaults (the
        current command's SKIP still applies to RESET's own reply)."""
        self.flags &= ~(CLIENT_NO_EVICT | CLIENT_NO_TOUCH | CLIENT_REPLY_OFF
                        | CLIENT_REPLY_SKIP_NEXT)

    def subscriptions_changed(self):
        """Its channels, patterns or shard channels changed (the pub/sub context
        follows them)."""
        self._set(CLIENT_PUBSUB, bool(self.channels) or bool(self.patterns)
                  or bool(self.shard_channels))


# -- processCommand ----------------------------------------------------------------------

cpdef object process_command(Client client, list argv):
    """Runs argv for `client`, each of Redis's checks once (see the module docstring):
    the reply, QUEUED inside MULTI, or the BlockedRead of a command that must wait;
    raises ResponseError with Redis's text."""
    cdef HubState hub = client.hub
    client.null_array = False
    client.rejected = False
    if client.cmd_name is not None:
        client.cmd_name = None
    record = client.lookup(<bytes>argv[0])
    if record is ENGINE and not client.flags & CLIENT_CHECKED and hub.write_refusal is None \
            and hub.busy is None and hub.memory.limit == 0 and not hub.paused:
        record = None                   # the engine checks its arity itself
    else:
        record = _checked(client, hub, record, argv)
        if record is QUEUED or record is POSTPONED:
            return record
    try:
        if client.flags & CLIENT_NO_TOUCH:
            return _call_untouched(client, record, argv)
        return call(client, record, argv)
    finally:
        # the clients parked on the keys it changed are served now (Redis's
        # handleClientsBlockedOnKeys after a client's command)
        if hub.ready:
            hub.serve_ready()


cdef object _checked(Client client, HubState hub, object record, list argv):
    """Redis's checks, in its order: the record of a command that may run (the
    subcommand's for a container), or QUEUED once queued in MULTI; raises the error of
    the first check that refuses it; POSTPONED while CLIENT PAUSE holds it."""
    try:
        record = resolve(argv) if record is ENGINE else check(record, argv)
    except _ResponseError as refused:
        _reject(client, None if record is ENGINE else record, refused, argv)
        raise
    client.cmd_name = record.name
    cdef unsigned int flags = client.flags
    cdef object error
    if flags & CLIENT_NOAUTH and not record.no_auth and client.auth_required():
        error = NOAUTH
    elif flags & CLIENT_ACL and (error := acl_refusal(client, record, argv)) is not None:
        pass
    elif hub.memory.limit and (error := hub.memory_refusal(record, client)) is not None:
        pass
    elif hub.write_refusal is not None and (
            record.denied_on_misconf or (record.aborts_exec and _queued_write(client))):
        error = hub.write_refusal
    elif flags & CLIENT_MONITOR and (record.write or "readonly" in record.flags
                                     or "may_replicate" in record.flags):
        error = REPLICA_KEYSPACE
    elif flags & CLIENT_PUBSUB and not record.pubsub_ok and not client.ctx.resp3:
        error = PUBSUB_CONTEXT % record.name
    elif hub.busy is not None and not record.allow_busy and client is not hub.busy_caller:
        error = hub.busy
    elif hub.paused and hub.client_pause.postpones(client, record, argv):
        return POSTPONED
    elif flags & CLIENT_MULTI and not record.immediate:
        if not record.no_multi:
            client._multi.append((argv, record))
            return QUEUED
        error = NOT_IN_MULTI
    else:
        return record
    error = _ResponseError(error)
    _reject(client, record, error, argv)
    raise error


cdef object _call_untouched(Client client, object record, list argv):
    """call for a client in CLIENT NO-TOUCH mode: the keys it reads keep their access
    times, except TOUCH's."""
    previous = _set_untouched(argv[0].lower() != b"touch")
    try:
        return call(client, record, argv)
    finally:
        _set_untouched(previous)


cdef int _reject(Client client, object record, object error, list argv) except -1:
    """A command refused before running: counted as rejected, it flags the
    transaction; a refused EXEC aborts it, naming the reason (raised here)."""
    client.rejected = True
    stats = client.hub.stats
    if stats is not None:
        name = record.name if record is not None else _classify(argv)[0]
        (<CommandStats>stats).count(name, 0, REJECTED)
    if client.flags & CLIENT_MULTI:
        client.flags |= CLIENT_DIRTY_EXEC
    if record is not None and record.aborts_exec:
        client.multi = None
        client.flags &= ~CLIENT_DIRTY_EXEC
        client.unwatch()
        text = str(error)
        if text.startswith("ERR "):
            text = text[4:]
        raise _ResponseError(EXECABORT_BECAUSE + text)
    return 0


cdef bint _queued_write(Client client):
    """Whether the MULTI queue holds a write command (EXEC then counts as one)."""
    if client._multi is None:
        return False
    for _, queued in client._multi:
        if queued.write:
            return True
    return False


# -- call --------------------------------------------------------------------------------

cpdef object call(Client client, object record, list argv):
    """Runs a command that passed its checks (record None: an engine command the engine
    looks up itself) and does what follows every command (see the module docstring):
    its reply, or the BlockedRead of a command that must wait; raises ResponseError."""
    cdef HubState hub = client.hub
    cdef CommandContext ctx = client.ctx
    cdef bint engine = record is None or record.layer == "engine"
    if hub.monitoring:
        hub.before_call(client, record, argv)
    cdef int64_t start = now_ns(), ns
    try:
        if engine:
            reply = client.execute_in(ctx, argv)
            client.null_array = ctx.null_array
        else:
            reply = record.client_handler(client, argv)
    except BaseException as exc:
        ns = now_ns() - start
        ctx.block = None
        if hub.stats is not None and isinstance(exc, _ResponseError):
            _count_failure(<CommandStats>hub.stats, record, argv, ns)
        if 0 <= hub.hook_ns <= ns:
            hub.after_call(client, record, argv, ns, False)
        raise
    finally:
        report_command(hub, ctx, hub.notify_events)
    ns = now_ns() - start
    if hub.stats is not None:
        (<CommandStats>hub.stats).stat_of(record, argv).count(ns, CALLED)
    if engine and ctx.block is not None:
        request = ctx.block
        ctx.block = None
        if not client.flags & CLIENT_DENY_BLOCKING:
            if 0 <= hub.hook_ns <= ns:
                hub.after_call(client, record, argv, ns, True)
            hub.track()
            return client.new_blocked_read(argv, request)
    if 0 <= hub.hook_ns <= ns:
        hub.after_call(client, record, argv, ns, False)
    return reply


cdef int _count_failure(CommandStats stats, object record, list argv, int64_t ns) except -1:
    """A command that raised: refused by the engine's lookup or arity check
    (rejected), else failed."""
    if record is None:
        name, rejected = _classify(argv)
    else:
        name, rejected = record.name, False
    if name is not None:
        (<CommandStat>stats.command(name)).count(ns, REJECTED if rejected else FAILED)
    return 0


cpdef tuple run_engine(Client client, list argv):
    """An engine command run again for a parked client (blocked_clients.py), without
    checks or counting: (its reply, whether it must go on waiting)."""
    cdef CommandContext ctx = client.ctx
    cdef HubState hub = client.hub
    try:
        reply = client.execute_in(ctx, argv)
    except _ResponseError:
        ctx.block = None
        raise
    finally:
        report_command(hub, ctx, hub.notify_events)
    if ctx.block is not None:
        ctx.block = None
        return reply, True
    return reply, False
