"""The command table: every command and subcommand Sluice knows, one record each, as
Redis's src/commands/*.json are - in this one module, so that a reader (and COMMAND,
the session, the server's fast path, WATCH, tools/aof_cli.py) finds all of them in
one place.

A record says what Redis's json says - name, arity, command flags, ACL categories,
tips, key specifications, docs (group, since, summary, complexity, history, doc flags,
arguments), subcommands - and which layer runs it:
- `engine`: a handler(ctx, argv) of the command layer, bound by the `@command`
  decorator of its module (engine/commands/*.pyx; SAVE & co. in
  engine/api/persistence_commands.py, which drive persistence); Engine.execute runs it.
- `session`: a method of engine/api/session.py's Session (every client has them).
- `server`: a method of engine/server/session.py's ServerSession (only the server's
  clients have them).
The method is `cmd_<name>`; a subcommand's is its container's, or its own
`<container>_<subcommand>`, `-` read as `_` (CLIENT: `sub_methods`). PING and FLUSHALL
run in the session, which calls the engine's handler: Engine.execute runs that
handler directly.

Arity follows Redis: positive = exact argument count (command name included),
negative = at least that many. The key specifications are the one declaration of
where the keys are; the legacy key positions (first, last, step) COMMAND INFO prints
come from them as Redis derives them, and so do `keyword` (keys that follow a
keyword: XREAD's STREAMS) and `numkeys` (the position of a key count that the keys
follow: EVAL's). `find_keys` is a function that reads the keys from the arguments
where options name them (SORT's STORE; Redis's getkeys_proc): movablekeys.

Flags are Redis's command flags, as COMMAND INFO prints them; `acl_categories` the
categories Redis's json names, to which Redis adds those the flags imply (write:
@write, readonly: @read, admin: @admin @dangerous, ...). Our own rules beyond them
are fields: `pubsub_ok` (allowed in a RESP2 subscribed context), `immediate` (runs at
once inside MULTI instead of being queued), `aborts_exec` (a refusal aborts the
transaction with the reason: EXEC), `denied_on_misconf` (refused while persistence
fails: every write, and PING so that health checks notice). `no_auth`, `no_multi`,
`allow_busy` and `write` come from the flags of the same names.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

# Redis's order of command flags (server.h CMD_*), as COMMAND INFO lists them.
FLAG_ORDER = ("write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
              "blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast",
              "no_auth", "may_replicate", "sentinel", "only_sentinel", "no_mandatory_keys",
              "protected", "module_getkeys", "module_no_cluster", "no_async_loading",
              "no_multi", "movablekeys", "allow_busy")
_FLAG_RANK = {f: i for i, f in enumerate(FLAG_ORDER)}

# Redis's order of ACL categories (acl.c), as COMMAND INFO lists them.
CATEGORY_ORDER = ("@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash",
                  "@string", "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub",
                  "@admin", "@fast", "@slow", "@blocking", "@dangerous", "@connection",
                  "@transaction", "@scripting")
# The categories a command flag implies (Redis's setImplicitACLCategories).
_IMPLIED_CATEGORIES = {"write": ("@write",), "readonly": ("@read",),
                       "admin": ("@admin", "@dangerous"), "pubsub": ("@pubsub",),
                       "fast": ("@fast",), "blocking": ("@blocking",)}
# Redis's order of key specification flags, as COMMAND INFO lists them.
KEY_SPEC_FLAGS = ("RO", "RW", "OW", "RM", "ACCESS", "UPDATE", "INSERT", "DELETE", "NOT_KEY",
                  "INCOMPLETE", "VARIABLE_FLAGS")
LAYERS = ("engine", "session", "server")


@dataclass(frozen=True, slots=True)
class KeySpec:
    """One of Redis's key specifications: where a search for keys begins (`index`: an
    argument position; `keyword`: after a keyword searched from `startfrom`; neither:
    unknown) and how the keys are found from there (`range`: (lastkey, step, limit);
    `keynum`: (keynumidx, firstkey, step); neither: unknown)."""

    flags: tuple                        # KEY_SPEC_FLAGS, in that order
    index: int = 0
    keyword: Optional[str] = None
    startfrom: int = 0
    range: Optional[tuple] = None
    keynum: Optional[tuple] = None
    notes: Optional[str] = None


def ks(flags: str, *, index: int = 0, keyword: Optional[str] = None, startfrom: int = 0,
       range: Optional[tuple] = None, keynum: Optional[tuple] = None,
       notes: Optional[str] = None) -> KeySpec:
    """A key specification; `flags` as Redis's json writes them ("RW ACCESS DELETE")."""
    ranked = tuple(sorted(flags.split(), key=KEY_SPEC_FLAGS.index))
    return KeySpec(ranked, index, keyword, startfrom, range, keynum, notes)


@dataclass(frozen=True, slots=True)
class Arg:
    """One argument of a command's docs (COMMAND DOCS), as Redis's json declares it."""

    name: str
    type: str                           # key, string, integer, double, pattern, unix-time,
    #                                     pure-token, oneof, block
    key_spec_index: int = -1
    token: Optional[str] = None
    since: Optional[str] = None
    flags: tuple = ()                   # optional, multiple, multiple_token
    deprecated_since: Optional[str] = None
    arguments: tuple = ()               # a oneof's or block's own arguments


def arg(name: str, type: str, *, key_spec_index: int = -1, token: Optional[str] = None,
        since: Optional[str] = None, optional: bool = False, multiple: bool = False,
        multiple_token: bool = False, deprecated_since: Optional[str] = None,
        arguments: tuple = ()) -> Arg:
    """An argument (`arguments`: a oneof's or block's own)."""
    flags = tuple(f for f, on in (("optional", optional), ("multiple", multiple),
                                  ("multiple_token", multiple_token)) if on)
    return Arg(name, type, key_spec_index, token, since, flags, deprecated_since, arguments)


@dataclass(slots=True, eq=False)
class Command:
    """One command or subcommand (see the module docstring)."""

    name: str                           # full name: "xgroup|create"
    arity: int
    flags: tuple                        # Redis's flags, in FLAG_ORDER
    first_key: int                      # the legacy key positions (from key_specs)
    last_key: int
    step: int
    keyword: Optional[str]
    since: str
    summary: str
    layer: Optional[str]                # None in a subcommand: its container's
    subcommands: Optional[dict]         # lower-case name (bytes) -> Command
    base_ok: bool                       # a container that also runs alone (COMMAND)
    pubsub_ok: bool
    immediate: bool
    aborts_exec: bool
    denied_on_misconf: bool
    group: str = ""
    method: Optional[str] = None        # session/server layers: the method's name
    handler: Optional[Callable] = None  # engine layer: handler(ctx, argv)
    write: bool = False
    no_auth: bool = False
    no_multi: bool = False
    allow_busy: bool = False            # runs while a script is busy (else BUSY)
    acl_categories: tuple = ()          # all of them, implied ones too, in CATEGORY_ORDER
    numkeys: int = 0                    # the key count's position (EVAL: 2); 0: none
    find_keys: Optional[Callable] = None  # argv -> its keys, when options name keys (SORT)
    key_specs: tuple = ()
    tips: tuple = ()
    complexity: Optional[str] = None
    history: tuple = ()                 # (version, what changed)
    doc_flags: tuple = ()               # deprecated, syscmd
    deprecated_since: Optional[str] = None
    replaced_by: Optional[str] = None
    arguments: tuple = ()

    @property
    def movable_keys(self) -> bool:
        """Keys found by reading the arguments (COMMAND INFO's movablekeys)."""
        return self.keyword is not None or self.numkeys > 0 or self.find_keys is not None

    def keys(self, argv: list) -> list:
        """The key arguments of argv (COMMAND GETKEYS, the AOF tool)."""
        if self.find_keys is not None:
            return self.find_keys(argv)
        if self.keyword is not None:
            keyword = self.keyword.encode()
            for i in range(1, len(argv)):
                if argv[i].upper() == keyword:
                    rest = argv[i + 1:]
                    return rest[:len(rest) // 2]
            return []
        if self.numkeys:
            try:
                count = int(argv[self.numkeys])
            except (IndexError, ValueError):
                return []
            start = self.numkeys + 1
            if not 0 <= count <= len(argv) - start:
                return []
            # a destination before the count (ZUNIONSTORE's) is a key too
            dest = [argv[self.first_key]] if self.first_key else []
            return dest + argv[start:start + count]
        if not self.first_key or len(argv) <= self.first_key:
            return []
        last = self.last_key if self.last_key >= 0 else len(argv) + self.last_key
        return argv[self.first_key:last + 1:self.step or 1]

    def arity_ok(self, argc: int) -> bool:
        arity = self.arity
        return argc == arity if arity > 0 else argc >= -arity


def cmd(name: str, arity: int, flags: str = "", *, docs: tuple, key_specs: tuple = (),
        acl_categories: str = "", tips: str = "", complexity: Optional[str] = None,
        history: tuple = (), doc_flags: str = "", deprecated_since: Optional[str] = None,
        replaced_by: Optional[str] = None, arguments: tuple = (),
        layer: Optional[str] = None, subcommands: Optional[list] = None,
        base_ok: bool = False, pubsub_ok: bool = False, immediate: bool = False,
        aborts_exec: bool = False, denied_on_misconf: Optional[bool] = None,
        sub_methods: bool = False, find_keys: Optional[Callable] = None) -> Command:
    """A record; `docs` = (since, summary). Its group and full name come from family().
    acl_categories, tips, doc_flags: space-separated, as Redis's json lists them.
    sub_methods: each subcommand has its own method, `<container>_<subcommand>`
    (CLIENT); otherwise they share the container's."""
    ranked = tuple(sorted(flags.split(), key=lambda f: _FLAG_RANK.get(f, 99)))
    write = "write" in ranked
    subs = None if subcommands is None else {sub.name.encode(): sub for sub in subcommands}
    for sub in subcommands if sub_methods else ():
        sub.method = f"{name}_{sub.name.replace('-', '_')}"
    first, last, step = legacy_key_range(key_specs)
    keyword = next((s.keyword for s in key_specs if s.keyword is not None), None)
    numkeys = next((s.index + s.keynum[0] for s in key_specs
                    if s.keynum is not None and s.index), 0)
    return Command(name, arity, ranked, first, last, step, keyword, *docs, layer, subs,
                   base_ok, pubsub_ok, immediate, aborts_exec,
                   write if denied_on_misconf is None else denied_on_misconf,
                   write=write, no_auth="no_auth" in ranked, no_multi="no_multi" in ranked,
                   allow_busy="allow_busy" in ranked,
                   acl_categories=_acl_categories(ranked, acl_categories.split()),
                   numkeys=numkeys, find_keys=find_keys, key_specs=key_specs,
                   tips=tuple(tips.split()), complexity=complexity, history=history,
                   doc_flags=tuple(doc_flags.split()), deprecated_since=deprecated_since,
                   replaced_by=replaced_by, arguments=arguments)


def legacy_key_range(key_specs: tuple) -> tuple:
    """(first, last, step) of the keys, from the specifications of an argument index
    and a range (Redis's populateCommandLegacyRangeSpec): one such spec as it is, or
    consecutive ones of step 1 joined; (0, 0, 0) when there are none."""
    def absolute(spec: KeySpec) -> int:
        lastkey = spec.range[0]
        return lastkey if lastkey < 0 else spec.index + lastkey
    plain = [s for s in key_specs if s.index and s.range is not None]
    if len(key_specs) == 1 and plain:
        return plain[0].index, absolute(plain[0]), plain[0].range[1]
    first, last = None, 0
    for spec in plain:
        if spec.range[1] != 1 or (last and last != spec.index - 1):
            continue
        first = spec.index if first is None else min(first, spec.index)
        last = max(last % 2**32, absolute(spec) % 2**32)     # (unsigned: -1 is largest)
        last = last - 2**32 if last >= 2**31 else last
    return (0, 0, 0) if first is None else (first, last, 1)


def _acl_categories(flags: tuple, named: list) -> tuple:
    """Every ACL category of a command: those its json names and those its flags imply
    (@slow when not @fast), in CATEGORY_ORDER."""
    cats = {"@" + c for c in named}
    for flag in flags:
        cats.update(_IMPLIED_CATEGORIES.get(flag, ()))
    if "@scripting" in cats and "readonly" in flags:
        cats.discard("@read")           # (Redis keeps EVAL_RO & co. out of @read)
    if "@fast" not in cats:
        cats.add("@slow")
    return tuple(sorted(cats, key=CATEGORY_ORDER.index))


# SORT's options and how many arguments each takes, to find its STORE destination
_SORT_OPTIONS = {b"LIMIT": 2, b"BY": 1, b"GET": 1, b"STORE": 1}


def sort_keys(argv: list) -> list:
    """SORT's keys: the sorted key and the last STORE destination (as Redis's
    sortGetKeys finds it, skipping the arguments of LIMIT, BY and GET)."""
    keys = argv[1:2]
    store = None
    i = 2
    while i < len(argv):
        option = argv[i].upper()
        if option == b"STORE" and i + 1 < len(argv):
            store = argv[i + 1]
        i += 1 + _SORT_OPTIONS.get(option, 0)
    return keys if store is None else keys + [store]


def family(group: str, *records: Command) -> list:
    """Records of one docs group (stream, string, generic, connection, ...)."""
    for record in records:
        _complete(record, group, None)
    return list(records)


def _complete(record: Command, group: str, container: Optional[Command]) -> None:
    record.group = group
    if container is not None:
        record.name = f"{container.name}|{record.name}"
        record.layer = record.layer or container.layer
        record.method = record.method or container.method
    else:
        record.layer = record.layer or "engine"
        # (a container whose subcommands have methods of their own has none)
        if record.layer != "engine" and not (
                record.subcommands and all(s.method for s in record.subcommands.values())):
            record.method = f"cmd_{record.name}"
    if record.layer not in LAYERS:
        raise ValueError(f"{record.name}: unknown layer {record.layer!r}")
    for sub in (record.subcommands or {}).values():
        _complete(sub, group, record)


def _index(*families: list) -> dict:
    return {record.name.encode(): record for records in families for record in records}


COMMANDS: dict[bytes, Command] = _index(
    family("stream",
        cmd("xack", -4, "write fast",
            acl_categories="stream",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream."),
            complexity="O(1) for each message ID processed.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("group", "string"),
                arg("id", "string", multiple=True),
            )),
        cmd("xackdel", -6, "write fast",
            acl_categories="stream",
            key_specs=(ks("RW UPDATE DELETE", index=1, range=(0, 1, 0)),),
            docs=("8.2.0", "Acknowledges and deletes one or multiple messages for a stream consumer group."),
            complexity="O(1) for each message ID processed.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("group", "string"),
                arg("condition", "oneof", optional=True, arguments=(
                    arg("keepref", "pure-token", token="KEEPREF"),
                    arg("delref", "pure-token", token="DELREF"),
                    arg("acked", "pure-token", token="ACKED"),
                )),
                arg("ids", "block", token="IDS", arguments=(
                    arg("numids", "integer"),
                    arg("id", "string", multiple=True),
                )),
            )),
        cmd("xadd", -5, "write denyoom fast",
            acl_categories="stream",
            tips="nondeterministic_output",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0), notes="UPDATE instead of INSERT because of the optional trimming feature"),),
            docs=("5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist."),
            complexity="O(1) when adding a new entry, O(N) when trimming where N being the number of entries evicted.",
            history=(
                ("6.2.0", "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."),
                ("7.0.0", "Added support for the `<ms>-*` explicit ID form."),
                ("8.2.0", "Added the `KEEPREF`, `DELREF` and `ACKED` options."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("nomkstream", "pure-token", token="NOMKSTREAM", since="6.2.0", optional=True),
                arg("condition", "oneof", optional=True, arguments=(
                    arg("keepref", "pure-token", token="KEEPREF"),
                    arg("delref", "pure-token", token="DELREF"),
                    arg("acked", "pure-token", token="ACKED"),
                )),
                arg("trim", "block", optional=True, arguments=(
                    arg("strategy", "oneof", arguments=(
                        arg("maxlen", "pure-token", token="MAXLEN"),
                        arg("minid", "pure-token", token="MINID", since="6.2.0"),
                    )),
                    arg("operator", "oneof", optional=True, arguments=(
                        arg("equal", "pure-token", token="="),
                        arg("approximately", "pure-token", token="~"),
                    )),
                    arg("threshold", "string"),
                    arg("count", "integer", token="LIMIT", since="6.2.0", optional=True),
                )),
                arg("id-selector", "oneof", arguments=(
                    arg("auto-id", "pure-token", token="*"),
                    arg("id", "string"),
                )),
                arg("data", "block", multiple=True, arguments=(
                    arg("field", "string"),
                    arg("value", "string"),
                )),
            )),
        cmd("xautoclaim", -6, "write fast",
            acl_categories="stream",
            tips="nondeterministic_output",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member."),
            complexity="O(1) if COUNT is small.",
            history=(
                ("7.0.0", "Added an element to the reply array, containing deleted entries the command cleared from the PEL"),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("group", "string"),
                arg("consumer", "string"),
                arg("min-idle-time", "string"),
                arg("start", "string"),
                arg("count", "integer", token="COUNT", optional=True),
                arg("justid", "pure-token", token="JUSTID", optional=True),
            )),
        cmd("xcfgset", -2, "write fast",
            acl_categories="stream",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("8.6.0", "Sets the IDMP configuration parameters for a stream."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("idmp-duration-block", "block", optional=True, arguments=(
                    arg("idmp-duration-token", "pure-token", token="IDMP-DURATION"),
                    arg("duration", "integer"),
                )),
                arg("idmp-maxsize-block", "block", optional=True, arguments=(
                    arg("idmp-maxsize-token", "pure-token", token="IDMP-MAXSIZE"),
                    arg("maxsize", "integer"),
                )),
            )),
        cmd("xclaim", -6, "write fast",
            acl_categories="stream",
            tips="nondeterministic_output",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member."),
            complexity="O(log N) with N being the number of messages in the PEL of the consumer group.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("group", "string"),
                arg("consumer", "string"),
                arg("min-idle-time", "string"),
                arg("id", "string", multiple=True),
                arg("ms", "integer", token="IDLE", optional=True),
                arg("unix-time-milliseconds", "unix-time", token="TIME", optional=True),
                arg("count", "integer", token="RETRYCOUNT", optional=True),
                arg("force", "pure-token", token="FORCE", optional=True),
                arg("justid", "pure-token", token="JUSTID", optional=True),
                arg("id", "string", token="LASTID", optional=True),
            )),
        cmd("xdel", -3, "write fast",
            acl_categories="stream",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the number of messages after removing them from a stream."),
            complexity="O(1) for each single item to delete in the stream, regardless of the stream size.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("id", "string", multiple=True),
            )),
        cmd("xdelex", -5, "write fast",
            acl_categories="stream",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("8.2.0", "Deletes one or multiple entries from the stream."),
            complexity="O(1) for each single item to delete in the stream, regardless of the stream size.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("condition", "oneof", optional=True, arguments=(
                    arg("keepref", "pure-token", token="KEEPREF"),
                    arg("delref", "pure-token", token="DELREF"),
                    arg("acked", "pure-token", token="ACKED"),
                )),
                arg("ids", "block", token="IDS", arguments=(
                    arg("numids", "integer"),
                    arg("id", "string", multiple=True),
                )),
            )),
        cmd("xgroup", -2,
            docs=("5.0.0", "A container for consumer groups commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("create", -5, "write denyoom",
                    acl_categories="stream",
                    key_specs=(ks("RW INSERT", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Creates a consumer group."),
                    complexity="O(1)",
                    history=(
                        ("7.0.0", "Added the `entries_read` named argument."),
                    ),
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("groupname", "string"),
                        arg("id", "oneof", arguments=(
                            arg("id", "string"),
                            arg("new_id", "pure-token", token="$"),
                        )),
                        arg("mkstream", "pure-token", token="MKSTREAM", optional=True),
                        arg("entries_read", "integer", token="ENTRIESREAD", optional=True),
                    )),
                cmd("setid", -5, "write",
                    acl_categories="stream",
                    key_specs=(ks("RW UPDATE", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Sets the last-delivered ID of a consumer group."),
                    complexity="O(1)",
                    history=(
                        ("7.0.0", "Added the optional `entries_read` argument."),
                    ),
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("groupname", "string"),
                        arg("id", "oneof", arguments=(
                            arg("id", "string"),
                            arg("new_id", "pure-token", token="$"),
                        )),
                        arg("entries_read", "integer", token="ENTRIESREAD", optional=True),
                    )),
                cmd("destroy", 4, "write",
                    acl_categories="stream",
                    key_specs=(ks("RW DELETE", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Destroys a consumer group."),
                    complexity="O(N) where N is the number of entries in the group's pending entries list (PEL).",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("groupname", "string"),
                    )),
                cmd("createconsumer", 5, "write denyoom",
                    acl_categories="stream",
                    key_specs=(ks("RW INSERT", index=2, range=(0, 1, 0)),),
                    docs=("6.2.0", "Creates a consumer in a consumer group."),
                    complexity="O(1)",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("groupname", "string"),
                        arg("consumername", "string"),
                    )),
                cmd("delconsumer", 5, "write",
                    acl_categories="stream",
                    key_specs=(ks("RW DELETE", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Deletes a consumer from a consumer group."),
                    complexity="O(1)",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("groupname", "string"),
                        arg("consumername", "string"),
                    )),
                cmd("help", 2, "loading stale",
                    acl_categories="stream",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)")]),
        cmd("xidmprecord", 5, "write denyoom fast",
            acl_categories="stream",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("8.8.0", "An internal command for setting IDMP metadata on an existing stream message."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("pid", "string"),
                arg("iid", "string"),
                arg("stream-id", "string"),
            )),
        cmd("xinfo", -2,
            docs=("5.0.0", "A container for stream introspection commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("consumers", 4, "readonly",
                    acl_categories="stream",
                    tips="nondeterministic_output",
                    key_specs=(ks("RO ACCESS", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Returns a list of the consumers in a consumer group."),
                    complexity="O(1)",
                    history=(
                        ("7.2.0", "Added the `inactive` field, and changed the meaning of `idle`."),
                    ),
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("groupname", "string"),
                    )),
                cmd("groups", 3, "readonly",
                    acl_categories="stream",
                    key_specs=(ks("RO ACCESS", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Returns a list of the consumer groups of a stream."),
                    complexity="O(1)",
                    history=(
                        ("7.0.0", "Added the `entries-read` and `lag` fields"),
                    ),
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                    )),
                cmd("stream", -3, "readonly",
                    acl_categories="stream",
                    key_specs=(ks("RO ACCESS", index=2, range=(0, 1, 0)),),
                    docs=("5.0.0", "Returns information about a stream."),
                    complexity="O(1)",
                    history=(
                        ("6.0.0", "Added the `FULL` modifier."),
                        ("7.0.0", "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` and `lag` fields"),
                        ("7.2.0", "Added the `active-time` field, and changed the meaning of `seen-time`."),
                    ),
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                        arg("full", "block", token="FULL", optional=True, arguments=(
                            arg("count", "integer", token="COUNT", optional=True),
                        )),
                    )),
                cmd("help", 2, "loading stale",
                    acl_categories="stream",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)")]),
        cmd("xlen", 2, "readonly fast",
            acl_categories="stream",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Return the number of messages in a stream."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("xnack", -7, "write fast",
            acl_categories="stream",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("8.8.0", "Releases pending messages back to the group's PEL without acknowledging them, making them available for re-delivery."),
            complexity="O(1) for each message ID processed.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("group", "string"),
                arg("mode", "oneof", arguments=(
                    arg("silent", "pure-token", token="SILENT"),
                    arg("fail", "pure-token", token="FAIL"),
                    arg("fatal", "pure-token", token="FATAL"),
                )),
                arg("ids", "block", token="IDS", arguments=(
                    arg("numids", "integer"),
                    arg("id", "string", multiple=True),
                )),
            )),
        cmd("xpending", -3, "readonly",
            acl_categories="stream",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the information and entries from a stream consumer group's pending entries list."),
            complexity="O(N) with N being the number of elements returned, so asking for a small fixed number of entries per call is O(1). O(M), where M is the total number of entries scanned when used with the IDLE filter. When the command returns just the summary and the list of consumers is small, it runs in O(1) time; otherwise, an additional O(N) time for iterating every consumer.",
            history=(
                ("6.2.0", "Added the `IDLE` option and exclusive range intervals."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("group", "string"),
                arg("filters", "block", optional=True, arguments=(
                    arg("min-idle-time", "integer", token="IDLE", since="6.2.0", optional=True),
                    arg("start", "string"),
                    arg("end", "string"),
                    arg("count", "integer"),
                    arg("consumer", "string", optional=True),
                )),
            )),
        cmd("xrange", -4, "readonly",
            acl_categories="stream",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the messages from a stream within a range of IDs."),
            complexity="O(N) with N being the number of elements being returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
            history=(
                ("6.2.0", "Added exclusive ranges."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "string"),
                arg("end", "string"),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("xread", -4, "readonly blocking",
            acl_categories="stream",
            key_specs=(ks("RO ACCESS INCOMPLETE", keyword="STREAMS", startfrom=1, range=(-1, 1, 2),
                          notes="Incomplete because a stream key named STREAMS (or options before it) can shift the STREAMS keyword; fall back to xreadGetKeys"),),
            docs=("5.0.0", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise."),
            complexity="For each stream mentioned: O(N) with N being the number of elements being returned, it means that XREAD-ing with a fixed COUNT is O(1). Note that when the BLOCK option is used, XADD will pay O(M) time in order to serve the M clients blocked on the stream getting new data.",
            history=(
                ("8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options."),
            ),
            arguments=(
                arg("count", "integer", token="COUNT", optional=True),
                arg("maxcount", "integer", token="MAXCOUNT", since="8.10.0", optional=True),
                arg("maxsize", "integer", token="MAXSIZE", since="8.10.0", optional=True),
                arg("milliseconds", "integer", token="BLOCK", optional=True),
                arg("streams", "block", token="STREAMS", arguments=(
                    arg("key", "key", key_spec_index=0, multiple=True),
                    arg("id", "string", multiple=True),
                )),
            )),
        cmd("xreadgroup", -7, "write blocking",
            acl_categories="stream",
            key_specs=(ks("RO ACCESS INCOMPLETE", keyword="STREAMS", startfrom=4, range=(-1, 1, 2),
                          notes="Incomplete because a consumer/group named STREAMS (or options before GROUP) can shift the STREAMS keyword; fall back to xreadGetKeys"),),
            docs=("5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise."),
            complexity="For each stream mentioned: O(M) with M being the number of elements returned. If M is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) time in order to serve the N clients blocked on the stream getting new data.",
            history=(
                ("8.4.0", "Added the `CLAIM` option."),
                ("8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options."),
            ),
            arguments=(
                arg("group-block", "block", token="GROUP", arguments=(
                    arg("group", "string"),
                    arg("consumer", "string"),
                )),
                arg("count", "integer", token="COUNT", optional=True),
                arg("maxcount", "integer", token="MAXCOUNT", since="8.10.0", optional=True),
                arg("maxsize", "integer", token="MAXSIZE", since="8.10.0", optional=True),
                arg("milliseconds", "integer", token="BLOCK", optional=True),
                arg("min-idle-time", "integer", token="CLAIM", optional=True),
                arg("noack", "pure-token", token="NOACK", optional=True),
                arg("streams", "block", token="STREAMS", arguments=(
                    arg("key", "key", key_spec_index=0, multiple=True),
                    arg("id", "string", multiple=True),
                )),
            )),
        cmd("xrevrange", -4, "readonly",
            acl_categories="stream",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the messages from a stream within a range of IDs in reverse order."),
            complexity="O(N) with N being the number of elements returned. If N is constant (e.g. always asking for the first 10 elements with COUNT), you can consider it O(1).",
            history=(
                ("6.2.0", "Added exclusive ranges."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("end", "string"),
                arg("start", "string"),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("xsetid", -3, "write denyoom fast",
            acl_categories="stream",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "An internal command for replicating stream values."),
            complexity="O(1)",
            history=(
                ("7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("last-id", "string"),
                arg("entries_added", "integer", token="ENTRIESADDED", since="7.0.0", optional=True),
                arg("max_deleted_entry_id", "string", token="MAXDELETEDID", since="7.0.0", optional=True),
            )),
        cmd("xtrim", -4, "write",
            acl_categories="stream",
            tips="nondeterministic_output",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Deletes messages from the beginning of a stream."),
            complexity="O(N), with N being the number of evicted entries. Constant times are very small however, since entries are organized in macro nodes containing multiple entries that can be released with a single deallocation.",
            history=(
                ("6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option."),
                ("8.2.0", "Added the `KEEPREF`, `DELREF` and `ACKED` options."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("trim", "block", arguments=(
                    arg("strategy", "oneof", arguments=(
                        arg("maxlen", "pure-token", token="MAXLEN"),
                        arg("minid", "pure-token", token="MINID", since="6.2.0"),
                    )),
                    arg("operator", "oneof", optional=True, arguments=(
                        arg("equal", "pure-token", token="="),
                        arg("approximately", "pure-token", token="~"),
                    )),
                    arg("threshold", "string"),
                    arg("count", "integer", token="LIMIT", since="6.2.0", optional=True),
                    arg("condition", "oneof", optional=True, arguments=(
                        arg("keepref", "pure-token", token="KEEPREF"),
                        arg("delref", "pure-token", token="DELREF"),
                        arg("acked", "pure-token", token="ACKED"),
                    )),
                )),
            ))),
    family("string",
        cmd("append", 3, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist."),
            complexity="O(1). The amortized time complexity is O(1) assuming the appended value is small and the already present value is of any size, since the dynamic string library used by Redis will double the free space available on every reallocation.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("value", "string"),
            )),
        cmd("decr", 2, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("decrby", 3, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("decrement", "integer"),
            )),
        cmd("get", 2, "readonly fast",
            acl_categories="string",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns the string value of a key."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("getdel", 2, "write fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),),
            docs=("6.2.0", "Returns the string value of a key after deleting the key."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("getex", -2, "write fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0), notes="RW and UPDATE because it changes the TTL"),),
            docs=("6.2.0", "Returns the string value of a key after setting its expiration time."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("expiration", "oneof", optional=True, arguments=(
                    arg("seconds", "integer", token="EX"),
                    arg("milliseconds", "integer", token="PX"),
                    arg("unix-time-seconds", "unix-time", token="EXAT"),
                    arg("unix-time-milliseconds", "unix-time", token="PXAT"),
                    arg("persist", "pure-token", token="PERSIST"),
                )),
            )),
        cmd("getrange", 4, "readonly",
            acl_categories="string",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.4.0", "Returns a substring of the string stored at a key."),
            complexity="O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "integer"),
                arg("end", "integer"),
            )),
        cmd("getset", 3, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns the previous string value of a key after setting it to a new value."),
            complexity="O(1)",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`SET` with the `!GET` argument",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("value", "string"),
            )),
        cmd("incr", 2, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("incrby", 3, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("increment", "integer"),
            )),
        cmd("incrbyfloat", 3, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("increment", "double"),
            )),
        cmd("lcs", -3, "readonly",
            acl_categories="string",
            key_specs=(ks("RO ACCESS", index=1, range=(1, 1, 0)),),
            docs=("7.0.0", "Finds the longest common substring."),
            complexity="O(N*M) where N and M are the lengths of s1 and s2, respectively",
            arguments=(
                arg("key1", "key", key_spec_index=0),
                arg("key2", "key", key_spec_index=0),
                arg("len", "pure-token", token="LEN", optional=True),
                arg("idx", "pure-token", token="IDX", optional=True),
                arg("len", "integer", token="MINMATCHLEN", optional=True),
                arg("withmatchlen", "pure-token", token="WITHMATCHLEN", optional=True),
            )),
        cmd("mget", -2, "readonly fast",
            acl_categories="string",
            tips="request_policy:multi_shard",
            key_specs=(ks("RO ACCESS", index=1, range=(-1, 1, 0)),),
            docs=("1.0.0", "Atomically returns the string values of one or more keys."),
            complexity="O(N) where N is the number of keys to retrieve.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("mset", -3, "write denyoom",
            acl_categories="string",
            tips="request_policy:multi_shard response_policy:all_succeeded",
            key_specs=(ks("OW UPDATE", index=1, range=(-1, 2, 0)),),
            docs=("1.0.1", "Atomically creates or modifies the string values of one or more keys."),
            complexity="O(N) where N is the number of keys to set.",
            arguments=(
                arg("key_value", "block", multiple=True, arguments=(
                    arg("key", "key", key_spec_index=0),
                    arg("value", "string"),
                )),
            )),
        cmd("msetnx", -3, "write denyoom",
            acl_categories="string",
            tips="request_policy:multi_shard response_policy:agg_min",
            key_specs=(ks("OW INSERT", index=1, range=(-1, 2, 0)),),
            docs=("1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist."),
            complexity="O(N) where N is the number of keys to set.",
            arguments=(
                arg("key_value", "block", multiple=True, arguments=(
                    arg("key", "key", key_spec_index=0),
                    arg("value", "string"),
                )),
            )),
        cmd("psetex", 4, "write denyoom",
            acl_categories="string",
            key_specs=(ks("OW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("milliseconds", "integer"),
                arg("value", "string"),
            )),
        cmd("set", -3, "write denyoom",
            acl_categories="string",
            key_specs=(ks("RW ACCESS UPDATE VARIABLE_FLAGS", index=1, range=(0, 1, 0), notes="RW and ACCESS due to the optional `GET` argument"),),
            docs=("1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."),
            complexity="O(1)",
            history=(
                ("2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."),
                ("6.0.0", "Added the `KEEPTTL` option."),
                ("6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."),
                ("7.0.0", "Allowed the `NX` and `GET` options to be used together."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("value", "string"),
                arg("condition", "oneof", since="2.6.12", optional=True, arguments=(
                    arg("nx", "pure-token", token="NX"),
                    arg("xx", "pure-token", token="XX"),
                )),
                arg("get", "pure-token", token="GET", since="6.2.0", optional=True),
                arg("expiration", "oneof", optional=True, arguments=(
                    arg("seconds", "integer", token="EX", since="2.6.12"),
                    arg("milliseconds", "integer", token="PX", since="2.6.12"),
                    arg("unix-time-seconds", "unix-time", token="EXAT", since="6.2.0"),
                    arg("unix-time-milliseconds", "unix-time", token="PXAT", since="6.2.0"),
                    arg("keepttl", "pure-token", token="KEEPTTL", since="6.0.0"),
                )),
            )),
        cmd("setex", 4, "write denyoom",
            acl_categories="string",
            key_specs=(ks("OW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("seconds", "integer"),
                arg("value", "string"),
            )),
        cmd("setnx", 3, "write denyoom fast",
            acl_categories="string",
            key_specs=(ks("OW INSERT", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Set the string value of a key only when the key doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("value", "string"),
            )),
        cmd("setrange", 4, "write denyoom",
            acl_categories="string",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist."),
            complexity="O(1), not counting the time taken to copy the new string in place. Usually, this string is very small so the amortized complexity is O(1). Otherwise, complexity is O(M) with M being the length of the value argument.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("offset", "integer"),
                arg("value", "string"),
            )),
        cmd("strlen", 2, "readonly fast",
            acl_categories="string",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Returns the length of a string value."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("substr", 4, "readonly",
            acl_categories="string",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns a substring from string value."),
            complexity="O(N) where N is the length of the returned string. The complexity is ultimately determined by the returned length, but because creating a substring from an existing string is very cheap, it can be considered O(1) for small strings.",
            doc_flags="deprecated",
            deprecated_since="2.0.0",
            replaced_by="`GETRANGE`",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "integer"),
                arg("end", "integer"),
            ))),
    family("list",
        cmd("blmove", 6, "write denyoom blocking",
            acl_categories="list",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("RW INSERT", index=2, range=(0, 1, 0)),
            ),
            docs=("6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved."),
            complexity="O(1)",
            arguments=(
                arg("source", "key", key_spec_index=0),
                arg("destination", "key", key_spec_index=1),
                arg("wherefrom", "oneof", arguments=(
                    arg("left", "pure-token", token="LEFT"),
                    arg("right", "pure-token", token="RIGHT"),
                )),
                arg("whereto", "oneof", arguments=(
                    arg("left", "pure-token", token="LEFT"),
                    arg("right", "pure-token", token="RIGHT"),
                )),
                arg("timeout", "double"),
            )),
        cmd("blmpop", -5, "write blocking",
            acl_categories="list",
            key_specs=(ks("RW ACCESS DELETE", index=2, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
            complexity="O(N+M) where N is the number of provided keys and M is the number of elements returned.",
            arguments=(
                arg("timeout", "double"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("where", "oneof", arguments=(
                    arg("left", "pure-token", token="LEFT"),
                    arg("right", "pure-token", token="RIGHT"),
                )),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("blpop", -3, "write blocking",
            acl_categories="list",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(-2, 1, 0)),),
            docs=("2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
            complexity="O(N) where N is the number of provided keys.",
            history=(
                ("6.0.0", "`timeout` is interpreted as a double instead of an integer."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("timeout", "double"),
            )),
        cmd("brpop", -3, "write blocking",
            acl_categories="list",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(-2, 1, 0)),),
            docs=("2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped."),
            complexity="O(N) where N is the number of provided keys.",
            history=(
                ("6.0.0", "`timeout` is interpreted as a double instead of an integer."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("timeout", "double"),
            )),
        cmd("brpoplpush", 4, "write denyoom blocking",
            acl_categories="list",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("RW INSERT", index=2, range=(0, 1, 0)),
            ),
            docs=("2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped."),
            complexity="O(1)",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`BLMOVE` with the `RIGHT` and `LEFT` arguments",
            history=(
                ("6.0.0", "`timeout` is interpreted as a double instead of an integer."),
            ),
            arguments=(
                arg("source", "key", key_spec_index=0),
                arg("destination", "key", key_spec_index=1),
                arg("timeout", "double"),
            )),
        cmd("lindex", 3, "readonly",
            acl_categories="list",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns an element from a list by its index."),
            complexity="O(N) where N is the number of elements to traverse to get to the element at index. This makes asking for the first or the last element of the list O(1).",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("index", "integer"),
            )),
        cmd("linsert", 5, "write denyoom",
            acl_categories="list",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Inserts an element before or after another element in a list."),
            complexity="O(N) where N is the number of elements to traverse before seeing the value pivot. This means that inserting somewhere on the left end on the list (head) can be considered O(1) and inserting somewhere on the right end (tail) is O(N).",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("where", "oneof", arguments=(
                    arg("before", "pure-token", token="BEFORE"),
                    arg("after", "pure-token", token="AFTER"),
                )),
                arg("pivot", "string"),
                arg("element", "string"),
            )),
        cmd("llen", 2, "readonly fast",
            acl_categories="list",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns the length of a list."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("lmove", 5, "write denyoom",
            acl_categories="list",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("RW INSERT", index=2, range=(0, 1, 0)),
            ),
            docs=("6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved."),
            complexity="O(1)",
            arguments=(
                arg("source", "key", key_spec_index=0),
                arg("destination", "key", key_spec_index=1),
                arg("wherefrom", "oneof", arguments=(
                    arg("left", "pure-token", token="LEFT"),
                    arg("right", "pure-token", token="RIGHT"),
                )),
                arg("whereto", "oneof", arguments=(
                    arg("left", "pure-token", token="LEFT"),
                    arg("right", "pure-token", token="RIGHT"),
                )),
            )),
        cmd("lmpop", -4, "write",
            acl_categories="list",
            key_specs=(ks("RW ACCESS DELETE", index=1, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped."),
            complexity="O(N+M) where N is the number of provided keys and M is the number of elements returned.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("where", "oneof", arguments=(
                    arg("left", "pure-token", token="LEFT"),
                    arg("right", "pure-token", token="RIGHT"),
                )),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("lpop", -2, "write fast",
            acl_categories="list",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped."),
            complexity="O(N) where N is the number of elements returned",
            history=(
                ("6.2.0", "Added the `count` argument."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer", since="6.2.0", optional=True),
            )),
        cmd("lpos", -3, "readonly",
            acl_categories="list",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("6.0.6", "Returns the index of matching elements in a list."),
            complexity="O(N) where N is the number of elements in the list, for the average case. When searching for elements near the head or the tail of the list, or when the MAXLEN option is provided, the command may run in constant time.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("element", "string"),
                arg("rank", "integer", token="RANK", optional=True),
                arg("num-matches", "integer", token="COUNT", optional=True),
                arg("len", "integer", token="MAXLEN", optional=True),
            )),
        cmd("lpush", -3, "write denyoom fast",
            acl_categories="list",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist."),
            complexity="O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
            history=(
                ("2.4.0", "Accepts multiple `element` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("element", "string", multiple=True),
            )),
        cmd("lpushx", -3, "write denyoom fast",
            acl_categories="list",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Prepends one or more elements to a list only when the list exists."),
            complexity="O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
            history=(
                ("4.0.0", "Accepts multiple `element` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("element", "string", multiple=True),
            )),
        cmd("lrange", 4, "readonly",
            acl_categories="list",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns a range of elements from a list."),
            complexity="O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the specified range.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "integer"),
                arg("stop", "integer"),
            )),
        cmd("lrem", 4, "write",
            acl_categories="list",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Removes elements from a list. Deletes the list if the last element was removed."),
            complexity="O(N+M) where N is the length of the list and M is the number of elements removed.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer"),
                arg("element", "string"),
            )),
        cmd("lset", 4, "write denyoom",
            acl_categories="list",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Sets the value of an element in a list by its index."),
            complexity="O(N) where N is the length of the list. Setting either the first or the last element of the list is O(1).",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("index", "integer"),
                arg("element", "string"),
            )),
        cmd("ltrim", 4, "write",
            acl_categories="list",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed."),
            complexity="O(N) where N is the number of elements to be removed by the operation.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "integer"),
                arg("stop", "integer"),
            )),
        cmd("rpop", -2, "write fast",
            acl_categories="list",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped."),
            complexity="O(N) where N is the number of elements returned",
            history=(
                ("6.2.0", "Added the `count` argument."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer", since="6.2.0", optional=True),
            )),
        cmd("rpoplpush", 3, "write denyoom",
            acl_categories="list",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("RW INSERT", index=2, range=(0, 1, 0)),
            ),
            docs=("1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped."),
            complexity="O(1)",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`LMOVE` with the `RIGHT` and `LEFT` arguments",
            arguments=(
                arg("source", "key", key_spec_index=0),
                arg("destination", "key", key_spec_index=1),
            )),
        cmd("rpush", -3, "write denyoom fast",
            acl_categories="list",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist."),
            complexity="O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
            history=(
                ("2.4.0", "Accepts multiple `element` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("element", "string", multiple=True),
            )),
        cmd("rpushx", -3, "write denyoom fast",
            acl_categories="list",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Appends an element to a list only when the list exists."),
            complexity="O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
            history=(
                ("4.0.0", "Accepts multiple `element` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("element", "string", multiple=True),
            ))),
    family("hash",
        cmd("hdel", -3, "write fast",
            acl_categories="hash",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain."),
            complexity="O(N) where N is the number of fields to be removed.",
            history=(
                ("2.4.0", "Accepts multiple `field` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string", multiple=True),
            )),
        cmd("hexists", 3, "readonly fast",
            acl_categories="hash",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Determines whether a field exists in a hash."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string"),
            )),
        cmd("hget", 3, "readonly fast",
            acl_categories="hash",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns the value of a field in a hash."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string"),
            )),
        cmd("hgetall", 2, "readonly",
            acl_categories="hash",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns all fields and values in a hash."),
            complexity="O(N) where N is the size of the hash.",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("hincrby", 4, "write denyoom fast",
            acl_categories="hash",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string"),
                arg("increment", "integer"),
            )),
        cmd("hincrbyfloat", 4, "write denyoom fast",
            acl_categories="hash",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string"),
                arg("increment", "double"),
            )),
        cmd("hkeys", 2, "readonly",
            acl_categories="hash",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns all fields in a hash."),
            complexity="O(N) where N is the size of the hash.",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("hlen", 2, "readonly fast",
            acl_categories="hash",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns the number of fields in a hash."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("hmget", -3, "readonly fast",
            acl_categories="hash",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns the values of all fields in a hash."),
            complexity="O(N) where N is the number of fields being requested.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string", multiple=True),
            )),
        cmd("hmset", -4, "write denyoom fast",
            acl_categories="hash",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Sets the values of multiple fields."),
            complexity="O(N) where N is the number of fields being set.",
            doc_flags="deprecated",
            deprecated_since="4.0.0",
            replaced_by="`HSET` with multiple field-value pairs",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field_value", "block", multiple=True, arguments=(
                    arg("field", "string"),
                    arg("value", "string"),
                )),
            )),
        cmd("hrandfield", -2, "readonly",
            acl_categories="hash",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("6.2.0", "Returns one or more random fields from a hash."),
            complexity="O(N) where N is the number of fields returned",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("options", "block", optional=True, arguments=(
                    arg("count", "integer"),
                    arg("withvalues", "pure-token", token="WITHVALUES", optional=True),
                )),
            )),
        cmd("hscan", -3, "readonly",
            acl_categories="hash",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.8.0", "Iterates over fields and values of a hash."),
            complexity="O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("cursor", "integer"),
                arg("pattern", "pattern", token="MATCH", optional=True),
                arg("count", "integer", token="COUNT", optional=True),
                arg("novalues", "pure-token", token="NOVALUES", optional=True),
            )),
        cmd("hset", -4, "write denyoom fast",
            acl_categories="hash",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Creates or modifies the value of a field in a hash."),
            complexity="O(1) for each field/value pair added, so O(N) to add N field/value pairs when the command is called with multiple field/value pairs.",
            history=(
                ("4.0.0", "Accepts multiple `field` and `value` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field_value", "block", multiple=True, arguments=(
                    arg("field", "string"),
                    arg("value", "string"),
                )),
            )),
        cmd("hsetnx", 4, "write denyoom fast",
            acl_categories="hash",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Sets the value of a field in a hash only when the field doesn't exist."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string"),
                arg("value", "string"),
            )),
        cmd("hstrlen", 3, "readonly fast",
            acl_categories="hash",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("3.2.0", "Returns the length of the value of a field."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("field", "string"),
            )),
        cmd("hvals", 2, "readonly",
            acl_categories="hash",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns all values in a hash."),
            complexity="O(N) where N is the size of the hash.",
            arguments=(
                arg("key", "key", key_spec_index=0),
            ))),
    family("set",
        cmd("sadd", -3, "write denyoom fast",
            acl_categories="set",
            key_specs=(ks("RW INSERT", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist."),
            complexity="O(1) for each element added, so O(N) to add N elements when the command is called with multiple arguments.",
            history=(
                ("2.4.0", "Accepts multiple `member` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string", multiple=True),
            )),
        cmd("scard", 2, "readonly fast",
            acl_categories="set",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns the number of members in a set."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("sdiff", -2, "readonly",
            acl_categories="set",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(-1, 1, 0)),),
            docs=("1.0.0", "Returns the difference of multiple sets."),
            complexity="O(N) where N is the total number of elements in all given sets.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("sdiffstore", -3, "write denyoom",
            acl_categories="set",
            key_specs=(
                ks("OW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, range=(-1, 1, 0)),
            ),
            docs=("1.0.0", "Stores the difference of multiple sets in a key."),
            complexity="O(N) where N is the total number of elements in all given sets.",
            arguments=(
                arg("destination", "key", key_spec_index=0),
                arg("key", "key", key_spec_index=1, multiple=True),
            )),
        cmd("sinter", -2, "readonly",
            acl_categories="set",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(-1, 1, 0)),),
            docs=("1.0.0", "Returns the intersect of multiple sets."),
            complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("sintercard", -3, "readonly",
            acl_categories="set",
            key_specs=(ks("RO ACCESS", index=1, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Returns the number of members of the intersect of multiple sets."),
            complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("limit", "integer", token="LIMIT", optional=True),
            )),
        cmd("sinterstore", -3, "write denyoom",
            acl_categories="set",
            key_specs=(
                ks("RW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, range=(-1, 1, 0)),
            ),
            docs=("1.0.0", "Stores the intersect of multiple sets in a key."),
            complexity="O(N*M) worst case where N is the cardinality of the smallest set and M is the number of sets.",
            arguments=(
                arg("destination", "key", key_spec_index=0),
                arg("key", "key", key_spec_index=1, multiple=True),
            )),
        cmd("sismember", 3, "readonly fast",
            acl_categories="set",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Determines whether a member belongs to a set."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string"),
            )),
        cmd("smembers", 2, "readonly",
            acl_categories="set",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns all members of a set."),
            complexity="O(N) where N is the set cardinality.",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("smismember", -3, "readonly fast",
            acl_categories="set",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("6.2.0", "Determines whether multiple members belong to a set."),
            complexity="O(N) where N is the number of elements being checked for membership",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string", multiple=True),
            )),
        cmd("smove", 4, "write fast",
            acl_categories="set",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("RW INSERT", index=2, range=(0, 1, 0)),
            ),
            docs=("1.0.0", "Moves a member from one set to another."),
            complexity="O(1)",
            arguments=(
                arg("source", "key", key_spec_index=0),
                arg("destination", "key", key_spec_index=1),
                arg("member", "string"),
            )),
        cmd("spop", -2, "write fast",
            acl_categories="set",
            tips="nondeterministic_output",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped."),
            complexity="Without the count argument O(1), otherwise O(N) where N is the value of the passed count.",
            history=(
                ("3.2.0", "Added the `count` argument."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer", since="3.2.0", optional=True),
            )),
        cmd("srandmember", -2, "readonly",
            acl_categories="set",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Get one or multiple random members from a set"),
            complexity="Without the count argument O(1), otherwise O(N) where N is the absolute value of the passed count.",
            history=(
                ("2.6.0", "Added the optional `count` argument."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer", since="2.6.0", optional=True),
            )),
        cmd("srem", -3, "write fast",
            acl_categories="set",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed."),
            complexity="O(N) where N is the number of members to be removed.",
            history=(
                ("2.4.0", "Accepts multiple `member` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string", multiple=True),
            )),
        cmd("sscan", -3, "readonly",
            acl_categories="set",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.8.0", "Iterates over members of a set."),
            complexity="O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("cursor", "integer"),
                arg("pattern", "pattern", token="MATCH", optional=True),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("sunion", -2, "readonly",
            acl_categories="set",
            tips="nondeterministic_output_order",
            key_specs=(ks("RO ACCESS", index=1, range=(-1, 1, 0)),),
            docs=("1.0.0", "Returns the union of multiple sets."),
            complexity="O(N) where N is the total number of elements in all given sets.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("sunionstore", -3, "write denyoom",
            acl_categories="set",
            key_specs=(
                ks("OW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, range=(-1, 1, 0)),
            ),
            docs=("1.0.0", "Stores the union of multiple sets in a key."),
            complexity="O(N) where N is the total number of elements in all given sets.",
            arguments=(
                arg("destination", "key", key_spec_index=0),
                arg("key", "key", key_spec_index=1, multiple=True),
            ))),
    family("sorted-set",
        cmd("bzmpop", -5, "write blocking",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS DELETE", index=2, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."),
            complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
            arguments=(
                arg("timeout", "double"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("where", "oneof", arguments=(
                    arg("min", "pure-token", token="MIN"),
                    arg("max", "pure-token", token="MAX"),
                )),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("bzpopmax", -3, "write blocking fast",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(-2, 1, 0)),),
            docs=("5.0.0", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped."),
            complexity="O(log(N)) with N being the number of elements in the sorted set.",
            history=(
                ("6.0.0", "`timeout` is interpreted as a double instead of an integer."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("timeout", "double"),
            )),
        cmd("bzpopmin", -3, "write blocking fast",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(-2, 1, 0)),),
            docs=("5.0.0", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped."),
            complexity="O(log(N)) with N being the number of elements in the sorted set.",
            history=(
                ("6.0.0", "`timeout` is interpreted as a double instead of an integer."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("timeout", "double"),
            )),
        cmd("zadd", -4, "write denyoom fast",
            acl_categories="sortedset",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist."),
            complexity="O(log(N)) for each item added, where N is the number of elements in the sorted set.",
            history=(
                ("2.4.0", "Accepts multiple elements."),
                ("3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."),
                ("6.2.0", "Added the `GT` and `LT` options."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("condition", "oneof", since="3.0.2", optional=True, arguments=(
                    arg("nx", "pure-token", token="NX"),
                    arg("xx", "pure-token", token="XX"),
                )),
                arg("comparison", "oneof", since="6.2.0", optional=True, arguments=(
                    arg("gt", "pure-token", token="GT"),
                    arg("lt", "pure-token", token="LT"),
                )),
                arg("change", "pure-token", token="CH", since="3.0.2", optional=True),
                arg("increment", "pure-token", token="INCR", since="3.0.2", optional=True),
                arg("score_member", "block", multiple=True, arguments=(
                    arg("score", "double"),
                    arg("member", "string"),
                )),
            )),
        cmd("zcard", 2, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Returns the number of members in a sorted set."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("zcount", 4, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns the count of members in a sorted set that have scores within a range."),
            complexity="O(log(N)) with N being the number of elements in the sorted set.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("min", "double"),
                arg("max", "double"),
            )),
        cmd("zdiff", -3, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, keynum=(0, 1, 1)),),
            docs=("6.2.0", "Returns the difference between multiple sorted sets."),
            complexity="O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("withscores", "pure-token", token="WITHSCORES", optional=True),
            )),
        cmd("zdiffstore", -4, "write denyoom",
            acl_categories="sortedset",
            key_specs=(
                ks("OW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, keynum=(0, 1, 1)),
            ),
            docs=("6.2.0", "Stores the difference of multiple sorted sets in a key."),
            complexity="O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N is the size of the first set, and K is the size of the result set.",
            arguments=(
                arg("destination", "key", key_spec_index=0),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=1, multiple=True),
            )),
        cmd("zincrby", 4, "write denyoom fast",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Increments the score of a member in a sorted set."),
            complexity="O(log(N)) where N is the number of elements in the sorted set.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("increment", "integer"),
                arg("member", "string"),
            )),
        cmd("zinter", -3, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, keynum=(0, 1, 1)),),
            docs=("6.2.0", "Returns the intersect of multiple sorted sets."),
            complexity="O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("weight", "integer", token="WEIGHTS", optional=True, multiple=True),
                arg("aggregate", "oneof", token="AGGREGATE", optional=True, arguments=(
                    arg("sum", "pure-token", token="SUM"),
                    arg("min", "pure-token", token="MIN"),
                    arg("max", "pure-token", token="MAX"),
                )),
                arg("withscores", "pure-token", token="WITHSCORES", optional=True),
            )),
        cmd("zintercard", -3, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Returns the number of members of the intersect of multiple sorted sets."),
            complexity="O(N*K) worst case with N being the smallest input sorted set, K being the number of input sorted sets.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("limit", "integer", token="LIMIT", optional=True),
            )),
        cmd("zinterstore", -4, "write denyoom",
            acl_categories="sortedset",
            key_specs=(
                ks("OW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, keynum=(0, 1, 1)),
            ),
            docs=("2.0.0", "Stores the intersect of multiple sorted sets in a key."),
            complexity="O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the number of input sorted sets and M being the number of elements in the resulting sorted set.",
            arguments=(
                arg("destination", "key", key_spec_index=0),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=1, multiple=True),
                arg("weight", "integer", token="WEIGHTS", optional=True, multiple=True),
                arg("aggregate", "oneof", token="AGGREGATE", optional=True, arguments=(
                    arg("sum", "pure-token", token="SUM"),
                    arg("min", "pure-token", token="MIN"),
                    arg("max", "pure-token", token="MAX"),
                )),
            )),
        cmd("zlexcount", 4, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.8.9", "Returns the number of members in a sorted set within a lexicographical range."),
            complexity="O(log(N)) with N being the number of elements in the sorted set.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("min", "string"),
                arg("max", "string"),
            )),
        cmd("zmpop", -4, "write",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS DELETE", index=1, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped."),
            complexity="O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of elements in the sorted set, and M being the number of elements popped.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("where", "oneof", arguments=(
                    arg("min", "pure-token", token="MIN"),
                    arg("max", "pure-token", token="MAX"),
                )),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("zmscore", -3, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("6.2.0", "Returns the score of one or more members in a sorted set."),
            complexity="O(N) where N is the number of members being requested.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string", multiple=True),
            )),
        cmd("zpopmax", -2, "write fast",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."),
            complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer", optional=True),
            )),
        cmd("zpopmin", -2, "write fast",
            acl_categories="sortedset",
            key_specs=(ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),),
            docs=("5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped."),
            complexity="O(log(N)*M) with N being the number of elements in the sorted set, and M being the number of elements popped.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("count", "integer", optional=True),
            )),
        cmd("zrandmember", -2, "readonly",
            acl_categories="sortedset",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("6.2.0", "Returns one or more random members from a sorted set."),
            complexity="O(N) where N is the number of elements returned",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("options", "block", optional=True, arguments=(
                    arg("count", "integer"),
                    arg("withscores", "pure-token", token="WITHSCORES", optional=True),
                )),
            )),
        cmd("zrange", -4, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Returns members in a sorted set within a range of indexes."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
            history=(
                ("6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "string"),
                arg("stop", "string"),
                arg("sortby", "oneof", since="6.2.0", optional=True, arguments=(
                    arg("byscore", "pure-token", token="BYSCORE"),
                    arg("bylex", "pure-token", token="BYLEX"),
                )),
                arg("rev", "pure-token", token="REV", since="6.2.0", optional=True),
                arg("offset_count", "block", token="LIMIT", since="6.2.0", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
                arg("withscores", "pure-token", token="WITHSCORES", optional=True),
            )),
        cmd("zrangebylex", -4, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.8.9", "Returns members in a sorted set within a lexicographical range."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`ZRANGE` with the `BYLEX` argument",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("min", "string"),
                arg("max", "string"),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
            )),
        cmd("zrangebyscore", -4, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.5", "Returns members in a sorted set within a range of scores."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`ZRANGE` with the `BYSCORE` argument",
            history=(
                ("2.0.0", "Added the `WITHSCORES` modifier."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("min", "double"),
                arg("max", "double"),
                arg("withscores", "pure-token", token="WITHSCORES", since="2.0.0", optional=True),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
            )),
        cmd("zrangestore", -5, "write denyoom",
            acl_categories="sortedset",
            key_specs=(
                ks("OW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, range=(0, 1, 0)),
            ),
            docs=("6.2.0", "Stores a range of members from sorted set in a key."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements stored into the destination key.",
            arguments=(
                arg("dst", "key", key_spec_index=0),
                arg("src", "key", key_spec_index=1),
                arg("min", "string"),
                arg("max", "string"),
                arg("sortby", "oneof", optional=True, arguments=(
                    arg("byscore", "pure-token", token="BYSCORE"),
                    arg("bylex", "pure-token", token="BYLEX"),
                )),
                arg("rev", "pure-token", token="REV", optional=True),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
            )),
        cmd("zrank", -3, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores."),
            complexity="O(log(N))",
            history=(
                ("7.2.0", "Added the optional `WITHSCORE` argument."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string"),
                arg("withscore", "pure-token", token="WITHSCORE", optional=True),
            )),
        cmd("zrem", -3, "write fast",
            acl_categories="sortedset",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed."),
            complexity="O(M*log(N)) with N being the number of elements in the sorted set and M the number of elements to be removed.",
            history=(
                ("2.4.0", "Accepts multiple elements."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string", multiple=True),
            )),
        cmd("zremrangebylex", 4, "write",
            acl_categories="sortedset",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("min", "string"),
                arg("max", "string"),
            )),
        cmd("zremrangebyrank", 4, "write",
            acl_categories="sortedset",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "integer"),
                arg("stop", "integer"),
            )),
        cmd("zremrangebyscore", 4, "write",
            acl_categories="sortedset",
            key_specs=(ks("RW DELETE", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements removed by the operation.",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("min", "double"),
                arg("max", "double"),
            )),
        cmd("zrevrange", -4, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Returns members in a sorted set within a range of indexes in reverse order."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements returned.",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`ZRANGE` with the `REV` argument",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("start", "integer"),
                arg("stop", "integer"),
                arg("withscores", "pure-token", token="WITHSCORES", optional=True),
            )),
        cmd("zrevrangebylex", -4, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`ZRANGE` with the `REV` and `BYLEX` arguments",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("max", "string"),
                arg("min", "string"),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
            )),
        cmd("zrevrangebyscore", -4, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Returns members in a sorted set within a range of scores in reverse order."),
            complexity="O(log(N)+M) with N being the number of elements in the sorted set and M the number of elements being returned. If M is constant (e.g. always asking for the first 10 elements with LIMIT), you can consider it O(log(N)).",
            doc_flags="deprecated",
            deprecated_since="6.2.0",
            replaced_by="`ZRANGE` with the `REV` and `BYSCORE` arguments",
            history=(
                ("2.1.6", "`min` and `max` can be exclusive."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("max", "double"),
                arg("min", "double"),
                arg("withscores", "pure-token", token="WITHSCORES", optional=True),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
            )),
        cmd("zrevrank", -3, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.0.0", "Returns the index of a member in a sorted set ordered by descending scores."),
            complexity="O(log(N))",
            history=(
                ("7.2.0", "Added the optional `WITHSCORE` argument."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string"),
                arg("withscore", "pure-token", token="WITHSCORE", optional=True),
            )),
        cmd("zscan", -3, "readonly",
            acl_categories="sortedset",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.8.0", "Iterates over members and scores of a sorted set."),
            complexity="O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection..",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("cursor", "integer"),
                arg("pattern", "pattern", token="MATCH", optional=True),
                arg("count", "integer", token="COUNT", optional=True),
            )),
        cmd("zscore", 3, "readonly fast",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Returns the score of a member in a sorted set."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("member", "string"),
            )),
        cmd("zunion", -3, "readonly",
            acl_categories="sortedset",
            key_specs=(ks("RO ACCESS", index=1, keynum=(0, 1, 1)),),
            docs=("6.2.0", "Returns the union of multiple sorted sets."),
            complexity="O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
            arguments=(
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, multiple=True),
                arg("weight", "integer", token="WEIGHTS", optional=True, multiple=True),
                arg("aggregate", "oneof", token="AGGREGATE", optional=True, arguments=(
                    arg("sum", "pure-token", token="SUM"),
                    arg("min", "pure-token", token="MIN"),
                    arg("max", "pure-token", token="MAX"),
                )),
                arg("withscores", "pure-token", token="WITHSCORES", optional=True),
            )),
        cmd("zunionstore", -4, "write denyoom",
            acl_categories="sortedset",
            key_specs=(
                ks("OW UPDATE", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", index=2, keynum=(0, 1, 1)),
            ),
            docs=("2.0.0", "Stores the union of multiple sorted sets in a key."),
            complexity="O(N)+O(M log(M)) with N being the sum of the sizes of the input sorted sets, and M being the number of elements in the resulting sorted set.",
            arguments=(
                arg("destination", "key", key_spec_index=0),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=1, multiple=True),
                arg("weight", "integer", token="WEIGHTS", optional=True, multiple=True),
                arg("aggregate", "oneof", token="AGGREGATE", optional=True, arguments=(
                    arg("sum", "pure-token", token="SUM"),
                    arg("min", "pure-token", token="MIN"),
                    arg("max", "pure-token", token="MAX"),
                )),
            ))),
    family("generic",
        cmd("copy", -3, "write denyoom",
            acl_categories="keyspace",
            key_specs=(
                ks("RO ACCESS", index=1, range=(0, 1, 0)),
                ks("OW UPDATE", index=2, range=(0, 1, 0)),
            ),
            docs=("6.2.0", "Copies the value of a key to a new key."),
            complexity="O(N) worst case for collections, where N is the number of nested items. O(1) for string values.",
            arguments=(
                arg("source", "key", key_spec_index=0),
                arg("destination", "key", key_spec_index=1),
                arg("destination-db", "integer", token="DB", optional=True),
                arg("replace", "pure-token", token="REPLACE", optional=True),
            )),
        cmd("del", -2, "write",
            acl_categories="keyspace",
            tips="request_policy:multi_shard response_policy:agg_sum",
            key_specs=(ks("RM DELETE", index=1, range=(-1, 1, 0)),),
            docs=("1.0.0", "Deletes one or more keys."),
            complexity="O(N) where N is the number of keys that will be removed. When a key to remove holds a value other than a string, the individual complexity for this key is O(M) where M is the number of elements in the list, set, sorted set or hash. Removing a single key that holds a string value is O(1).",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("dump", 2, "readonly",
            acl_categories="keyspace",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Returns a serialized representation of the value stored at a key."),
            complexity="O(1) to access the key and additional O(N*M) to serialize it, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1).",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("exists", -2, "readonly fast",
            acl_categories="keyspace",
            tips="request_policy:multi_shard response_policy:agg_sum",
            key_specs=(ks("RO", index=1, range=(-1, 1, 0)),),
            docs=("1.0.0", "Determines whether one or more keys exist."),
            complexity="O(N) where N is the number of keys to check.",
            history=(
                ("3.0.3", "Accepts multiple `key` arguments."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("expire", -3, "write fast",
            acl_categories="keyspace",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Sets the expiration time of a key in seconds."),
            complexity="O(1)",
            history=(
                ("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("seconds", "integer"),
                arg("condition", "oneof", since="7.0.0", optional=True, arguments=(
                    arg("nx", "pure-token", token="NX"),
                    arg("xx", "pure-token", token="XX"),
                    arg("gt", "pure-token", token="GT"),
                    arg("lt", "pure-token", token="LT"),
                )),
            )),
        cmd("expireat", -3, "write fast",
            acl_categories="keyspace",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.2.0", "Sets the expiration time of a key to a Unix timestamp."),
            complexity="O(1)",
            history=(
                ("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("unix-time-seconds", "unix-time"),
                arg("condition", "oneof", since="7.0.0", optional=True, arguments=(
                    arg("nx", "pure-token", token="NX"),
                    arg("xx", "pure-token", token="XX"),
                    arg("gt", "pure-token", token="GT"),
                    arg("lt", "pure-token", token="LT"),
                )),
            )),
        cmd("expiretime", 2, "readonly fast",
            acl_categories="keyspace",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("7.0.0", "Returns the expiration time of a key as a Unix timestamp."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("keys", 2, "readonly",
            acl_categories="keyspace dangerous",
            tips="request_policy:all_shards nondeterministic_output_order",
            docs=("1.0.0", "Returns all key names that match a pattern."),
            complexity="O(N) with N being the number of keys in the database, under the assumption that the key names in the database and the given pattern have limited length.",
            arguments=(
                arg("pattern", "pattern"),
            )),
        cmd("move", 3, "write fast",
            acl_categories="keyspace",
            key_specs=(ks("RW ACCESS UPDATE", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Moves a key to another database."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("db", "integer"),
            )),
        cmd("object", -2,
            docs=("2.2.3", "A container for object introspection commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("encoding", 3, "readonly",
                    acl_categories="keyspace",
                    tips="nondeterministic_output",
                    key_specs=(ks("RO", index=2, range=(0, 1, 0)),),
                    docs=("2.2.3", "Returns the internal encoding of a Redis object."),
                    complexity="O(1)",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                    )),
                cmd("freq", 3, "readonly",
                    acl_categories="keyspace",
                    tips="nondeterministic_output",
                    key_specs=(ks("RO", index=2, range=(0, 1, 0)),),
                    docs=("4.0.0", "Returns the logarithmic access frequency counter of a Redis object."),
                    complexity="O(1)",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                    )),
                cmd("help", 2, "loading stale",
                    acl_categories="keyspace",
                    docs=("6.2.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)"),
                cmd("idletime", 3, "readonly",
                    acl_categories="keyspace",
                    tips="nondeterministic_output",
                    key_specs=(ks("RO", index=2, range=(0, 1, 0)),),
                    docs=("2.2.3", "Returns the time since the last access to a Redis object."),
                    complexity="O(1)",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                    )),
                cmd("refcount", 3, "readonly",
                    acl_categories="keyspace",
                    tips="nondeterministic_output",
                    key_specs=(ks("RO", index=2, range=(0, 1, 0)),),
                    docs=("2.2.3", "Returns the reference count of a value of a key."),
                    complexity="O(1)",
                    arguments=(
                        arg("key", "key", key_spec_index=0),
                    ))]),
        cmd("persist", 2, "write fast",
            acl_categories="keyspace",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.2.0", "Removes the expiration time of a key."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("pexpire", -3, "write fast",
            acl_categories="keyspace",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Sets the expiration time of a key in milliseconds."),
            complexity="O(1)",
            history=(
                ("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("milliseconds", "integer"),
                arg("condition", "oneof", since="7.0.0", optional=True, arguments=(
                    arg("nx", "pure-token", token="NX"),
                    arg("xx", "pure-token", token="XX"),
                    arg("gt", "pure-token", token="GT"),
                    arg("lt", "pure-token", token="LT"),
                )),
            )),
        cmd("pexpireat", -3, "write fast",
            acl_categories="keyspace",
            key_specs=(ks("RW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp."),
            complexity="O(1)",
            history=(
                ("7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("unix-time-milliseconds", "unix-time"),
                arg("condition", "oneof", since="7.0.0", optional=True, arguments=(
                    arg("nx", "pure-token", token="NX"),
                    arg("xx", "pure-token", token="XX"),
                    arg("gt", "pure-token", token="GT"),
                    arg("lt", "pure-token", token="LT"),
                )),
            )),
        cmd("pexpiretime", 2, "readonly fast",
            acl_categories="keyspace",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("pttl", 2, "readonly fast",
            acl_categories="keyspace",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Returns the expiration time in milliseconds of a key."),
            complexity="O(1)",
            history=(
                ("2.8.0", "Added the -2 reply."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("randomkey", 1, "readonly",
            acl_categories="keyspace",
            tips="request_policy:all_shards nondeterministic_output",
            docs=("1.0.0", "Returns a random key name from the database."),
            complexity="O(1)"),
        cmd("rename", 3, "write",
            acl_categories="keyspace",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("OW UPDATE", index=2, range=(0, 1, 0)),
            ),
            docs=("1.0.0", "Renames a key and overwrites the destination."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("newkey", "key", key_spec_index=1),
            )),
        cmd("renamenx", 3, "write fast",
            acl_categories="keyspace",
            key_specs=(
                ks("RW ACCESS DELETE", index=1, range=(0, 1, 0)),
                ks("OW INSERT", index=2, range=(0, 1, 0)),
            ),
            docs=("1.0.0", "Renames a key only when the target key name doesn't exist."),
            complexity="O(1)",
            history=(
                ("3.2.0", "The command no longer returns an error when source and destination names are the same."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("newkey", "key", key_spec_index=1),
            )),
        cmd("restore", -4, "write denyoom",
            acl_categories="keyspace dangerous",
            key_specs=(ks("OW UPDATE", index=1, range=(0, 1, 0)),),
            docs=("2.6.0", "Creates a key from the serialized representation of a value."),
            complexity="O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where N is the number of Redis objects composing the value and M their average size. For small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting values into sorted sets is O(log(N)).",
            history=(
                ("3.0.0", "Added the `REPLACE` modifier."),
                ("5.0.0", "Added the `ABSTTL` modifier."),
                ("5.0.0", "Added the `IDLETIME` and `FREQ` options."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("ttl", "integer"),
                arg("serialized-value", "string"),
                arg("replace", "pure-token", token="REPLACE", since="3.0.0", optional=True),
                arg("absttl", "pure-token", token="ABSTTL", since="5.0.0", optional=True),
                arg("seconds", "integer", token="IDLETIME", since="5.0.0", optional=True),
                arg("frequency", "integer", token="FREQ", since="5.0.0", optional=True),
            )),
        cmd("scan", -2, "readonly",
            acl_categories="keyspace",
            tips="nondeterministic_output request_policy:special",
            docs=("2.8.0", "Iterates over the key names in the database."),
            complexity="O(1) for every call. O(N) for a complete iteration, including enough command calls for the cursor to return back to 0. N is the number of elements inside the collection.",
            history=(
                ("6.0.0", "Added the `TYPE` subcommand."),
            ),
            arguments=(
                arg("cursor", "integer"),
                arg("pattern", "pattern", token="MATCH", optional=True),
                arg("count", "integer", token="COUNT", optional=True),
                arg("type", "string", token="TYPE", since="6.0.0", optional=True),
            )),
        cmd("sort", -2, "write denyoom", find_keys=sort_keys,
            acl_categories="set sortedset list dangerous",
            key_specs=(
                ks("RO ACCESS", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", notes="For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"),
                ks("OW UPDATE", notes="For the optional STORE keyword. It is marked 'unknown' because the keyword can appear anywhere in the argument array"),
            ),
            docs=("1.0.0", "Sorts the elements in a list, a set, or a sorted set, optionally storing the result."),
            complexity="O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("pattern", "pattern", key_spec_index=1, token="BY", optional=True),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
                arg("pattern", "pattern", key_spec_index=1, token="GET", optional=True, multiple=True, multiple_token=True),
                arg("order", "oneof", optional=True, arguments=(
                    arg("asc", "pure-token", token="ASC"),
                    arg("desc", "pure-token", token="DESC"),
                )),
                arg("sorting", "pure-token", token="ALPHA", optional=True),
                arg("destination", "key", key_spec_index=2, token="STORE", optional=True),
            )),
        cmd("sort_ro", -2, "readonly", find_keys=lambda argv: argv[1:2],
            acl_categories="set sortedset list dangerous",
            key_specs=(
                ks("RO ACCESS", index=1, range=(0, 1, 0)),
                ks("RO ACCESS", notes="For the optional BY/GET keyword. It is marked 'unknown' because the key names derive from the content of the key we sort"),
            ),
            docs=("7.0.0", "Returns the sorted elements of a list, a set, or a sorted set."),
            complexity="O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M the number of returned elements. When the elements are not sorted, complexity is O(N).",
            arguments=(
                arg("key", "key", key_spec_index=0),
                arg("pattern", "pattern", key_spec_index=1, token="BY", optional=True),
                arg("offset_count", "block", token="LIMIT", optional=True, arguments=(
                    arg("offset", "integer"),
                    arg("count", "integer"),
                )),
                arg("pattern", "pattern", key_spec_index=1, token="GET", optional=True, multiple=True, multiple_token=True),
                arg("order", "oneof", optional=True, arguments=(
                    arg("asc", "pure-token", token="ASC"),
                    arg("desc", "pure-token", token="DESC"),
                )),
                arg("sorting", "pure-token", token="ALPHA", optional=True),
            )),
        cmd("touch", -2, "readonly fast",
            acl_categories="keyspace",
            tips="request_policy:multi_shard response_policy:agg_sum",
            key_specs=(ks("RO", index=1, range=(-1, 1, 0)),),
            docs=("3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed."),
            complexity="O(N) where N is the number of keys that will be touched.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("ttl", 2, "readonly fast",
            acl_categories="keyspace",
            tips="nondeterministic_output",
            key_specs=(ks("RO ACCESS", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Returns the expiration time in seconds of a key."),
            complexity="O(1)",
            history=(
                ("2.8.0", "Added the -2 reply."),
            ),
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("type", 2, "readonly fast",
            acl_categories="keyspace",
            key_specs=(ks("RO", index=1, range=(0, 1, 0)),),
            docs=("1.0.0", "Determines the type of value stored at a key."),
            complexity="O(1)",
            arguments=(
                arg("key", "key", key_spec_index=0),
            )),
        cmd("unlink", -2, "write fast",
            acl_categories="keyspace",
            tips="request_policy:multi_shard response_policy:agg_sum",
            key_specs=(ks("RM DELETE", index=1, range=(-1, 1, 0)),),
            docs=("4.0.0", "Asynchronously deletes one or more keys."),
            complexity="O(1) for each key removed regardless of its size. Then the command does O(N) work in a different thread in order to reclaim memory, where N is the number of allocations the deleted objects where composed of.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            )),
        cmd("waitaof", 4, "blocking",
            acl_categories="connection",
            tips="request_policy:all_shards response_policy:agg_min",
            docs=("7.2.0", "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas."),
            complexity="O(1)",
            arguments=(
                arg("numlocal", "integer"),
                arg("numreplicas", "integer"),
                arg("timeout", "integer"),
            ))),
    family("connection",
        cmd("auth", -2, "noscript loading stale fast no_auth allow_busy", layer="session",
            acl_categories="connection",
            docs=("1.0.0", "Authenticates the connection."),
            complexity="O(N) where N is the number of passwords defined for the user",
            history=(
                ("6.0.0", "Added ACL style (username and password)."),
            ),
            arguments=(
                arg("username", "string", since="6.0.0", optional=True),
                arg("password", "string"),
            )),
        cmd("client", -2, layer="session", sub_methods=True,
            docs=("2.4.0", "A container for client connection commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("id", 2, "noscript loading stale",
                    acl_categories="connection",
                    docs=("5.0.0", "Returns the unique client ID of the connection."),
                    complexity="O(1)"),
                cmd("setname", 3, "noscript loading stale",
                    acl_categories="connection",
                    docs=("2.6.9", "Sets the connection name."),
                    complexity="O(1)",
                    arguments=(
                        arg("connection-name", "string"),
                    )),
                cmd("getname", 2, "noscript loading stale",
                    acl_categories="connection",
                    docs=("2.6.9", "Returns the name of the connection."),
                    complexity="O(1)"),
                cmd("setinfo", 4, "noscript loading stale sentinel",
                    acl_categories="connection",
                    docs=("7.2.0", "Sets information specific to the client or connection."),
                    complexity="O(1)",
                    arguments=(
                        arg("attr", "oneof", arguments=(
                            arg("libname", "string", token="lib-name"),
                            arg("libver", "string", token="lib-ver"),
                            arg("libinstancename", "string", token="lib-instance-name"),
                        )),
                    )),
                cmd("info", 2, "noscript loading stale",
                    acl_categories="connection",
                    tips="nondeterministic_output",
                    docs=("6.2.0", "Returns information about the connection."),
                    complexity="O(1)"),
                cmd("no-evict", 3, "admin noscript loading stale",
                    acl_categories="connection",
                    docs=("7.0.0", "Sets the client eviction mode of the connection."),
                    complexity="O(1)",
                    arguments=(
                        arg("enabled", "oneof", arguments=(
                            arg("on", "pure-token", token="ON"),
                            arg("off", "pure-token", token="OFF"),
                        )),
                    )),
                cmd("no-touch", 3, "noscript loading stale",
                    acl_categories="connection",
                    docs=("7.2.0", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys."),
                    complexity="O(1)",
                    arguments=(
                        arg("enabled", "oneof", arguments=(
                            arg("on", "pure-token", token="ON"),
                            arg("off", "pure-token", token="OFF"),
                        )),
                    )),
                cmd("help", 2, "loading stale",
                    acl_categories="connection",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)"),
                cmd("list", -2, "admin noscript loading stale", layer="server",
                    acl_categories="connection",
                    tips="nondeterministic_output",
                    docs=("2.4.0", "Lists open connections."),
                    complexity="O(N) where N is the number of client connections",
                    history=(
                        ("2.8.12", "Added unique client `id` field."),
                        ("5.0.0", "Added optional `TYPE` filter."),
                        ("6.0.0", "Added `user` field."),
                        ("6.2.0", "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."),
                        ("7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."),
                        ("7.0.3", "Added `ssub` field."),
                    ),
                    arguments=(
                        arg("normal_master_replica_pubsub", "oneof", token="TYPE", since="5.0.0", optional=True, arguments=(
                            arg("normal", "pure-token", token="NORMAL"),
                            arg("master", "pure-token", token="MASTER"),
                            arg("replica", "pure-token", token="REPLICA"),
                            arg("pubsub", "pure-token", token="PUBSUB"),
                        )),
                        arg("id", "block", token="ID", since="6.2.0", optional=True, arguments=(
                            arg("client-id", "integer", multiple=True),
                        )),
                    )),
                cmd("kill", -3, "admin noscript loading stale", layer="server",
                    acl_categories="connection",
                    docs=("2.4.0", "Terminates open connections."),
                    complexity="O(N) where N is the number of client connections",
                    history=(
                        ("2.8.12", "Added new filter format."),
                        ("2.8.12", "`ID` option."),
                        ("3.2.0", "Added `master` type in for `TYPE` option."),
                        ("5.0.0", "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."),
                        ("6.2.0", "`LADDR` option."),
                    ),
                    arguments=(
                        arg("filter", "oneof", arguments=(
                            arg("ip:port", "string", deprecated_since="2.8.12"),
                            arg("new-format", "oneof", multiple=True, arguments=(
                                arg("client-id", "integer", token="ID", since="2.8.12", optional=True),
                                arg("normal_master_slave_pubsub", "oneof", token="TYPE", since="2.8.12", optional=True, arguments=(
                                    arg("normal", "pure-token", token="NORMAL"),
                                    arg("master", "pure-token", token="MASTER", since="3.2.0"),
                                    arg("slave", "pure-token", token="SLAVE"),
                                    arg("replica", "pure-token", token="REPLICA", since="5.0.0"),
                                    arg("pubsub", "pure-token", token="PUBSUB"),
                                )),
                                arg("username", "string", token="USER", optional=True),
                                arg("ip:port", "string", token="ADDR", optional=True),
                                arg("ip:port", "string", token="LADDR", since="6.2.0", optional=True),
                                arg("yes/no", "string", token="SKIPME", optional=True),
                            )),
                        )),
                    )),
                cmd("unblock", -3, "admin noscript loading stale", layer="server",
                    acl_categories="connection",
                    docs=("5.0.0", "Unblocks a client blocked by a blocking command from a different connection."),
                    complexity="O(log N) where N is the number of client connections",
                    arguments=(
                        arg("client-id", "integer"),
                        arg("timeout_error", "oneof", optional=True, arguments=(
                            arg("timeout", "pure-token", token="TIMEOUT"),
                            arg("error", "pure-token", token="ERROR"),
                        )),
                    ))]),
        cmd("echo", 2, "loading stale fast",
            acl_categories="connection",
            docs=("1.0.0", "Returns the given string."),
            complexity="O(1)",
            arguments=(
                arg("message", "string"),
            )),
        cmd("hello", -1, "noscript loading stale fast no_auth allow_busy", layer="session",
            acl_categories="connection",
            docs=("6.0.0", "Handshakes with the Redis server."),
            complexity="O(1)",
            history=(
                ("6.2.0", "`protover` made optional; when called without arguments the command reports the current connection's context."),
            ),
            arguments=(
                arg("arguments", "block", optional=True, arguments=(
                    arg("protover", "integer"),
                    arg("username_password", "block", token="AUTH", optional=True, arguments=(
                        arg("username", "string"),
                        arg("password", "string"),
                    )),
                    arg("clientname", "string", token="SETNAME", optional=True),
                )),
            )),
        cmd("ping", -1, "fast", layer="session", pubsub_ok=True, denied_on_misconf=True,
            acl_categories="connection",
            tips="request_policy:all_shards response_policy:all_succeeded",
            docs=("1.0.0", "Returns the server's liveliness response."),
            complexity="O(1)",
            arguments=(
                arg("message", "string", optional=True),
            )),
        cmd("quit", -1, "noscript loading stale fast no_auth allow_busy",
            layer="session", pubsub_ok=True, immediate=True,
            acl_categories="connection",
            docs=("1.0.0", "Closes the connection."),
            complexity="O(1)",
            doc_flags="deprecated",
            deprecated_since="7.2.0",
            replaced_by="just closing the connection"),
        cmd("reset", 1, "noscript loading stale fast no_auth allow_busy",
            layer="session", pubsub_ok=True, immediate=True,
            acl_categories="connection",
            docs=("6.2.0", "Resets the connection."),
            complexity="O(1)"),
        cmd("select", 2, "loading stale fast",
            acl_categories="connection",
            docs=("1.0.0", "Changes the selected database."),
            complexity="O(1)",
            arguments=(
                arg("index", "integer"),
            ))),
    family("transactions",
        cmd("discard", 1, "noscript loading stale fast allow_busy", layer="session", immediate=True,
            acl_categories="transaction",
            docs=("2.0.0", "Discards a transaction."),
            complexity="O(N), when N is the number of queued commands"),
        cmd("exec", 1, "noscript loading stale skip_slowlog",
            layer="session", immediate=True, aborts_exec=True,
            acl_categories="transaction",
            docs=("1.2.0", "Executes all commands in a transaction."),
            complexity="Depends on commands in the transaction"),
        cmd("multi", 1, "noscript loading stale fast allow_busy", layer="session", immediate=True,
            acl_categories="transaction",
            docs=("1.2.0", "Starts a transaction."),
            complexity="O(1)"),
        cmd("unwatch", 1, "noscript loading stale fast allow_busy", layer="session",
            acl_categories="transaction",
            docs=("2.2.0", "Forgets about watched keys of a transaction."),
            complexity="O(1)"),
        cmd("watch", -2, "noscript loading stale fast allow_busy", layer="session", immediate=True,
            acl_categories="transaction",
            key_specs=(ks("RO", index=1, range=(-1, 1, 0)),),
            docs=("2.2.0", "Monitors changes to keys to determine the execution of a transaction."),
            complexity="O(1) for every key.",
            arguments=(
                arg("key", "key", key_spec_index=0, multiple=True),
            ))),
    family("pubsub",
        cmd("psubscribe", -2, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Listens for messages published to channels that match one or more patterns."),
            complexity="O(N) where N is the number of patterns the client is already subscribed to.",
            arguments=(
                arg("pattern", "block", multiple=True, arguments=(
                    arg("pattern", "pattern"),
                )),
            )),
        cmd("publish", 3, "pubsub loading stale fast may_replicate", layer="server",
            docs=("2.0.0", "Posts a message to a channel."),
            complexity="O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
            arguments=(
                arg("channel", "string"),
                arg("message", "string"),
            )),
        cmd("pubsub", -2, layer="server",
            docs=("2.8.0", "A container for Pub/Sub commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("channels", -2, "pubsub loading stale",
                    docs=("2.8.0", "Returns the active channels."),
                    complexity="O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
                    arguments=(
                        arg("pattern", "pattern", optional=True),
                    )),
                cmd("numsub", -2, "pubsub loading stale",
                    docs=("2.8.0", "Returns a count of subscribers to channels."),
                    complexity="O(N) for the NUMSUB subcommand, where N is the number of requested channels",
                    arguments=(
                        arg("channel", "string", optional=True, multiple=True),
                    )),
                cmd("numpat", 2, "pubsub loading stale",
                    docs=("2.8.0", "Returns a count of unique pattern subscriptions."),
                    complexity="O(1)"),
                cmd("help", 2, "loading stale",
                    docs=("6.2.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)")]),
        cmd("punsubscribe", -1, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Stops listening to messages published to channels that match one or more patterns."),
            complexity="O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
            arguments=(
                arg("pattern", "pattern", optional=True, multiple=True),
            )),
        cmd("subscribe", -2, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Listens for messages published to channels."),
            complexity="O(N) where N is the number of channels to subscribe to.",
            arguments=(
                arg("channel", "string", multiple=True),
            )),
        cmd("unsubscribe", -1, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Stops listening to messages posted to channels."),
            complexity="O(N) where N is the number of clients already subscribed to a channel.",
            arguments=(
                arg("channel", "string", optional=True, multiple=True),
            ))),
    family("scripting",
        cmd("eval", -3, "noscript stale skip_monitor no_mandatory_keys", layer="session",
            acl_categories="scripting",
            key_specs=(ks("RW ACCESS UPDATE", index=2, keynum=(0, 1, 1), notes="We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"),),
            docs=("2.6.0", "Executes a server-side Lua script."),
            complexity="Depends on the script that is executed.",
            arguments=(
                arg("script", "string"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, optional=True, multiple=True),
                arg("arg", "string", optional=True, multiple=True),
            )),
        cmd("eval_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
            layer="session",
            acl_categories="scripting",
            key_specs=(ks("RO ACCESS", index=2, keynum=(0, 1, 1), notes="We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"),),
            docs=("7.0.0", "Executes a read-only server-side Lua script."),
            complexity="Depends on the script that is executed.",
            arguments=(
                arg("script", "string"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, optional=True, multiple=True),
                arg("arg", "string", optional=True, multiple=True),
            )),
        cmd("evalsha", -3, "noscript stale skip_monitor no_mandatory_keys", layer="session",
            acl_categories="scripting",
            key_specs=(ks("RW ACCESS UPDATE", index=2, keynum=(0, 1, 1)),),
            docs=("2.6.0", "Executes a server-side Lua script by SHA1 digest."),
            complexity="Depends on the script that is executed.",
            arguments=(
                arg("sha1", "string"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, optional=True, multiple=True),
                arg("arg", "string", optional=True, multiple=True),
            )),
        cmd("evalsha_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
            layer="session",
            acl_categories="scripting",
            key_specs=(ks("RO ACCESS", index=2, keynum=(0, 1, 1)),),
            docs=("7.0.0", "Executes a read-only server-side Lua script by SHA1 digest."),
            complexity="Depends on the script that is executed.",
            arguments=(
                arg("sha1", "string"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, optional=True, multiple=True),
                arg("arg", "string", optional=True, multiple=True),
            )),
        cmd("fcall", -3, "noscript stale skip_monitor no_mandatory_keys", layer="session",
            acl_categories="scripting",
            key_specs=(ks("RW ACCESS UPDATE", index=2, keynum=(0, 1, 1), notes="We cannot tell how the keys will be used so we assume the worst, RW and UPDATE"),),
            docs=("7.0.0", "Invoke a function"),
            complexity="Depends on the function that is executed.",
            arguments=(
                arg("function", "string"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, optional=True, multiple=True),
                arg("arg", "string", optional=True, multiple=True),
            )),
        cmd("fcall_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
            layer="session",
            acl_categories="scripting",
            key_specs=(ks("RO ACCESS", index=2, keynum=(0, 1, 1), notes="We cannot tell how the keys will be used so we assume the worst, RO and ACCESS"),),
            docs=("7.0.0", "Invoke a read-only function"),
            complexity="Depends on the function that is executed.",
            arguments=(
                arg("function", "string"),
                arg("numkeys", "integer"),
                arg("key", "key", key_spec_index=0, optional=True, multiple=True),
                arg("arg", "string", optional=True, multiple=True),
            )),
        cmd("function", -2,
            docs=("7.0.0", "A container for function commands"),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("delete", 3, "write noscript",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:all_succeeded",
                    docs=("7.0.0", "Delete a function by name"),
                    complexity="O(1)",
                    arguments=(
                        arg("library-name", "string"),
                    )),
                cmd("dump", 2, "noscript",
                    acl_categories="scripting",
                    docs=("7.0.0", "Dump all functions into a serialized binary payload"),
                    complexity="O(N) where N is the number of functions"),
                cmd("flush", -2, "write noscript",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:all_succeeded",
                    docs=("7.0.0", "Deleting all functions"),
                    complexity="O(N) where N is the number of functions deleted",
                    arguments=(
                        arg("async", "oneof", optional=True, arguments=(
                            arg("async", "pure-token", token="ASYNC"),
                            arg("sync", "pure-token", token="SYNC"),
                        )),
                    )),
                cmd("help", 2, "loading stale",
                    acl_categories="scripting",
                    docs=("7.0.0", "Show helpful text about the different subcommands"),
                    complexity="O(1)"),
                cmd("kill", 2, "noscript allow_busy",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:one_succeeded",
                    docs=("7.0.0", "Kill the function currently in execution."),
                    complexity="O(1)"),
                cmd("list", -2, "noscript",
                    acl_categories="scripting",
                    tips="nondeterministic_output_order",
                    docs=("7.0.0", "List information about all the functions"),
                    complexity="O(N) where N is the number of functions",
                    arguments=(
                        arg("library-name-pattern", "string", token="LIBRARYNAME", optional=True),
                        arg("withcode", "pure-token", token="WITHCODE", optional=True),
                    )),
                cmd("load", -3, "write denyoom noscript",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:all_succeeded",
                    docs=("7.0.0", "Create a function with the given arguments (name, code, description)"),
                    complexity="O(1) (considering compilation time is redundant)",
                    arguments=(
                        arg("replace", "pure-token", token="REPLACE", optional=True),
                        arg("function-code", "string"),
                    )),
                cmd("restore", -3, "write denyoom noscript",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:all_succeeded",
                    docs=("7.0.0", "Restore all the functions on the given payload"),
                    complexity="O(N) where N is the number of functions on the payload",
                    arguments=(
                        arg("serialized-value", "string"),
                        arg("policy", "oneof", optional=True, arguments=(
                            arg("flush", "pure-token", token="FLUSH"),
                            arg("append", "pure-token", token="APPEND"),
                            arg("replace", "pure-token", token="REPLACE"),
                        )),
                    )),
                cmd("stats", 2, "noscript allow_busy",
                    acl_categories="scripting",
                    tips="nondeterministic_output request_policy:all_shards response_policy:special",
                    docs=("7.0.0", "Return information about the function currently running (name, description, duration)"),
                    complexity="O(1)")]),
        cmd("script", -2, layer="session", sub_methods=True,
            docs=("2.6.0", "A container for Lua scripts management commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("exists", -3, "noscript",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:agg_logical_and",
                    docs=("2.6.0", "Determines whether server-side Lua scripts exist in the script cache."),
                    complexity="O(N) with N being the number of scripts to check (so checking a single script is an O(1) operation).",
                    arguments=(
                        arg("sha1", "string", multiple=True),
                    )),
                cmd("flush", -2, "noscript",
                    acl_categories="scripting",
                    tips="request_policy:all_nodes response_policy:all_succeeded",
                    docs=("2.6.0", "Removes all server-side Lua scripts from the script cache."),
                    complexity="O(N) with N being the number of scripts in cache",
                    history=(
                        ("6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers."),
                    ),
                    arguments=(
                        arg("async", "oneof", since="6.2.0", optional=True, arguments=(
                            arg("async", "pure-token", token="ASYNC"),
                            arg("sync", "pure-token", token="SYNC"),
                        )),
                    )),
                cmd("help", 2, "loading stale",
                    acl_categories="scripting",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)"),
                cmd("kill", 2, "noscript allow_busy",
                    acl_categories="scripting",
                    tips="request_policy:all_shards response_policy:one_succeeded",
                    docs=("2.6.0", "Terminates a server-side Lua script during execution."),
                    complexity="O(1)"),
                cmd("load", 3, "noscript stale",
                    acl_categories="scripting",
                    tips="request_policy:all_nodes response_policy:all_succeeded",
                    docs=("2.6.0", "Loads a server-side Lua script to the script cache."),
                    complexity="O(N) with N being the length in bytes of the script body.",
                    arguments=(
                        arg("script", "string"),
                    ))])),
    family("server",
        cmd("bgrewriteaof", 1, "admin noscript no_async_loading",
            docs=("1.0.0", "Asynchronously rewrites the append-only file to disk."),
            complexity="O(1)"),
        cmd("bgsave", -1, "admin noscript no_async_loading",
            docs=("1.0.0", "Asynchronously saves the database(s) to disk."),
            complexity="O(1)",
            history=(
                ("3.2.2", "Added the `SCHEDULE` option."),
            ),
            arguments=(
                arg("schedule", "pure-token", token="SCHEDULE", since="3.2.2", optional=True),
            )),
        cmd("command", -1, "loading stale", layer="server", base_ok=True,
            acl_categories="connection",
            tips="nondeterministic_output_order",
            docs=("2.8.13", "Returns detailed information about all commands."),
            complexity="O(N) where N is the total number of Redis commands",
            subcommands=[
                cmd("count", 2, "loading stale",
                    acl_categories="connection",
                    docs=("2.8.13", "Returns a count of commands."),
                    complexity="O(1)"),
                cmd("info", -2, "loading stale",
                    acl_categories="connection",
                    tips="nondeterministic_output_order",
                    docs=("2.8.13", "Returns information about one, multiple or all commands."),
                    complexity="O(N) where N is the number of commands to look up",
                    history=(
                        ("7.0.0", "Allowed to be called with no argument to get info on all commands."),
                    ),
                    arguments=(
                        arg("command-name", "string", optional=True, multiple=True),
                    )),
                cmd("docs", -2, "loading stale",
                    acl_categories="connection",
                    tips="nondeterministic_output_order",
                    docs=("7.0.0", "Returns documentary information about one, multiple or all commands."),
                    complexity="O(N) where N is the number of commands to look up",
                    arguments=(
                        arg("command-name", "string", optional=True, multiple=True),
                    )),
                cmd("list", -2, "loading stale",
                    acl_categories="connection",
                    tips="nondeterministic_output_order",
                    docs=("7.0.0", "Returns a list of command names."),
                    complexity="O(N) where N is the total number of Redis commands",
                    arguments=(
                        arg("filterby", "oneof", token="FILTERBY", optional=True, arguments=(
                            arg("module-name", "string", token="MODULE"),
                            arg("category", "string", token="ACLCAT"),
                            arg("pattern", "pattern", token="PATTERN"),
                        )),
                    )),
                cmd("getkeys", -4, "loading stale",
                    acl_categories="connection",
                    docs=("2.8.13", "Extracts the key names from an arbitrary command."),
                    complexity="O(N) where N is the number of arguments to the command"),
                cmd("getkeysandflags", -4, "loading stale",
                    acl_categories="connection",
                    docs=("7.0.0", "Extracts the key names and access flags for an arbitrary command."),
                    complexity="O(N) where N is the number of arguments to the command"),
                cmd("help", 2, "loading stale",
                    acl_categories="connection",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)")]),
        cmd("config", -2, layer="server",
            docs=("2.0.0", "A container for server configuration commands."),
            complexity="Depends on subcommand.",
            subcommands=[
                cmd("get", -3, "admin noscript loading stale",
                    docs=("2.0.0", "Returns the effective values of configuration parameters."),
                    complexity="O(N) when N is the number of configuration parameters provided",
                    history=(
                        ("7.0.0", "Added the ability to pass multiple pattern parameters in one call"),
                    ),
                    arguments=(
                        arg("parameter", "block", multiple=True, arguments=(
                            arg("parameter", "string"),
                        )),
                    )),
                cmd("set", -4, "admin noscript loading stale",
                    tips="request_policy:all_nodes response_policy:all_succeeded",
                    docs=("2.0.0", "Sets configuration parameters in-flight."),
                    complexity="O(N) when N is the number of configuration parameters provided",
                    history=(
                        ("7.0.0", "Added the ability to set multiple parameters in one call."),
                    ),
                    arguments=(
                        arg("parameter_value", "block", multiple=True, arguments=(
                            arg("parameter", "string"),
                            arg("value", "string"),
                        )),
                    )),
                cmd("resetstat", 2, "admin noscript loading stale",
                    docs=("2.0.0", "Resets the server's statistics."),
                    complexity="O(1)"),
                cmd("rewrite", 2, "admin noscript loading stale",
                    docs=("2.8.0", "Persists the effective configuration to file."),
                    complexity="O(1)"),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."),
                    complexity="O(1)")]),
        cmd("dbsize", 1, "readonly fast",
            acl_categories="keyspace",
            tips="request_policy:all_shards response_policy:agg_sum",
            docs=("1.0.0", "Returns the number of keys in the database."),
            complexity="O(1)"),
        cmd("flushall", -1, "write", layer="session",
            acl_categories="keyspace dangerous",
            tips="request_policy:all_shards response_policy:all_succeeded",
            docs=("1.0.0", "Removes all keys from all databases."),
            complexity="O(N) where N is the total number of keys in all databases",
            history=(
                ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
                ("6.2.0", "Added the `SYNC` flushing mode modifier."),
            ),
            arguments=(
                arg("async", "oneof", optional=True, arguments=(
                    arg("async", "pure-token", token="ASYNC", since="4.0.0"),
                    arg("sync", "pure-token", token="SYNC", since="6.2.0"),
                )),
            )),
        cmd("flushdb", -1, "write",
            acl_categories="keyspace dangerous",
            tips="request_policy:all_shards response_policy:all_succeeded",
            docs=("1.0.0", "Remove all keys from the current database."),
            complexity="O(N) where N is the number of keys in the selected database",
            history=(
                ("4.0.0", "Added the `ASYNC` flushing mode modifier."),
                ("6.2.0", "Added the `SYNC` flushing mode modifier."),
            ),
            arguments=(
                arg("async", "oneof", optional=True, arguments=(
                    arg("async", "pure-token", token="ASYNC", since="4.0.0"),
                    arg("sync", "pure-token", token="SYNC", since="6.2.0"),
                )),
            )),
        cmd("info", -1, "loading stale", layer="server",
            acl_categories="dangerous",
            tips="nondeterministic_output request_policy:all_shards response_policy:special",
            docs=("1.0.0", "Returns information and statistics about the server."),
            complexity="O(1)",
            history=(
                ("7.0.0", "Added support for taking multiple section arguments."),
            ),
            arguments=(
                arg("section", "string", optional=True, multiple=True),
            )),
        cmd("lastsave", 1, "loading stale fast",
            acl_categories="admin dangerous",
            tips="nondeterministic_output",
            docs=("1.0.0", "Returns the Unix timestamp of the last successful save to disk."),
            complexity="O(1)"),
        cmd("save", 1, "admin noscript no_async_loading no_multi",
            docs=("1.0.0", "Synchronously saves the database(s) to disk."),
            complexity="O(N) where N is the total number of keys in all databases"),
        cmd("shutdown", -1, "admin noscript loading stale no_multi allow_busy", layer="server",
            docs=("1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server."),
            complexity="O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)",
            history=(
                ("7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers."),
            ),
            arguments=(
                arg("nosave_save", "oneof", optional=True, arguments=(
                    arg("nosave", "pure-token", token="NOSAVE"),
                    arg("save", "pure-token", token="SAVE"),
                )),
                arg("now", "pure-token", token="NOW", since="7.0.0", optional=True),
                arg("force", "pure-token", token="FORCE", since="7.0.0", optional=True),
                arg("abort", "pure-token", token="ABORT", since="7.0.0", optional=True),
            )),
        cmd("time", 1, "loading stale fast",
            tips="nondeterministic_output",
            docs=("2.6.0", "Returns the server time."),
            complexity="O(1)")),
)
"""Every top-level record by lower-case name."""

ENGINE_COMMANDS: dict[bytes, Command] = {}
"""The records the engine runs (Engine.execute): those with a handler, filled by
@command, by lower- and upper-case name (the common spellings, found without
lower()). Session and server commands are unknown there."""


def command(name: str):
    """Binds the decorated handler(ctx, argv) -> reply to the record `name`
    ("xgroup|create" for a subcommand): the engine then runs it."""
    def bind(handler: Callable) -> Callable:
        top, _, sub = name.partition("|")
        record = container = COMMANDS[top.encode()]
        if sub:
            record = container.subcommands[sub.encode()]
        record.handler = handler
        ENGINE_COMMANDS[top.encode()] = ENGINE_COMMANDS[top.upper().encode()] = container
        return handler
    return bind


def classify(argv: list, spec: Optional[Command] = None) -> tuple:
    """(full command name or None, rejected) for a command that failed (an engine
    command unless its record `spec` is given): rejected = refused by lookup/arity
    before running (Redis's rejected_calls); unknown commands and subcommands have no
    name (no commandstats entry)."""
    if spec is None:
        spec = ENGINE_COMMANDS.get(argv[0].lower())
    if spec is None:
        return None, True
    argc = len(argv)
    if spec.subcommands is not None:
        if argc < 2:
            return spec.name, True
        sub = spec.subcommands.get(argv[1].lower())
        if sub is None:
            return None, True
        spec = sub
    return spec.name, not spec.arity_ok(argc)


def layer_commands(*layers: str) -> dict:
    """The records a session of these layers runs itself (not through the engine),
    containers holding only those subcommands; by lower- and upper-case name (the
    common spellings, found without lower())."""
    out: dict = {}
    for raw, record in COMMANDS.items():
        if record.layer not in layers:
            continue
        if record.subcommands is not None:
            subs = {n: s for n, s in record.subcommands.items() if s.layer in layers}
            record = _with_subcommands(record, subs)
        out[raw] = out[raw.upper()] = record
    return out


def _with_subcommands(record: Command, subcommands: dict) -> Command:
    if subcommands.keys() == record.subcommands.keys():
        return record
    return replace(record, subcommands=subcommands)
