"""COMMAND: COUNT, INFO, DOCS, LIST, GETKEYS, HELP, generated from the command tables
(engine/commands/table.py for engine commands, the session tables for connection and
server commands): name, arity, flags, key positions, ACL categories, key specs,
subcommands, and a one-line summary and group for DOCS (what redis-cli shows)."""
from __future__ import annotations

from typing import Optional

from engine.commands.table import COMMANDS, KEYWORD_KEYS, key_arguments
from engine.core.errors import ResponseError, unknown_subcommand
from engine.core.glob import match
from engine.resp.reply import Status

# name -> (group, since, summary). Engine commands take their group from here too.
DOCS = {
    "xadd": ("stream", "5.0.0", "Appends a new message to a stream. Creates the key if it doesn't exist."),
    "xlen": ("stream", "5.0.0", "Return the number of messages in a stream."),
    "xrange": ("stream", "5.0.0", "Returns the messages from a stream within a range of IDs."),
    "xrevrange": ("stream", "5.0.0", "Returns the messages from a stream within a range of IDs in reverse order."),
    "xdel": ("stream", "5.0.0", "Returns the number of messages after removing them from a stream."),
    "xtrim": ("stream", "5.0.0", "Deletes messages from the beginning of a stream."),
    "xsetid": ("stream", "5.0.0", "An internal command for replicating stream values."),
    "xread": ("stream", "5.0.0", "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise."),
    "xreadgroup": ("stream", "5.0.0", "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise."),
    "xack": ("stream", "5.0.0", "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream."),
    "xpending": ("stream", "5.0.0", "Returns the information and entries from a stream consumer group's pending entries list."),
    "xclaim": ("stream", "5.0.0", "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member."),
    "xautoclaim": ("stream", "6.2.0", "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member."),
    "xgroup": ("stream", "5.0.0", "A container for consumer groups commands."),
    "xgroup|create": ("stream", "5.0.0", "Creates a consumer group."),
    "xgroup|setid": ("stream", "5.0.0", "Sets the last-delivered ID of a consumer group."),
    "xgroup|destroy": ("stream", "5.0.0", "Destroys a consumer group."),
    "xgroup|createconsumer": ("stream", "6.2.0", "Creates a consumer in a consumer group."),
    "xgroup|delconsumer": ("stream", "5.0.0", "Deletes a consumer from a consumer group."),
    "xgroup|help": ("stream", "5.0.0", "Returns helpful text about the different subcommands."),
    "xinfo": ("stream", "5.0.0", "A container for stream introspection commands."),
    "xinfo|consumers": ("stream", "5.0.0", "Returns a list of the consumers in a consumer group."),
    "xinfo|groups": ("stream", "5.0.0", "Returns a list of the consumer groups of a stream."),
    "xinfo|stream": ("stream", "5.0.0", "Returns information about a stream."),
    "xinfo|help": ("stream", "5.0.0", "Returns helpful text about the different subcommands."),
    "get": ("string", "1.0.0", "Returns the string value of a key."),
    "set": ("string", "1.0.0", "Sets the string value of a key, ignoring its type. The key is created if it doesn't exist."),
    "mget": ("string", "1.0.0", "Atomically returns the string values of one or more keys."),
    "getdel": ("string", "6.2.0", "Returns the string value of a key after deleting the key."),
    "append": ("string", "2.0.0", "Appends a string to the value of a key. Creates the key if it doesn't exist."),
    "strlen": ("string", "2.2.0", "Returns the length of a string value."),
    "incr": ("string", "1.0.0", "Increments the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."),
    "decr": ("string", "1.0.0", "Decrements the integer value of a key by one. Uses 0 as initial value if the key doesn't exist."),
    "incrby": ("string", "1.0.0", "Increments the integer value of a key by a number. Uses 0 as initial value if the key doesn't exist."),
    "decrby": ("string", "1.0.0", "Decrements a number from the integer value of a key. Uses 0 as initial value if the key doesn't exist."),
    "del": ("generic", "1.0.0", "Deletes one or more keys."),
    "unlink": ("generic", "4.0.0", "Asynchronously deletes one or more keys."),
    "exists": ("generic", "1.0.0", "Determines whether one or more keys exist."),
    "touch": ("generic", "3.2.1", "Returns the number of existing keys out of those specified after updating the time they were last accessed."),
    "type": ("generic", "1.0.0", "Determines the type of value stored at a key."),
    "rename": ("generic", "1.0.0", "Renames a key and overwrites the destination."),
    "renamenx": ("generic", "1.0.0", "Renames a key only when the target key name doesn't exist."),
    "keys": ("generic", "1.0.0", "Returns all key names that match a pattern."),
    "scan": ("generic", "2.8.0", "Iterates over the key names in the database."),
    "randomkey": ("generic", "1.0.0", "Returns a random key name from the database."),
    "expire": ("generic", "1.0.0", "Sets the expiration time of a key in seconds."),
    "pexpire": ("generic", "2.6.0", "Sets the expiration time of a key in milliseconds."),
    "expireat": ("generic", "1.2.0", "Sets the expiration time of a key to a Unix timestamp."),
    "pexpireat": ("generic", "2.6.0", "Sets the expiration time of a key to a Unix milliseconds timestamp."),
    "ttl": ("generic", "1.0.0", "Returns the expiration time in seconds of a key."),
    "pttl": ("generic", "2.6.0", "Returns the expiration time in milliseconds of a key."),
    "expiretime": ("generic", "7.0.0", "Returns the expiration time of a key as a Unix timestamp."),
    "pexpiretime": ("generic", "7.0.0", "Returns the expiration time of a key as a Unix milliseconds timestamp."),
    "persist": ("generic", "2.2.0", "Removes the expiration time of a key."),
    "dbsize": ("server", "1.0.0", "Returns the number of keys in the database."),
    "flushdb": ("server", "1.0.0", "Remove all keys from the current database."),
    "flushall": ("server", "1.0.0", "Removes all keys from all databases."),
    "time": ("server", "2.6.0", "Returns the server time."),
    "info": ("server", "1.0.0", "Returns information and statistics about the server."),
    "config": ("server", "2.0.0", "A container for server configuration commands."),
    "config|get": ("server", "2.0.0", "Returns the effective values of configuration parameters."),
    "config|set": ("server", "2.0.0", "Sets configuration parameters in-flight."),
    "config|resetstat": ("server", "2.0.0", "Resets the server's statistics."),
    "config|rewrite": ("server", "2.8.0", "Persists the effective configuration to file."),
    "config|help": ("server", "5.0.0", "Returns helpful text about the different subcommands."),
    "command": ("server", "2.8.13", "Returns detailed information about all commands."),
    "command|count": ("server", "2.8.13", "Returns a count of commands."),
    "command|info": ("server", "2.8.13", "Returns information about one, multiple or all commands."),
    "command|docs": ("server", "7.0.0", "Returns documentary information about one, multiple or all commands."),
    "command|list": ("server", "7.0.0", "Returns a list of command names."),
    "command|getkeys": ("server", "2.8.13", "Extracts the key names from an arbitrary command."),
    "command|help": ("server", "5.0.0", "Returns helpful text about the different subcommands."),
    "shutdown": ("server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server."),
    "ping": ("connection", "1.0.0", "Returns the server's liveliness response."),
    "echo": ("connection", "1.0.0", "Returns the given string."),
    "select": ("connection", "1.0.0", "Changes the selected database."),
    "hello": ("connection", "6.0.0", "Handshakes with the Redis server."),
    "auth": ("connection", "1.0.0", "Authenticates the connection."),
    "quit": ("connection", "1.0.0", "Closes the connection."),
    "reset": ("connection", "6.2.0", "Resets the connection."),
    "client": ("connection", "2.4.0", "A container for client connection commands."),
    "client|id": ("connection", "5.0.0", "Returns the unique client ID of the connection."),
    "client|info": ("connection", "6.2.0", "Returns information about the connection."),
    "client|list": ("connection", "2.4.0", "Lists open connections."),
    "client|kill": ("connection", "2.4.0", "Terminates open connections."),
    "client|setname": ("connection", "2.6.9", "Sets the connection name."),
    "client|getname": ("connection", "2.6.9", "Returns the name of the connection."),
    "client|setinfo": ("connection", "7.2.0", "Sets information specific to the client or connection."),
    "client|unblock": ("connection", "5.0.0", "Unblocks a client blocked by a blocking command from a different connection."),
    "client|help": ("connection", "5.0.0", "Returns helpful text about the different subcommands."),
    "multi": ("transactions", "1.2.0", "Starts a transaction."),
    "exec": ("transactions", "1.2.0", "Executes all commands in a transaction."),
    "discard": ("transactions", "2.0.0", "Discards a transaction."),
    "watch": ("transactions", "2.2.0", "Monitors changes to keys to determine the execution of a transaction."),
    "unwatch": ("transactions", "2.2.0", "Forgets about watched keys of a transaction."),
    "subscribe": ("pubsub", "2.0.0", "Listens for messages published to channels."),
    "unsubscribe": ("pubsub", "2.0.0", "Stops listening to messages posted to channels."),
    "psubscribe": ("pubsub", "2.0.0", "Listens for messages published to channels that match one or more patterns."),
    "punsubscribe": ("pubsub", "2.0.0", "Stops listening to messages published to channels that match one or more patterns."),
    "publish": ("pubsub", "2.0.0", "Posts a message to a channel."),
    "pubsub": ("pubsub", "2.8.0", "A container for Pub/Sub commands."),
    "pubsub|channels": ("pubsub", "2.8.0", "Returns the active channels."),
    "pubsub|numsub": ("pubsub", "2.8.0", "Returns a count of subscribers to channels."),
    "pubsub|numpat": ("pubsub", "2.8.0", "Returns a count of unique pattern subscriptions."),
    "pubsub|help": ("pubsub", "6.2.0", "Returns helpful text about the different subcommands."),
}

# Redis's command flags for the connection/server commands (engine commands carry
# theirs in the table).
SERVER_FLAGS = {
    "ping": "fast", "hello": "noscript loading stale fast no_auth allow_busy",
    "auth": "noscript loading stale fast no_auth allow_busy",
    "quit": "allow_busy noscript loading stale fast no_auth",
    "reset": "noscript loading stale fast no_auth allow_busy",
    "client": "", "multi": "noscript loading stale fast allow_busy",
    "exec": "noscript loading stale skip_slowlog", "discard": "noscript loading stale fast allow_busy",
    "watch": "noscript loading stale fast allow_busy", "unwatch": "noscript loading stale fast allow_busy",
    "flushall": "write", "info": "loading stale", "config": "", "command": "loading stale",
    "time": "loading stale fast",
    "shutdown": "admin noscript loading stale no_multi no_async_loading allow_busy",
    "subscribe": "pubsub noscript loading stale", "unsubscribe": "pubsub noscript loading stale",
    "psubscribe": "pubsub noscript loading stale", "punsubscribe": "pubsub noscript loading stale",
    "publish": "pubsub loading stale fast may_replicate", "pubsub": "",
}

_GROUP_CATEGORY = {"stream": "@stream", "string": "@string", "generic": "@keyspace",
                   "connection": "@connection", "server": "@admin", "transactions": "@transaction",
                   "pubsub": "@pubsub"}


# Redis's order of command flags (server.h CMD_*), for COMMAND INFO.
FLAG_ORDER = ("write", "readonly", "denyoom", "module", "admin", "pubsub", "noscript",
              "blocking", "loading", "stale", "skip_monitor", "skip_slowlog", "asking", "fast",
              "no_auth", "may_replicate", "sentinel", "only_sentinel", "no_mandatory_keys",
              "protected", "module_getkeys", "module_no_cluster", "no_async_loading",
              "no_multi", "movablekeys", "allow_busy")
_FLAG_RANK = {f: i for i, f in enumerate(FLAG_ORDER)}


class CommandMeta:
    """Everything COMMAND reports about one (sub)command."""

    __slots__ = ("name", "arity", "flags", "first", "last", "step", "subcommands")

    def __init__(self, name: str, arity: int, flags, first=0, last=0, step=0,
                 subcommands: Optional[list] = None) -> None:
        self.name = name
        self.arity = arity
        self.flags = sorted((f for f in flags if f), key=lambda f: _FLAG_RANK.get(f, 99))
        self.first, self.last, self.step = first, last, step
        self.subcommands = subcommands or []

    @property
    def group(self) -> str:
        return DOCS.get(self.name, DOCS.get(self.name.split("|")[0], ("server",)))[0]

    def acl_categories(self) -> list:
        if self.subcommands:
            return ["@slow"]            # a container: its subcommands have categories
        cats = []
        if "write" in self.flags:
            cats.append("@write")
        elif "readonly" in self.flags:
            cats.append("@read")
        cats.append(_GROUP_CATEGORY.get(self.group, "@slow"))
        cats.append("@fast" if "fast" in self.flags else "@slow")
        if "blocking" in self.flags:
            cats.append("@blocking")
        if self.name in ("flushall", "flushdb", "keys"):
            cats.append("@dangerous")
        return cats

    def key_specs(self) -> list:
        if self.name in KEYWORD_KEYS:
            return [{b"flags": [Status(b"RW" if "write" in self.flags else b"RO"),
                                Status(b"access")],
                     b"begin_search": {b"type": b"keyword",
                                       b"spec": {b"keyword": KEYWORD_KEYS[self.name].encode(),
                                                 b"startfrom": 1}},
                     b"find_keys": {b"type": b"range",
                                    b"spec": {b"lastkey": -1, b"keystep": 1, b"limit": 2}}}]
        if not self.first:
            return []
        lastkey = self.last if self.last < 0 else self.last - self.first
        flags = [Status(b"RW"), Status(b"update")] if "write" in self.flags else \
            [Status(b"RO"), Status(b"access")]
        return [{b"flags": flags,
                 b"begin_search": {b"type": b"index", b"spec": {b"index": self.first}},
                 b"find_keys": {b"type": b"range",
                                b"spec": {b"lastkey": lastkey, b"keystep": self.step,
                                          b"limit": 0}}}]

    def info(self, resp3: bool) -> list:
        flags = [Status(f.encode()) for f in self.flags]
        if self.name in KEYWORD_KEYS:
            flags.append(Status(b"movablekeys"))
        cats = [Status(c.encode()) for c in self.acl_categories()]
        return [self.name.encode(), self.arity, set(flags) if resp3 else flags,
                self.first, self.last, self.step, set(cats) if resp3 else cats, [],
                self.key_specs(), [sub.info(resp3) for sub in self.subcommands]]

    def docs(self) -> dict:
        group, since, summary = DOCS.get(self.name, ("server", "1.0.0", ""))
        out = {b"summary": summary.encode(), b"since": since.encode(), b"group": group.encode()}
        if self.subcommands:
            out[b"subcommands"] = {sub.name.encode(): sub.docs() for sub in self.subcommands}
        return out

    def keys(self, argv: list) -> list:
        """The key arguments of argv (COMMAND GETKEYS)."""
        return key_arguments(argv, self.first, self.last, self.step, KEYWORD_KEYS.get(self.name))


def build_table(session_commands: dict) -> dict:
    """name -> CommandMeta for every command: the engine's table, then the session's
    (connection and server commands; they win where both define one, e.g. PING)."""
    table: dict = {}
    for raw, spec in COMMANDS.items():
        name = raw.decode()
        subs = None
        if spec.subcommands is not None:
            subs = [CommandMeta(f"{name}|{sub.name}", sub.arity, sub.flags,
                                sub.first_key, sub.last_key, sub.step)
                    for sub in spec.subcommands.values()]
        table[name] = CommandMeta(name, spec.arity, spec.flags, spec.first_key,
                                  spec.last_key, spec.step, subs)
    for raw, cmd in session_commands.items():
        name = raw.decode()
        if not name.islower():
            continue
        flags = SERVER_FLAGS.get(name, "").split()
        subs = None
        if cmd.subcommands:
            subs = [CommandMeta(f"{name}|{sub.decode()}", arity, [])
                    for sub, arity in cmd.subcommands.items()]
        first = 1 if name == "watch" else 0
        last = -1 if name == "watch" else 0
        table[name] = CommandMeta(name, cmd.arity, flags, first, last, 1 if first else 0,
                                  subs)
    return dict(sorted(table.items()))


def _find(table: dict, name: bytes) -> Optional[CommandMeta]:
    parts = name.decode("utf-8", "replace").lower().split("|", 1)
    meta = table.get(parts[0])
    if meta is not None and len(parts) == 2:
        return next((s for s in meta.subcommands if s.name == "|".join(parts)), None)
    return meta


def command_command(table: dict, argv: list, resp3: bool):
    """COMMAND [COUNT | INFO name... | DOCS name... | LIST [FILTERBY ...] | GETKEYS ... | HELP]."""
    if len(argv) == 1:
        return [meta.info(resp3) for meta in table.values()]
    sub = argv[1].lower()
    if sub == b"count":
        return len(table)
    if sub == b"info":
        if len(argv) == 2:
            return [meta.info(resp3) for meta in table.values()]
        return [None if (m := _find(table, name)) is None else m.info(resp3)
                for name in argv[2:]]
    if sub == b"docs":
        if len(argv) == 2:
            return {meta.name.encode(): meta.docs() for meta in table.values()}
        out = {}
        for name in argv[2:]:
            meta = _find(table, name)
            if meta is not None:
                out[meta.name.encode()] = meta.docs()
        return out
    if sub == b"list":
        # every command, each container followed by its subcommands (as Redis lists them)
        metas = [m for meta in table.values() for m in (meta, *meta.subcommands)]
        if len(argv) == 2:
            return [m.name.encode() for m in metas]
        if len(argv) != 5 or argv[2].lower() != b"filterby":
            raise ResponseError("ERR syntax error")
        how, what = argv[3].lower(), argv[4]
        if how == b"pattern":
            return [m.name.encode() for m in metas if match(what, m.name.encode(), True)]
        if how == b"aclcat":
            cat = "@" + what.decode("utf-8", "replace").lower()
            return [m.name.encode() for m in metas if cat in m.acl_categories()]
        if how == b"module":
            return []
        raise ResponseError("ERR syntax error")
    if sub in (b"getkeys", b"getkeysandflags"):
        meta = _find(table, argv[2])
        if meta is None:
            raise ResponseError("ERR Invalid command specified")
        target = argv[2:]
        if meta.subcommands and len(target) > 1:
            meta = _find(table, target[0] + b"|" + target[1]) or meta
        arity = meta.arity
        if (arity > 0 and len(target) != arity) or (arity < 0 and len(target) < -arity):
            raise ResponseError("ERR Invalid number of arguments specified for command")
        keys = meta.keys(target)
        if not keys:
            raise ResponseError("ERR The command has no key arguments")
        if sub == b"getkeys":
            return keys
        flags = [Status(b"RW"), Status(b"update")] if "write" in meta.flags else \
            [Status(b"RO"), Status(b"access")]
        return [[key, flags] for key in keys]
    if sub == b"help":
        return [Status(line.encode()) for line in COMMAND_HELP]
    raise unknown_subcommand(argv[0], argv[1])


COMMAND_HELP = (
    "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "(no subcommand)",
    "    Return details about all commands.",
    "COUNT",
    "    Return the total number of commands in this server.",
    "LIST",
    "    Return a list of all commands in this server.",
    "INFO [<command-name> ...]",
    "    Return details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "DOCS [<command-name> ...]",
    "    Return documentation details about multiple commands.",
    "    If no command names are given, documentation details for all",
    "    commands are returned.",
    "GETKEYS <full-command>",
    "    Return the keys from a full command.",
    "GETKEYSANDFLAGS <full-command>",
    "    Return the keys and the access flags from a full command.",
    "HELP",
    "    Print this help.",
)
