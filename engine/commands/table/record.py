"""The shape of a command's record (Command, its key specifications, its documented
arguments) and how one is built (cmd, ks, arg; from_facts: from Redis's facts in
redis_commands.json and Sluice's rules in rules.py); Redis's orders of flags, ACL
categories and key specification flags; the legacy key range COMMAND INFO derives
from the key specifications. What a record says: the package's docstring
(engine/commands/table/__init__.py)."""
from __future__ import annotations

from dataclasses import dataclass
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
    handler: Optional[Callable] = None  # engine layer: handler(ctx, argv) (@command)
    client_handler: Optional[Callable] = None   # session/server layers: handler(client,
                                                # argv) (@client_command)
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
        find_keys: Optional[Callable] = None) -> Command:
    """A record; `docs` = (since, summary). Its group and full name come from from_facts().
    acl_categories, tips, doc_flags: space-separated, as Redis's json lists them."""
    ranked = tuple(sorted(flags.split(), key=lambda f: _FLAG_RANK.get(f, 99)))
    write = "write" in ranked
    subs = None if subcommands is None else {sub.name.encode(): sub for sub in subcommands}
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


def from_facts(name: str, facts: dict, rules: dict, omit_history: dict) -> Command:
    """The record of command `name` from Redis's facts of it (an entry of
    redis_commands.json) and Sluice's rules (rules.py: RULES, DOCS_OMIT_HISTORY), with
    the subcommands Sluice has (those whose facts give an arity)."""
    record = _from_facts(name, name, facts, rules, omit_history)
    _complete(record, facts["group"], None)
    return record


def _from_facts(name: str, full: str, facts: dict, rules: dict, omit_history: dict) -> Command:
    subcommands = facts.get("subcommands")
    if subcommands is not None:
        subcommands = [_from_facts(sub, f"{full}|{sub}", sub_facts, rules, omit_history)
                       for sub, sub_facts in subcommands.items() if "arity" in sub_facts]
    omitted = omit_history.get(full, ())
    return cmd(name, facts["arity"], " ".join(facts["flags"]),
               docs=(facts["since"], facts["summary"]),
               key_specs=tuple(_key_spec(spec) for spec in facts.get("key_specs", ())),
               acl_categories=" ".join(facts.get("acl_categories", ())),
               tips=" ".join(facts.get("tips", ())), complexity=facts.get("complexity"),
               history=tuple((version, what) for version, what in facts.get("history", ())
                             if version not in omitted),
               doc_flags=" ".join(facts.get("doc_flags", ())),
               deprecated_since=facts.get("deprecated_since"),
               replaced_by=facts.get("replaced_by"),
               arguments=_arguments(facts.get("arguments", ())),
               subcommands=subcommands, **rules.get(full, {}))


def _key_spec(spec: dict) -> KeySpec:
    return ks(" ".join(spec["flags"]), index=spec.get("index", 0), keyword=spec.get("keyword"),
              startfrom=spec.get("startfrom", 0),
              range=tuple(spec["range"]) if "range" in spec else None,
              keynum=tuple(spec["keynum"]) if "keynum" in spec else None,
              notes=spec.get("notes"))


def _arguments(arguments) -> tuple:
    return tuple(arg(a["name"], a["type"], key_spec_index=a.get("key_spec_index", -1),
                     token=a.get("token"), since=a.get("since"),
                     optional=a.get("optional", False), multiple=a.get("multiple", False),
                     multiple_token=a.get("multiple_token", False),
                     deprecated_since=a.get("deprecated_since"),
                     arguments=_arguments(a.get("arguments", ())))
                 for a in arguments)


def _complete(record: Command, group: str, container: Optional[Command]) -> None:
    record.group = group
    if container is not None:
        record.name = f"{container.name}|{record.name}"
        record.layer = record.layer or container.layer
    else:
        record.layer = record.layer or "engine"
    if record.layer not in LAYERS:
        raise ValueError(f"{record.name}: unknown layer {record.layer!r}")
    for sub in (record.subcommands or {}).values():
        _complete(sub, group, record)
