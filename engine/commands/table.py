"""The command table: every command and subcommand Sluice knows, one record each, as
Redis's src/commands/*.json are - in this one module, so that a reader (and COMMAND,
the session, the server's fast path, WATCH, tools/aof_cli.py) finds all of them in
one place.

A record says: name, arity, flags, key positions, ACL categories, docs (group, since,
summary for COMMAND DOCS), subcommands, and which layer runs it:
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
negative = at least that many. Key positions (first, last, step) are those of
Redis's command files (last -1 = the last argument); `keyword` marks keys that
follow a keyword (XREAD's STREAMS: movablekeys); `numkeys` the position of a key
count that the keys follow (EVAL's: movablekeys); `find_keys` a function that reads
them from the arguments where options name keys (SORT's STORE: movablekeys).

Flags are Redis's, as COMMAND INFO prints them. Our own rules beyond them are fields:
`pubsub_ok` (allowed in a RESP2 subscribed context), `immediate` (runs at once inside
MULTI instead of being queued), `aborts_exec` (a refusal aborts the transaction with
the reason: EXEC), `denied_on_misconf` (refused while persistence fails: every write,
and PING so that health checks notice). `no_auth`, `no_multi`, `allow_busy` and `write`
come from the flags of the same names.
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

_GROUP_CATEGORY = {"stream": "@stream", "string": "@string", "generic": "@keyspace",
                   "list": "@list", "hash": "@hash", "set": "@set",
                   "sorted-set": "@sortedset",
                   "connection": "@connection", "server": "@admin",
                   "transactions": "@transaction", "pubsub": "@pubsub",
                   "scripting": "@scripting"}
_DANGEROUS = ("flushall", "flushdb", "keys")
# Redis's order of ACL categories (acl.c), as COMMAND INFO lists them.
CATEGORY_ORDER = ("@keyspace", "@read", "@write", "@set", "@sortedset", "@list", "@hash",
                  "@string", "@bitmap", "@hyperloglog", "@geo", "@stream", "@pubsub",
                  "@admin", "@fast", "@slow", "@blocking", "@dangerous", "@connection",
                  "@transaction", "@scripting")
LAYERS = ("engine", "session", "server")


@dataclass(slots=True, eq=False)
class Command:
    """One command or subcommand (see the module docstring)."""

    name: str                           # full name: "xgroup|create"
    arity: int
    flags: tuple                        # Redis's flags, in FLAG_ORDER
    first_key: int
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
    acl_categories: tuple = ()
    numkeys: int = 0                    # the key count's position (EVAL: 2); 0: none
    find_keys: Optional[Callable] = None  # argv -> its keys, when options name keys (SORT)
    category: Optional[str] = None      # its ACL category, when not its group's (WAITAOF)

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


def cmd(name: str, arity: int, flags: str = "", *, docs: tuple, keys: tuple = (0, 0, 0),
        keyword: Optional[str] = None, layer: Optional[str] = None,
        subcommands: Optional[list] = None, base_ok: bool = False, pubsub_ok: bool = False,
        immediate: bool = False, aborts_exec: bool = False,
        denied_on_misconf: Optional[bool] = None, sub_methods: bool = False,
        numkeys: int = 0, find_keys: Optional[Callable] = None,
        category: Optional[str] = None) -> Command:
    """A record; `docs` = (since, summary). Its group and full name come from family().
    sub_methods: each subcommand has its own method, `<container>_<subcommand>`
    (CLIENT); otherwise they share the container's. category: Redis's ACL category
    when it is not the one of the docs group (WAITAOF: generic, but @connection)."""
    ranked = tuple(sorted(flags.split(), key=lambda f: _FLAG_RANK.get(f, 99)))
    write = "write" in ranked
    subs = None if subcommands is None else {sub.name.encode(): sub for sub in subcommands}
    for sub in subcommands if sub_methods else ():
        sub.method = f"{name}_{sub.name.replace('-', '_')}"
    return Command(name, arity, ranked, *keys, keyword, *docs, layer, subs, base_ok,
                   pubsub_ok, immediate, aborts_exec,
                   write if denied_on_misconf is None else denied_on_misconf,
                   write=write, no_auth="no_auth" in ranked, no_multi="no_multi" in ranked,
                   allow_busy="allow_busy" in ranked, numkeys=numkeys, find_keys=find_keys,
                   category=category)


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
    record.acl_categories = _acl_categories(record)
    for sub in (record.subcommands or {}).values():
        _complete(sub, group, record)


def _acl_categories(record: Command) -> tuple:
    if record.subcommands:
        return ("@slow",)          # a container: its subcommands have categories
    flags = record.flags
    cats = []
    if "write" in flags:
        cats.append("@write")
    elif "readonly" in flags:
        cats.append("@read")
    cats.append(record.category or _GROUP_CATEGORY.get(record.group, "@slow"))
    cats.append("@fast" if "fast" in flags else "@slow")
    if "blocking" in flags:
        cats.append("@blocking")
    if record.name in _DANGEROUS:
        cats.append("@dangerous")
    return tuple(sorted(cats, key=CATEGORY_ORDER.index))


def _index(*families: list) -> dict:
    return {record.name.encode(): record for records in families for record in records}


COMMANDS: dict[bytes, Command] = _index(
    family("stream",
        cmd("xack", -4, "write fast", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.")),
        cmd("xackdel", -6, "write fast", keys=(1, 1, 1),
            docs=("8.2.0", "Acknowledges and deletes one or multiple messages for a stream consumer group.")),
        cmd("xadd", -5, "write denyoom fast", keys=(1, 1, 1),
            docs=("5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist.")),
        cmd("xautoclaim", -6, "write fast", keys=(1, 1, 1),
            docs=("6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.")),
        cmd("xcfgset", -2, "write fast", keys=(1, 1, 1),
            docs=("8.6.0", "Sets the IDMP configuration parameters for a stream.")),
        cmd("xclaim", -6, "write fast", keys=(1, 1, 1),
            docs=("5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.")),
        cmd("xdel", -3, "write fast", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the number of messages after removing them from a stream.")),
        cmd("xdelex", -5, "write fast", keys=(1, 1, 1),
            docs=("8.2.0", "Deletes one or multiple entries from the stream.")),
        cmd("xgroup", -2, "",
            docs=("5.0.0", "A container for consumer groups commands."),
            subcommands=[
                cmd("create", -5, "write denyoom", keys=(2, 2, 1),
                    docs=("5.0.0", "Creates a consumer group.")),
                cmd("setid", -5, "write", keys=(2, 2, 1),
                    docs=("5.0.0", "Sets the last-delivered ID of a consumer group.")),
                cmd("destroy", 4, "write", keys=(2, 2, 1),
                    docs=("5.0.0", "Destroys a consumer group.")),
                cmd("createconsumer", 5, "write denyoom", keys=(2, 2, 1),
                    docs=("6.2.0", "Creates a consumer in a consumer group.")),
                cmd("delconsumer", 5, "write", keys=(2, 2, 1),
                    docs=("5.0.0", "Deletes a consumer from a consumer group.")),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."))]),
        cmd("xidmprecord", 5, "write denyoom fast", keys=(1, 1, 1),
            docs=("8.8.0", "An internal command for setting IDMP metadata on an existing stream message.")),
        cmd("xinfo", -2, "",
            docs=("5.0.0", "A container for stream introspection commands."),
            subcommands=[
                cmd("consumers", 4, "readonly", keys=(2, 2, 1),
                    docs=("5.0.0", "Returns a list of the consumers in a consumer group.")),
                cmd("groups", 3, "readonly", keys=(2, 2, 1),
                    docs=("5.0.0", "Returns a list of the consumer groups of a stream.")),
                cmd("stream", -3, "readonly", keys=(2, 2, 1),
                    docs=("5.0.0", "Returns information about a stream.")),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."))]),
        cmd("xlen", 2, "readonly fast", keys=(1, 1, 1),
            docs=("5.0.0", "Return the number of messages in a stream.")),
        cmd("xnack", -7, "write fast", keys=(1, 1, 1),
            docs=("8.8.0", "Releases pending messages back to the group's PEL without acknowledging them, making them available for re-delivery.")),
        cmd("xpending", -3, "readonly", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the information and entries from a stream consumer group's pending entries list.")),
        cmd("xrange", -4, "readonly", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the messages from a stream within a range of IDs.")),
        cmd("xread", -4, "readonly blocking", keyword="STREAMS",
            docs=("5.0.0", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.")),
        cmd("xreadgroup", -7, "write blocking", keyword="STREAMS",
            docs=("5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.")),
        cmd("xrevrange", -4, "readonly", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the messages from a stream within a range of IDs in reverse order.")),
        cmd("xsetid", -3, "write denyoom fast", keys=(1, 1, 1),
            docs=("5.0.0", "An internal command for replicating stream values.")),
        cmd("xtrim", -4, "write", keys=(1, 1, 1),
            docs=("5.0.0", "Deletes messages from the beginning of a stream."))),
    family("string",
        cmd("append", 3, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist.")),
        cmd("decr", 2, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.")),
        cmd("decrby", 3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist.")),
        cmd("get", 2, "readonly fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns the string value of a key.")),
        cmd("getdel", 2, "write fast", keys=(1, 1, 1),
            docs=("6.2.0", "Returns the string value of a key after deleting the key.")),
        cmd("getex", -2, "write fast", keys=(1, 1, 1),
            docs=("6.2.0", "Returns the string value of a key after setting its expiration time.")),
        cmd("getrange", 4, "readonly", keys=(1, 1, 1),
            docs=("2.4.0", "Returns a substring of the string stored at a key.")),
        cmd("getset", 3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns the previous string value of a key after setting it to a new value.")),
        cmd("incr", 2, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist.")),
        cmd("incrby", 3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist.")),
        cmd("incrbyfloat", 3, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.6.0", "Increment the floating point value of a key by a number. Uses 0 as initial value if the key doesn't exist.")),
        cmd("lcs", -3, "readonly", keys=(1, 2, 1),
            docs=("7.0.0", "Finds the longest common substring.")),
        cmd("mget", -2, "readonly fast", keys=(1, -1, 1),
            docs=("1.0.0", "Atomically returns the string values of one or more keys.")),
        cmd("mset", -3, "write denyoom", keys=(1, -1, 2),
            docs=("1.0.1", "Atomically creates or modifies the string values of one or more keys.")),
        cmd("msetnx", -3, "write denyoom", keys=(1, -1, 2),
            docs=("1.0.1", "Atomically modifies the string values of one or more keys only when all keys don't exist.")),
        cmd("psetex", 4, "write denyoom", keys=(1, 1, 1),
            docs=("2.6.0", "Sets both string value and expiration time in milliseconds of a key. The key is created if it doesn't exist.")),
        cmd("set", -3, "write denyoom", keys=(1, 1, 1),
            docs=("1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist.")),
        cmd("setex", 4, "write denyoom", keys=(1, 1, 1),
            docs=("2.0.0", "Sets the string value and expiration time of a key. Creates the key if it doesn't exist.")),
        cmd("setnx", 3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Set the string value of a key only when the key doesn't exist.")),
        cmd("setrange", 4, "write denyoom", keys=(1, 1, 1),
            docs=("2.2.0", "Overwrites a part of a string value with another by an offset. Creates the key if it doesn't exist.")),
        cmd("strlen", 2, "readonly fast", keys=(1, 1, 1),
            docs=("2.2.0", "Returns the length of a string value.")),
        cmd("substr", 4, "readonly", keys=(1, 1, 1),
            docs=("1.0.0", "Returns a substring from string value."))),
    family("list",
        cmd("blmove", 6, "write denyoom blocking", keys=(1, 2, 1),
            docs=("6.2.0", "Pops an element from a list, pushes it to another list and returns it. Blocks until an element is available otherwise. Deletes the list if the last element was moved.")),
        cmd("blmpop", -5, "write blocking", numkeys=2,
            docs=("7.0.0", "Pops the first element from one of multiple lists. Blocks until an element is available otherwise. Deletes the list if the last element was popped.")),
        cmd("blpop", -3, "write blocking", keys=(1, -2, 1),
            docs=("2.0.0", "Removes and returns the first element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.")),
        cmd("brpop", -3, "write blocking", keys=(1, -2, 1),
            docs=("2.0.0", "Removes and returns the last element in a list. Blocks until an element is available otherwise. Deletes the list if the last element was popped.")),
        cmd("brpoplpush", 4, "write denyoom blocking", keys=(1, 2, 1),
            docs=("2.2.0", "Pops an element from a list, pushes it to another list and returns it. Block until an element is available otherwise. Deletes the list if the last element was popped.")),
        cmd("lindex", 3, "readonly", keys=(1, 1, 1),
            docs=("1.0.0", "Returns an element from a list by its index.")),
        cmd("linsert", 5, "write denyoom", keys=(1, 1, 1),
            docs=("2.2.0", "Inserts an element before or after another element in a list.")),
        cmd("llen", 2, "readonly fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns the length of a list.")),
        cmd("lmove", 5, "write denyoom", keys=(1, 2, 1),
            docs=("6.2.0", "Returns an element after popping it from one list and pushing it to another. Deletes the list if the last element was moved.")),
        cmd("lmpop", -4, "write", numkeys=1,
            docs=("7.0.0", "Returns multiple elements from a list after removing them. Deletes the list if the last element was popped.")),
        cmd("lpop", -2, "write fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns the first elements in a list after removing it. Deletes the list if the last element was popped.")),
        cmd("lpos", -3, "readonly", keys=(1, 1, 1),
            docs=("6.0.6", "Returns the index of matching elements in a list.")),
        cmd("lpush", -3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Prepends one or more elements to a list. Creates the key if it doesn't exist.")),
        cmd("lpushx", -3, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.2.0", "Prepends one or more elements to a list only when the list exists.")),
        cmd("lrange", 4, "readonly", keys=(1, 1, 1),
            docs=("1.0.0", "Returns a range of elements from a list.")),
        cmd("lrem", 4, "write", keys=(1, 1, 1),
            docs=("1.0.0", "Removes elements from a list. Deletes the list if the last element was removed.")),
        cmd("lset", 4, "write denyoom", keys=(1, 1, 1),
            docs=("1.0.0", "Sets the value of an element in a list by its index.")),
        cmd("ltrim", 4, "write", keys=(1, 1, 1),
            docs=("1.0.0", "Removes elements from both ends a list. Deletes the list if all elements were trimmed.")),
        cmd("rpop", -2, "write fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns and removes the last elements of a list. Deletes the list if the last element was popped.")),
        cmd("rpoplpush", 3, "write denyoom", keys=(1, 2, 1),
            docs=("1.2.0", "Returns the last element of a list after removing and pushing it to another list. Deletes the list if the last element was popped.")),
        cmd("rpush", -3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Appends one or more elements to a list. Creates the key if it doesn't exist.")),
        cmd("rpushx", -3, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.2.0", "Appends an element to a list only when the list exists."))),
    family("hash",
        cmd("hdel", -3, "write fast", keys=(1, 1, 1),
            docs=("2.0.0", "Deletes one or more fields and their values from a hash. Deletes the hash if no fields remain.")),
        cmd("hexists", 3, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Determines whether a field exists in a hash.")),
        cmd("hget", 3, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Returns the value of a field in a hash.")),
        cmd("hgetall", 2, "readonly", keys=(1, 1, 1),
            docs=("2.0.0", "Returns all fields and values in a hash.")),
        cmd("hincrby", 4, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.0.0", "Increments the integer value of a field in a hash by a number. Uses 0 as initial value if the field doesn't exist.")),
        cmd("hincrbyfloat", 4, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.6.0", "Increments the floating point value of a field by a number. Uses 0 as initial value if the field doesn't exist.")),
        cmd("hkeys", 2, "readonly", keys=(1, 1, 1),
            docs=("2.0.0", "Returns all fields in a hash.")),
        cmd("hlen", 2, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Returns the number of fields in a hash.")),
        cmd("hmget", -3, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Returns the values of all fields in a hash.")),
        cmd("hmset", -4, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.0.0", "Sets the values of multiple fields.")),
        cmd("hrandfield", -2, "readonly", keys=(1, 1, 1),
            docs=("6.2.0", "Returns one or more random fields from a hash.")),
        cmd("hscan", -3, "readonly", keys=(1, 1, 1),
            docs=("2.8.0", "Iterates over fields and values of a hash.")),
        cmd("hset", -4, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.0.0", "Creates or modifies the value of a field in a hash.")),
        cmd("hsetnx", 4, "write denyoom fast", keys=(1, 1, 1),
            docs=("2.0.0", "Sets the value of a field in a hash only when the field doesn't exist.")),
        cmd("hstrlen", 3, "readonly fast", keys=(1, 1, 1),
            docs=("3.2.0", "Returns the length of the value of a field.")),
        cmd("hvals", 2, "readonly", keys=(1, 1, 1),
            docs=("2.0.0", "Returns all values in a hash."))),
    family("set",
        cmd("sadd", -3, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.0.0", "Adds one or more members to a set. Creates the key if it doesn't exist.")),
        cmd("scard", 2, "readonly fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns the number of members in a set.")),
        cmd("sdiff", -2, "readonly", keys=(1, -1, 1),
            docs=("1.0.0", "Returns the difference of multiple sets.")),
        cmd("sdiffstore", -3, "write denyoom", keys=(1, -1, 1),
            docs=("1.0.0", "Stores the difference of multiple sets in a key.")),
        cmd("sinter", -2, "readonly", keys=(1, -1, 1),
            docs=("1.0.0", "Returns the intersect of multiple sets.")),
        cmd("sintercard", -3, "readonly", numkeys=1,
            docs=("7.0.0", "Returns the number of members of the intersect of multiple sets.")),
        cmd("sinterstore", -3, "write denyoom", keys=(1, -1, 1),
            docs=("1.0.0", "Stores the intersect of multiple sets in a key.")),
        cmd("sismember", 3, "readonly fast", keys=(1, 1, 1),
            docs=("1.0.0", "Determines whether a member belongs to a set.")),
        cmd("smembers", 2, "readonly", keys=(1, 1, 1),
            docs=("1.0.0", "Returns all members of a set.")),
        cmd("smismember", -3, "readonly fast", keys=(1, 1, 1),
            docs=("6.2.0", "Determines whether multiple members belong to a set.")),
        cmd("smove", 4, "write fast", keys=(1, 2, 1),
            docs=("1.0.0", "Moves a member from one set to another.")),
        cmd("spop", -2, "write fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns one or more random members from a set after removing them. Deletes the set if the last member was popped.")),
        cmd("srandmember", -2, "readonly", keys=(1, 1, 1),
            docs=("1.0.0", "Get one or multiple random members from a set")),
        cmd("srem", -3, "write fast", keys=(1, 1, 1),
            docs=("1.0.0", "Removes one or more members from a set. Deletes the set if the last member was removed.")),
        cmd("sscan", -3, "readonly", keys=(1, 1, 1),
            docs=("2.8.0", "Iterates over members of a set.")),
        cmd("sunion", -2, "readonly", keys=(1, -1, 1),
            docs=("1.0.0", "Returns the union of multiple sets.")),
        cmd("sunionstore", -3, "write denyoom", keys=(1, -1, 1),
            docs=("1.0.0", "Stores the union of multiple sets in a key."))),
    family("sorted-set",
        cmd("bzmpop", -5, "write blocking", numkeys=2,
            docs=("7.0.0", "Removes and returns a member by score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.")),
        cmd("bzpopmax", -3, "write blocking fast", keys=(1, -2, 1),
            docs=("5.0.0", "Removes and returns the member with the highest score from one or more sorted sets. Blocks until a member available otherwise.  Deletes the sorted set if the last element was popped.")),
        cmd("bzpopmin", -3, "write blocking fast", keys=(1, -2, 1),
            docs=("5.0.0", "Removes and returns the member with the lowest score from one or more sorted sets. Blocks until a member is available otherwise. Deletes the sorted set if the last element was popped.")),
        cmd("zadd", -4, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.2.0", "Adds one or more members to a sorted set, or updates their scores. Creates the key if it doesn't exist.")),
        cmd("zcard", 2, "readonly fast", keys=(1, 1, 1),
            docs=("1.2.0", "Returns the number of members in a sorted set.")),
        cmd("zcount", 4, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Returns the count of members in a sorted set that have scores within a range.")),
        cmd("zdiff", -3, "readonly", numkeys=1,
            docs=("6.2.0", "Returns the difference between multiple sorted sets.")),
        cmd("zdiffstore", -4, "write denyoom", keys=(1, 1, 1), numkeys=2,
            docs=("6.2.0", "Stores the difference of multiple sorted sets in a key.")),
        cmd("zincrby", 4, "write denyoom fast", keys=(1, 1, 1),
            docs=("1.2.0", "Increments the score of a member in a sorted set.")),
        cmd("zinter", -3, "readonly", numkeys=1,
            docs=("6.2.0", "Returns the intersect of multiple sorted sets.")),
        cmd("zintercard", -3, "readonly", numkeys=1,
            docs=("7.0.0", "Returns the number of members of the intersect of multiple sorted sets.")),
        cmd("zinterstore", -4, "write denyoom", keys=(1, 1, 1), numkeys=2,
            docs=("2.0.0", "Stores the intersect of multiple sorted sets in a key.")),
        cmd("zlexcount", 4, "readonly fast", keys=(1, 1, 1),
            docs=("2.8.9", "Returns the number of members in a sorted set within a lexicographical range.")),
        cmd("zmpop", -4, "write", numkeys=1,
            docs=("7.0.0", "Returns the highest- or lowest-scoring members from one or more sorted sets after removing them. Deletes the sorted set if the last member was popped.")),
        cmd("zmscore", -3, "readonly fast", keys=(1, 1, 1),
            docs=("6.2.0", "Returns the score of one or more members in a sorted set.")),
        cmd("zpopmax", -2, "write fast", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the highest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.")),
        cmd("zpopmin", -2, "write fast", keys=(1, 1, 1),
            docs=("5.0.0", "Returns the lowest-scoring members from a sorted set after removing them. Deletes the sorted set if the last member was popped.")),
        cmd("zrandmember", -2, "readonly", keys=(1, 1, 1),
            docs=("6.2.0", "Returns one or more random members from a sorted set.")),
        cmd("zrange", -4, "readonly", keys=(1, 1, 1),
            docs=("1.2.0", "Returns members in a sorted set within a range of indexes.")),
        cmd("zrangebylex", -4, "readonly", keys=(1, 1, 1),
            docs=("2.8.9", "Returns members in a sorted set within a lexicographical range.")),
        cmd("zrangebyscore", -4, "readonly", keys=(1, 1, 1),
            docs=("1.0.5", "Returns members in a sorted set within a range of scores.")),
        cmd("zrangestore", -5, "write denyoom", keys=(1, 2, 1),
            docs=("6.2.0", "Stores a range of members from sorted set in a key.")),
        cmd("zrank", -3, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Returns the index of a member in a sorted set ordered by ascending scores.")),
        cmd("zrem", -3, "write fast", keys=(1, 1, 1),
            docs=("1.2.0", "Removes one or more members from a sorted set. Deletes the sorted set if all members were removed.")),
        cmd("zremrangebylex", 4, "write", keys=(1, 1, 1),
            docs=("2.8.9", "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if all members were removed.")),
        cmd("zremrangebyrank", 4, "write", keys=(1, 1, 1),
            docs=("2.0.0", "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all members were removed.")),
        cmd("zremrangebyscore", 4, "write", keys=(1, 1, 1),
            docs=("1.2.0", "Removes members in a sorted set within a range of scores. Deletes the sorted set if all members were removed.")),
        cmd("zrevrange", -4, "readonly", keys=(1, 1, 1),
            docs=("1.2.0", "Returns members in a sorted set within a range of indexes in reverse order.")),
        cmd("zrevrangebylex", -4, "readonly", keys=(1, 1, 1),
            docs=("2.8.9", "Returns members in a sorted set within a lexicographical range in reverse order.")),
        cmd("zrevrangebyscore", -4, "readonly", keys=(1, 1, 1),
            docs=("2.2.0", "Returns members in a sorted set within a range of scores in reverse order.")),
        cmd("zrevrank", -3, "readonly fast", keys=(1, 1, 1),
            docs=("2.0.0", "Returns the index of a member in a sorted set ordered by descending scores.")),
        cmd("zscan", -3, "readonly", keys=(1, 1, 1),
            docs=("2.8.0", "Iterates over members and scores of a sorted set.")),
        cmd("zscore", 3, "readonly fast", keys=(1, 1, 1),
            docs=("1.2.0", "Returns the score of a member in a sorted set.")),
        cmd("zunion", -3, "readonly", numkeys=1,
            docs=("6.2.0", "Returns the union of multiple sorted sets.")),
        cmd("zunionstore", -4, "write denyoom", keys=(1, 1, 1), numkeys=2,
            docs=("2.0.0", "Stores the union of multiple sorted sets in a key."))),
    family("generic",
        cmd("copy", -3, "write denyoom", keys=(1, 2, 1),
            docs=("6.2.0", "Copies the value of a key to a new key.")),
        cmd("del", -2, "write", keys=(1, -1, 1),
            docs=("1.0.0", "Deletes one or more keys.")),
        cmd("dump", 2, "readonly", keys=(1, 1, 1),
            docs=("2.6.0", "Returns a serialized representation of the value stored at a key.")),
        cmd("exists", -2, "readonly fast", keys=(1, -1, 1),
            docs=("1.0.0", "Determines whether one or more keys exist.")),
        cmd("expire", -3, "write fast", keys=(1, 1, 1),
            docs=("1.0.0", "Sets the expiration time of a key in seconds.")),
        cmd("expireat", -3, "write fast", keys=(1, 1, 1),
            docs=("1.2.0", "Sets the expiration time of a key to a Unix timestamp.")),
        cmd("expiretime", 2, "readonly fast", keys=(1, 1, 1),
            docs=("7.0.0", "Returns the expiration time of a key as a Unix timestamp.")),
        cmd("keys", 2, "readonly",
            docs=("1.0.0", "Returns all key names that match a pattern.")),
        cmd("move", 3, "write fast", keys=(1, 1, 1),
            docs=("1.0.0", "Moves a key to another database.")),
        cmd("object", -2, "",
            docs=("2.2.3", "A container for object introspection commands."),
            subcommands=[
                cmd("encoding", 3, "readonly", keys=(2, 2, 1),
                    docs=("2.2.3", "Returns the internal encoding of a Redis object.")),
                cmd("freq", 3, "readonly", keys=(2, 2, 1),
                    docs=("4.0.0", "Returns the logarithmic access frequency counter of a Redis object.")),
                cmd("help", 2, "loading stale",
                    docs=("6.2.0", "Returns helpful text about the different subcommands.")),
                cmd("idletime", 3, "readonly", keys=(2, 2, 1),
                    docs=("2.2.3", "Returns the time since the last access to a Redis object.")),
                cmd("refcount", 3, "readonly", keys=(2, 2, 1),
                    docs=("2.2.3", "Returns the reference count of a value of a key."))]),
        cmd("persist", 2, "write fast", keys=(1, 1, 1),
            docs=("2.2.0", "Removes the expiration time of a key.")),
        cmd("pexpire", -3, "write fast", keys=(1, 1, 1),
            docs=("2.6.0", "Sets the expiration time of a key in milliseconds.")),
        cmd("pexpireat", -3, "write fast", keys=(1, 1, 1),
            docs=("2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp.")),
        cmd("pexpiretime", 2, "readonly fast", keys=(1, 1, 1),
            docs=("7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp.")),
        cmd("pttl", 2, "readonly fast", keys=(1, 1, 1),
            docs=("2.6.0", "Returns the expiration time in milliseconds of a key.")),
        cmd("randomkey", 1, "readonly",
            docs=("1.0.0", "Returns a random key name from the database.")),
        cmd("rename", 3, "write", keys=(1, 2, 1),
            docs=("1.0.0", "Renames a key and overwrites the destination.")),
        cmd("renamenx", 3, "write fast", keys=(1, 2, 1),
            docs=("1.0.0", "Renames a key only when the target key name doesn't exist.")),
        cmd("restore", -4, "write denyoom", keys=(1, 1, 1),
            docs=("2.6.0", "Creates a key from the serialized representation of a value.")),
        cmd("scan", -2, "readonly",
            docs=("2.8.0", "Iterates over the key names in the database.")),
        cmd("sort", -2, "write denyoom", keys=(1, 1, 1), find_keys=sort_keys,
            docs=("1.0.0", "Sorts the elements in a list, a set, or a sorted set, optionally storing the result.")),
        cmd("sort_ro", -2, "readonly", keys=(1, 1, 1), find_keys=lambda argv: argv[1:2],
            docs=("7.0.0", "Returns the sorted elements of a list, a set, or a sorted set.")),
        cmd("touch", -2, "readonly fast", keys=(1, -1, 1),
            docs=("3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed.")),
        cmd("ttl", 2, "readonly fast", keys=(1, 1, 1),
            docs=("1.0.0", "Returns the expiration time in seconds of a key.")),
        cmd("type", 2, "readonly fast", keys=(1, 1, 1),
            docs=("1.0.0", "Determines the type of value stored at a key.")),
        cmd("unlink", -2, "write fast", keys=(1, -1, 1),
            docs=("4.0.0", "Asynchronously deletes one or more keys.")),
        cmd("waitaof", 4, "blocking", category="@connection",
            docs=("7.2.0", "Blocks until all of the preceding write commands sent by the connection are written to the append-only file of the master and/or replicas."))),
    family("connection",
        cmd("auth", -2, "noscript loading stale fast no_auth allow_busy", layer="session",
            docs=("1.0.0", "Authenticates the connection.")),
        cmd("client", -2, "", layer="session", sub_methods=True,
            docs=("2.4.0", "A container for client connection commands."),
            subcommands=[
                cmd("id", 2, "noscript loading stale",
                    docs=("5.0.0", "Returns the unique client ID of the connection.")),
                cmd("setname", 3, "noscript loading stale",
                    docs=("2.6.9", "Sets the connection name.")),
                cmd("getname", 2, "noscript loading stale",
                    docs=("2.6.9", "Returns the name of the connection.")),
                cmd("setinfo", 4, "",
                    docs=("7.2.0", "Sets information specific to the client or connection.")),
                cmd("info", 2, "noscript loading stale",
                    docs=("6.2.0", "Returns information about the connection.")),
                cmd("no-evict", 3, "admin noscript loading stale",
                    docs=("7.0.0", "Sets the client eviction mode of the connection.")),
                cmd("no-touch", 3, "noscript loading stale",
                    docs=("7.2.0", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.")),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands.")),
                cmd("list", -2, "admin noscript loading stale", layer="server",
                    docs=("2.4.0", "Lists open connections.")),
                cmd("kill", -3, "admin noscript loading stale", layer="server",
                    docs=("2.4.0", "Terminates open connections.")),
                cmd("unblock", -3, "admin noscript loading stale", layer="server",
                    docs=("5.0.0", "Unblocks a client blocked by a blocking command from a different connection."))]),
        cmd("echo", 2, "loading stale fast",
            docs=("1.0.0", "Returns the given string.")),
        cmd("hello", -1, "noscript loading stale fast no_auth allow_busy", layer="session",
            docs=("6.0.0", "Handshakes with the Redis server.")),
        cmd("ping", -1, "fast", layer="session", pubsub_ok=True, denied_on_misconf=True,
            docs=("1.0.0", "Returns the server's liveliness response.")),
        cmd("quit", -1, "noscript loading stale fast no_auth allow_busy",
            layer="session", pubsub_ok=True, immediate=True,
            docs=("1.0.0", "Closes the connection.")),
        cmd("reset", 1, "noscript loading stale fast no_auth allow_busy",
            layer="session", pubsub_ok=True, immediate=True,
            docs=("6.2.0", "Resets the connection.")),
        cmd("select", 2, "loading stale fast",
            docs=("1.0.0", "Changes the selected database."))),
    family("transactions",
        cmd("discard", 1, "noscript loading stale fast allow_busy",
            layer="session", immediate=True,
            docs=("2.0.0", "Discards a transaction.")),
        cmd("exec", 1, "noscript loading stale skip_slowlog",
            layer="session", immediate=True, aborts_exec=True,
            docs=("1.2.0", "Executes all commands in a transaction.")),
        cmd("multi", 1, "noscript loading stale fast allow_busy", layer="session", immediate=True,
            docs=("1.2.0", "Starts a transaction.")),
        cmd("unwatch", 1, "noscript loading stale fast allow_busy", layer="session",
            docs=("2.2.0", "Forgets about watched keys of a transaction.")),
        cmd("watch", -2, "noscript loading stale fast allow_busy",
            keys=(1, -1, 1), layer="session", immediate=True,
            docs=("2.2.0", "Monitors changes to keys to determine the execution of a transaction."))),
    family("pubsub",
        cmd("psubscribe", -2, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Listens for messages published to channels that match one or more patterns.")),
        cmd("publish", 3, "pubsub loading stale fast may_replicate", layer="server",
            docs=("2.0.0", "Posts a message to a channel.")),
        cmd("pubsub", -2, "", layer="server",
            docs=("2.8.0", "A container for Pub/Sub commands."),
            subcommands=[
                cmd("channels", -2, "pubsub loading stale",
                    docs=("2.8.0", "Returns the active channels.")),
                cmd("numsub", -2, "pubsub loading stale",
                    docs=("2.8.0", "Returns a count of subscribers to channels.")),
                cmd("numpat", 2, "pubsub loading stale",
                    docs=("2.8.0", "Returns a count of unique pattern subscriptions.")),
                cmd("help", 2, "loading stale",
                    docs=("6.2.0", "Returns helpful text about the different subcommands."))]),
        cmd("punsubscribe", -1, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Stops listening to messages published to channels that match one or more patterns.")),
        cmd("subscribe", -2, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Listens for messages published to channels.")),
        cmd("unsubscribe", -1, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
            docs=("2.0.0", "Stops listening to messages posted to channels."))),
    family("scripting",
        cmd("eval", -3, "noscript stale skip_monitor no_mandatory_keys", layer="session",
            numkeys=2, docs=("2.6.0", "Executes a server-side Lua script.")),
        cmd("eval_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
            layer="session", numkeys=2,
            docs=("7.0.0", "Executes a read-only server-side Lua script.")),
        cmd("evalsha", -3, "noscript stale skip_monitor no_mandatory_keys", layer="session",
            numkeys=2, docs=("2.6.0", "Executes a server-side Lua script by SHA1 digest.")),
        cmd("evalsha_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
            layer="session", numkeys=2,
            docs=("7.0.0", "Executes a read-only server-side Lua script by SHA1 digest.")),
        cmd("fcall", -3, "noscript stale skip_monitor no_mandatory_keys", layer="session",
            numkeys=2, docs=("7.0.0", "Invoke a function")),
        cmd("fcall_ro", -3, "readonly noscript stale skip_monitor no_mandatory_keys",
            layer="session", numkeys=2, docs=("7.0.0", "Invoke a read-only function")),
        cmd("function", -2, "",
            docs=("7.0.0", "A container for function commands"),
            subcommands=[
                cmd("delete", 3, "write noscript",
                    docs=("7.0.0", "Delete a function by name")),
                cmd("dump", 2, "noscript",
                    docs=("7.0.0", "Dump all functions into a serialized binary payload")),
                cmd("flush", -2, "write noscript",
                    docs=("7.0.0", "Deleting all functions")),
                cmd("help", 2, "loading stale",
                    docs=("7.0.0", "Show helpful text about the different subcommands")),
                cmd("kill", 2, "noscript allow_busy",
                    docs=("7.0.0", "Kill the function currently in execution.")),
                cmd("list", -2, "noscript",
                    docs=("7.0.0", "List information about all the functions")),
                cmd("load", -3, "write denyoom noscript",
                    docs=("7.0.0", "Create a function with the given arguments (name, code, description)")),
                cmd("restore", -3, "write denyoom noscript",
                    docs=("7.0.0", "Restore all the functions on the given payload")),
                cmd("stats", 2, "noscript allow_busy",
                    docs=("7.0.0", "Return information about the function currently running (name, description, duration)"))]),
        cmd("script", -2, "", layer="session", sub_methods=True,
            docs=("2.6.0", "A container for Lua scripts management commands."),
            subcommands=[
                cmd("exists", -3, "noscript",
                    docs=("2.6.0", "Determines whether server-side Lua scripts exist in the script cache.")),
                cmd("flush", -2, "noscript",
                    docs=("2.6.0", "Removes all server-side Lua scripts from the script cache.")),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands.")),
                cmd("kill", 2, "noscript allow_busy",
                    docs=("2.6.0", "Terminates a server-side Lua script during execution.")),
                cmd("load", 3, "noscript stale",
                    docs=("2.6.0", "Loads a server-side Lua script to the script cache."))])),
    family("server",
        cmd("bgrewriteaof", 1, "admin noscript no_async_loading",
            docs=("1.0.0", "Asynchronously rewrites the append-only file to disk.")),
        cmd("bgsave", -1, "admin noscript no_async_loading",
            docs=("1.0.0", "Asynchronously saves the database(s) to disk.")),
        cmd("command", -1, "loading stale", layer="server", base_ok=True,
            docs=("2.8.13", "Returns detailed information about all commands."),
            subcommands=[
                cmd("count", 2, "loading stale",
                    docs=("2.8.13", "Returns a count of commands.")),
                cmd("info", -2, "loading stale",
                    docs=("2.8.13", "Returns information about one, multiple or all commands.")),
                cmd("docs", -2, "loading stale",
                    docs=("7.0.0", "Returns documentary information about one, multiple or all commands.")),
                cmd("list", -2, "loading stale",
                    docs=("7.0.0", "Returns a list of command names.")),
                cmd("getkeys", -4, "loading stale",
                    docs=("2.8.13", "Extracts the key names from an arbitrary command.")),
                cmd("getkeysandflags", -4, "loading stale",
                    docs=("7.0.0", "Extracts the key names and access flags for an arbitrary command.")),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."))]),
        cmd("config", -2, "", layer="server",
            docs=("2.0.0", "A container for server configuration commands."),
            subcommands=[
                cmd("get", -3, "admin noscript loading stale",
                    docs=("2.0.0", "Returns the effective values of configuration parameters.")),
                cmd("set", -4, "admin noscript loading stale",
                    docs=("2.0.0", "Sets configuration parameters in-flight.")),
                cmd("resetstat", 2, "admin noscript loading stale",
                    docs=("2.0.0", "Resets the server's statistics.")),
                cmd("rewrite", 2, "admin noscript loading stale",
                    docs=("2.8.0", "Persists the effective configuration to file.")),
                cmd("help", 2, "loading stale",
                    docs=("5.0.0", "Returns helpful text about the different subcommands."))]),
        cmd("dbsize", 1, "readonly fast",
            docs=("1.0.0", "Returns the number of keys in the database.")),
        cmd("flushall", -1, "write", layer="session",
            docs=("1.0.0", "Removes all keys from all databases.")),
        cmd("flushdb", -1, "write",
            docs=("1.0.0", "Remove all keys from the current database.")),
        cmd("info", -1, "loading stale", layer="server",
            docs=("1.0.0", "Returns information and statistics about the server.")),
        cmd("lastsave", 1, "loading stale fast random",
            docs=("1.0.0", "Returns the Unix timestamp of the last successful save to disk.")),
        cmd("save", 1, "admin noscript no_async_loading no_multi",
            docs=("1.0.0", "Synchronously saves the database(s) to disk.")),
        cmd("shutdown", -1, "admin noscript loading stale no_multi allow_busy",
            layer="server",
            docs=("1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.")),
        cmd("time", 1, "loading stale fast",
            docs=("2.6.0", "Returns the server time."))),
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
