# cython: language_level=3
"""redis.call and redis.pcall, compiled: Redis's checks for a command a script calls
(as its scriptCall: lookup and arity, a command scripts may not run, the ACL of the
caller's user, a write from a read-only script, XREAD/XREADGROUP with BLOCK, a write
while persistence fails, a denyoom command over maxmemory), then the road's `call`
(engine/api/road.pyx) on the scripts' own client: the command runs in the script's
context (its database, its RESP version), counts in commandstats and reports what it
touched, and a blocking command answers at once (the client denies blocking). The
client is made once, of the caller's kind (a server session for a server's scripts:
PUBLISH, INFO...).

Most calls are engine commands without subcommands that these checks concern only by
a flag or two: their record is cached by spelling and they go straight to `call`."""
from engine.api.command_stats cimport FAILED, REJECTED, CommandStats
from engine.api.acl.permissions cimport acl_refusal
from engine.api.road cimport CLIENT_ACL, Client, HubState, call
from engine.commands.dispatch cimport check, resolve
from engine.commands.table import COMMANDS, classify
from engine.core.errors import OOM, ResponseError

NOT_FROM_SCRIPT = "ERR This Redis command is not allowed from script"
WRITE_IN_READONLY = "ERR Write commands are not allowed from read-only scripts."
BLOCK_REFUSED = "ERR %s command is not allowed with BLOCK option from scripts"

cdef object _ResponseError = ResponseError
cdef frozenset _CHECKED_FLAGS = frozenset(("noscript", "blocking", "may_replicate"))
cdef enum:
    CACHE_MAX = 4096            # command spellings remembered


cdef class _Entry:
    """A command as a script spells it: its record (None: unknown), whether only the
    flag tests of `call` concern it (an engine command without subcommands that neither
    blocks nor is refused to scripts), and its write flag and arity, read without Python
    attribute lookups."""


cdef class ScriptCalls:
    """The commands of the running script: `begin` when a script starts, `end` after;
    `call(argv)` runs one (redis.call)."""

    def __init__(self, CommandContext ctx):
        self.ctx = ctx
        self.records = {}

    cpdef begin(self, session, bint refuse_writes):
        """A script of `session` starts: its commands run in the caller's database,
        with the caller's stream node limits (CONFIG SET changes them)."""
        cdef CommandContext own = session.ctx, ctx = self.ctx
        hub = session.hub
        if self.client is None or self.client.hub is not hub \
                or type(self.client) is not type(session):
            self.client = type(session).script_client(hub, ctx)
        ctx.db = own.db
        ctx.node_max_bytes = own.node_max_bytes
        ctx.node_max_entries = own.node_max_entries
        ctx.max_string = own.max_string
        ctx.tracking = hub.tracking
        self.session = session
        self.refuse_writes = refuse_writes
        self.wrote = False

    cpdef end(self):
        self.session = None

    cpdef object call(self, list argv):
        """One command of the script: its reply, or raises ResponseError."""
        cdef _Entry entry = self.records.get(argv[0])
        if entry is None:
            entry = self._entry(argv[0])
        cdef HubState hub = self.client.hub
        if not entry.direct or hub.write_refusal is not None or hub.memory.limit \
                or (self.refuse_writes and entry.write) \
                or (<Client>self.session).flags & CLIENT_ACL:
            return self._checked(entry.record, argv)
        cdef Py_ssize_t argc = len(argv)
        if entry.write and (argc == entry.arity if entry.arity > 0 else argc >= -entry.arity):
            self.wrote = True
        return call(self.client, None, argv)    # the engine checks its arity

    cdef _Entry _entry(self, bytes name):
        """The command spelled `name`, cached by spelling."""
        cdef _Entry entry = _Entry.__new__(_Entry)
        record = entry.record = COMMANDS.get(name.lower())
        if record is not None:
            entry.direct = (record.layer == "engine" and record.subcommands is None
                            and _CHECKED_FLAGS.isdisjoint(record.flags))
            entry.write = record.write
            entry.arity = record.arity
        if len(self.records) < CACHE_MAX:
            self.records[name] = entry
        return entry

    cdef object _checked(self, object record, list argv):
        """Every check of a script's command, then call."""
        cdef HubState hub = self.client.hub
        stats = hub.stats
        name = None
        try:
            spec = resolve(argv) if record is None else check(record, argv)
            name = spec.name
            if "noscript" in spec.flags or "noscript" in record.flags:
                raise _ResponseError(NOT_FROM_SCRIPT)
            if (<Client>self.session).flags & CLIENT_ACL and \
                    (error := acl_refusal(self.session, spec, argv, "lua")) is not None:
                raise _ResponseError(error)
            if self.refuse_writes and (spec.write or "may_replicate" in spec.flags):
                raise _ResponseError(WRITE_IN_READONLY)
            if hub.write_refusal is not None and spec.denied_on_misconf:
                raise _ResponseError(hub.write_refusal)
            if hub.memory.limit and "denyoom" in spec.flags and hub.engine.over_maxmemory():
                raise _ResponseError(OOM)
        except _ResponseError:
            if stats is not None:
                (<CommandStats>stats).count(name or classify(argv, record)[0], 0, REJECTED)
            raise
        if "blocking" in spec.flags and _blocks(argv):
            if stats is not None:
                (<CommandStats>stats).count(name, 0, FAILED)
            raise _ResponseError(BLOCK_REFUSED % name)
        if spec.write:
            self.wrote = True
        return call(self.client, spec, argv)


cdef bint _blocks(list argv):
    """Whether XREAD/XREADGROUP's options (before STREAMS) ask to block (the other
    blocking commands answer at once in a script)."""
    if argv[0].lower() not in (b"xread", b"xreadgroup"):
        return False
    for arg in argv[1:]:
        word = arg.lower()
        if word == b"block":
            return True
        if word == b"streams":
            return False
    return False
