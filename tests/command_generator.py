"""Seeded random generator of Redis-Streams command sequences for differential testing.

Why it looks the way it does:

* Everything is drawn from ``random.Random(seed)``: a seed reproduces its sequence exactly.
* IDs are always explicit (``ms-seq``, ``ms`` or ``ms-*`` with an explicit ms), never ``*``,
  so replies do not depend on the wall clock.  Clock-dependent knobs are only used with values
  whose outcome is certain: min-idle-time 0 or 10**12 ms (~31 years), XCLAIM TIME in the far
  past/future, IDLE 0 or far beyond "now" (Redis clamps it).
* The generator keeps a rough model of each stream (last ID, IDs added) without ever seeing a
  reply, so most commands are valid and hit existing entries; the model may drift, which only
  makes some commands fail naturally (that is fine, both sides see the same sequence).
* About 8% of calls are deliberately invalid (arity, bad IDs, bad counts, unknown options, wrong
  type, syntax); natural failures (NOGROUP, BUSYGROUP, IDs below the top, missing keys) add to
  that for an overall error share around 10-15%.
* Streams get long enough (bursts of XADD) to cross Redis' 100-entries-per-node boundary so that
  ``~`` trimming and radix-tree statistics are exercised with the default node limits.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from differential import Arg, Command

T = TypeVar("T")

STREAM_KEYS = ("s1", "s2", "s3")
STRING_KEY = "str1"
MISSING_KEY = "nokey"
GROUPS = ("g1", "g2")
CONSUMERS = ("c1", "c2", "c3")
FIELD_NAMES = ("f", "name", "n")

FAR_PAST_IDLE_MS = 10**12        # a min-idle-time only entries claimed with TIME in the far past meet
BEYOND_NOW_MS = 3 * 10**12       # IDLE larger than "now": Redis clamps the delivery time to now
FAR_FUTURE_UNIX_MS = 99_999_999_999_999
MAX_ID = "18446744073709551615-18446744073709551615"

BIG_STREAM = "s1"                # trimmed gently so it crosses the 100-entries-per-node boundary
BIG_MAXLENS = (90, 100, 101, 120, 150, 200, 300)
SMALL_MAXLENS = (0, 1, 3, 10, 50, 100)

BAD_IDS = ("abc", "1-x", "-1", "1-2-3", "", "18446744073709551616", "1-", "0x10", "1.5", "(")
DEFAULT_INVALID_SHARE = 0.08


@dataclass
class StreamModel:
    """What the generator believes about one stream: its last ID and the IDs it added."""

    last: tuple[int, int] = (0, 0)
    ids: list[tuple[int, int]] = field(default_factory=list)


def format_id(stream_id: tuple[int, int]) -> str:
    return f"{stream_id[0]}-{stream_id[1]}"


@dataclass(frozen=True)
class Family:
    """A command family: how often it is picked and how to build valid / invalid calls."""

    name: str
    weight: float
    valid: Callable[["CommandGenerator"], list[Command]]
    invalid: Callable[["CommandGenerator"], Command]


class CommandGenerator:
    """Deterministic producer of command sequences; one instance per sequence."""

    def __init__(self, seed: int, *, invalid_share: float = DEFAULT_INVALID_SHARE) -> None:
        self.rng = random.Random(seed)
        self.invalid_share = invalid_share
        self.streams = {key: StreamModel() for key in STREAM_KEYS}
        self.retyped: set[str] = set()   # stream keys currently overwritten by SET
        self.groups: dict[str, set[str]] = {key: set() for key in STREAM_KEYS}

    # ---- public API -------------------------------------------------------------------------

    def sequence(self, length: int) -> list[Command]:
        """``length`` commands; bursts are cut at the end so the length is exact."""
        commands: list[Command] = []
        while len(commands) < length:
            commands.extend(self.next_commands())
        return commands[:length]

    def next_commands(self) -> list[Command]:
        """One pick: a family, then either a deliberately invalid call or valid call(s)."""
        family = self.rng.choices(FAMILIES, weights=[f.weight for f in FAMILIES])[0]
        if self.rng.random() < self.invalid_share:
            return [family.invalid(self)]
        return family.valid(self)

    # ---- small random helpers ---------------------------------------------------------------

    def chance(self, probability: float) -> bool:
        return self.rng.random() < probability

    def pick(self, options: Sequence[T]) -> T:
        return self.rng.choice(options)

    def word(self, token: str) -> str:
        """Command names and option tokens are case-insensitive; vary the case now and then."""
        roll = self.rng.random()
        if roll < 0.08:
            return token.lower()
        if roll < 0.10:
            return token.capitalize()
        return token

    def stream_key(self) -> str:
        return self.rng.choices(STREAM_KEYS, weights=(5, 3, 2))[0]

    def any_key(self) -> str:
        """Mostly streams; sometimes the string key (WRONGTYPE) or a missing key."""
        roll = self.rng.random()
        if roll < 0.04:
            return STRING_KEY
        if roll < 0.07:
            return MISSING_KEY
        return self.stream_key()

    def group(self) -> str:
        return self.pick(GROUPS) if self.chance(0.97) else "nogroup"

    def group_key(self) -> str:
        """Key for a group command: usually a stream that (per the model) has a consumer group."""
        with_groups = [k for k in STREAM_KEYS if self.groups[k] and k not in self.retyped]
        if with_groups and self.chance(0.85):
            return self.pick(with_groups)
        return self.any_key()

    def group_of(self, key: str) -> str:
        """Usually a group the model believes exists on ``key``; otherwise any group name."""
        known = sorted(self.groups.get(key, ()))
        if known and self.chance(0.9):
            return self.pick(known)
        return self.group()

    def forget_key(self, key: str) -> None:
        """The key was deleted or overwritten: its entries and groups are gone."""
        if key in self.streams:
            self.streams[key].ids.clear()
            self.groups[key].clear()

    def consumer(self) -> str:
        return self.pick(CONSUMERS)

    def count(self, options: tuple[int, ...] = (1, 2, 3, 5, 10, 100)) -> int:
        return self.pick(options)

    def bad_id(self) -> str:
        return self.pick(BAD_IDS)

    # ---- stream IDs -------------------------------------------------------------------------

    def weird(self, text: str) -> str:
        """Forms Redis' strtoull accepts for the ms part: '+5', ' 5', '005' (kept rare)."""
        if not self.chance(0.03) or text[:1] in "-+(":
            return text
        return self.pick(("+", " ", "00")) + text

    def new_id(self, key: str) -> str:
        """An ID above the modelled top, as 'ms-seq', 'ms' or 'ms-*'; updates the model."""
        model = self.streams[key]
        ms = model.last[0] + self.pick((0, 1, 1, 1, 2, 5))
        seq = model.last[1] + 1 if ms == model.last[0] else self.pick((0, 0, 0, 1, 7))
        model.last = (ms, seq)
        model.ids.append(model.last)
        if seq == 0 and self.chance(0.1):
            return self.weird(str(ms))
        if self.chance(0.2):
            return self.weird(f"{ms}-*")
        return self.weird(f"{ms}-{seq}")

    def old_id(self, key: str) -> str:
        """An ID the stream probably holds (or held); sometimes one it never had."""
        ids = self.streams[key].ids if key in self.streams else []
        if not ids or self.chance(0.1):
            return f"{self.rng.randint(0, 60)}-{self.pick((0, 1))}"
        return self.weird(format_id(self.rng.choice(ids[-150:])))

    def early_id(self, key: str) -> str:
        """An ID from the oldest fifth of what was added: MINID trims a little, not everything."""
        ids = self.streams[key].ids
        if not ids:
            return "0"
        return format_id(self.rng.choice(ids[: max(1, len(ids) // 5)]))

    def range_id(self, key: str) -> str:
        """A range bound: - / +, an existing ID, an incomplete ms, or an exclusive '(' bound."""
        roll = self.rng.random()
        if roll < 0.25:
            return self.pick(("-", "+"))
        if roll < 0.35:
            return str(self.rng.randint(0, 80))
        if roll < 0.50:
            return "(" + self.old_id(key)
        return self.old_id(key)

    def read_id(self, key: str) -> str:
        """A 'last seen' ID for XREAD: 0, $, an existing ID or an incomplete ms."""
        return self.pick(("0", "0-0", "$", self.old_id(key), self.old_id(key), str(self.rng.randint(0, 40))))

    # ---- field/value pairs and trimming -----------------------------------------------------

    def fields(self) -> list[Arg]:
        """1-2 pairs (rarely 3) of short fields, so node size limits stay count-driven mostly."""
        pairs = self.rng.choices((1, 2, 3), weights=(70, 25, 5))[0]
        names = self.rng.sample(FIELD_NAMES, pairs) if self.chance(0.3) else list(FIELD_NAMES[:pairs])
        out: list[Arg] = []
        for name in names:
            out += [name, self.value()]
        return out

    def value(self) -> Arg:
        roll = self.rng.random()
        if roll < 0.02:
            return b"\xff\x00bin"
        if roll < 0.05:
            return ""
        if roll < 0.3:
            return self.rng.randint(0, 1000)
        return f"v{self.rng.randint(0, 99)}"

    def trim_args(self, key: str) -> list[Arg]:
        """MAXLEN/MINID with '=', '~' or nothing, and LIMIT only where Redis accepts it (with '~')."""
        strategy = "MAXLEN" if self.chance(0.7) else "MINID"
        operator = self.pick(("", "=", "~", "~"))
        big = key == BIG_STREAM
        if strategy == "MAXLEN":
            threshold: Arg = self.pick(BIG_MAXLENS if big else SMALL_MAXLENS)
        else:
            threshold = self.early_id(key) if big else self.old_id(key)
        args: list[Arg] = [self.word(strategy)] + ([operator] if operator else []) + [threshold]
        if operator == "~" and self.chance(0.3):
            args += [self.word("LIMIT"), self.pick((0, 10, 50, 100, 1000))]
        return args


# ---- valid builders -------------------------------------------------------------------------


def xadd(gen: CommandGenerator) -> list[Command]:
    """Usually one XADD; sometimes a burst on one stream to cross node boundaries."""
    burst = gen.rng.randint(10, 40) if gen.chance(0.05) else 1
    key = BIG_STREAM if burst > 1 and gen.chance(0.7) else gen.stream_key()
    return [_one_xadd(gen, key, trim=burst == 1) for _ in range(burst)]


def _one_xadd(gen: CommandGenerator, key: str, *, trim: bool) -> Command:
    options: list[Arg] = []
    if gen.chance(0.1):
        options.append(gen.word("NOMKSTREAM"))
    if trim and gen.chance(0.2):
        options += gen.trim_args(key)
    return (gen.word("XADD"), key, *options, gen.new_id(key), *gen.fields())


def xlen(gen: CommandGenerator) -> list[Command]:
    return [(gen.word("XLEN"), gen.any_key())]


def xrange(gen: CommandGenerator) -> list[Command]:
    key = gen.any_key()
    name = gen.pick(("XRANGE", "XREVRANGE"))
    count: list[Arg] = [gen.word("COUNT"), gen.count((0, 1, 2, 5, 10, 100, -1))] if gen.chance(0.5) else []
    return [(gen.word(name), key, gen.range_id(key), gen.range_id(key), *count)]


def xdel(gen: CommandGenerator) -> list[Command]:
    key = gen.any_key()
    return [(gen.word("XDEL"), key, *[gen.old_id(key) for _ in range(gen.rng.randint(1, 3))])]


def xtrim(gen: CommandGenerator) -> list[Command]:
    key = gen.any_key()
    return [(gen.word("XTRIM"), key, *gen.trim_args(key))]


def xsetid(gen: CommandGenerator) -> list[Command]:
    """XSETID to an ID at/above the top; the model follows so later XADDs stay valid."""
    key = gen.stream_key()
    model = gen.streams[key]
    model.last = (model.last[0] + gen.pick((0, 1, 10)), model.last[1] + 1)
    args: list[Arg] = [format_id(model.last)]
    if gen.chance(0.4):
        args += [gen.word("ENTRIESADDED"), gen.rng.randint(1000, 2000)]
    if gen.chance(0.4):
        args += [gen.word("MAXDELETEDID"), gen.old_id(key)]
    return [(gen.word("XSETID"), key, *args)]


def xread(gen: CommandGenerator) -> list[Command]:
    keys = gen.rng.sample(STREAM_KEYS, gen.rng.randint(1, 3))
    if gen.chance(0.05):
        keys.append(gen.pick((STRING_KEY, MISSING_KEY)))
    count: list[Arg] = [gen.word("COUNT"), gen.count((0, 1, 2, 5, 50))] if gen.chance(0.6) else []
    return [(gen.word("XREAD"), *count, gen.word("STREAMS"), *keys, *[gen.read_id(k) for k in keys])]


def xgroup(gen: CommandGenerator) -> list[Command]:
    """CREATE (with MKSTREAM / ENTRIESREAD), SETID, DESTROY, CREATECONSUMER, DELCONSUMER."""
    sub = gen.rng.choices(("CREATE", "SETID", "DESTROY", "CREATECONSUMER", "DELCONSUMER"),
                          weights=(40, 15, 10, 15, 20))[0]
    if sub == "CREATE":
        return [_xgroup_create(gen)]
    key = gen.group_key()
    group = gen.group_of(key)
    head: tuple[Arg, ...] = (gen.word("XGROUP"), gen.word(sub), key, group)
    if sub in ("CREATECONSUMER", "DELCONSUMER"):
        return [(*head, gen.consumer())]
    if sub == "DESTROY":
        gen.groups.get(key, set()).discard(group)
        return [head]
    return [(*head, _group_start(gen, key), *_entries_read(gen))]


def _xgroup_create(gen: CommandGenerator) -> Command:
    """Mostly a group the model does not have yet (BUSYGROUP stays a natural minority)."""
    key = gen.any_key()
    missing = [g for g in GROUPS if g not in gen.groups.get(key, ())]
    group = gen.pick(missing) if missing and gen.chance(0.85) else gen.group()
    mkstream = key != MISSING_KEY and gen.chance(0.5)
    if key in gen.groups and key not in gen.retyped and (mkstream or gen.streams[key].ids):
        gen.groups[key].add(group)
    extra: list[Arg] = [gen.word("MKSTREAM")] if mkstream else []
    return (gen.word("XGROUP"), gen.word("CREATE"), key, group, _group_start(gen, key),
            *extra, *_entries_read(gen))


def _group_start(gen: CommandGenerator, key: str) -> str:
    return gen.pick(("0", "$", "0-0", gen.old_id(key)))


def _entries_read(gen: CommandGenerator) -> list[Arg]:
    return [gen.word("ENTRIESREAD"), gen.pick((0, 1, 3, -1))] if gen.chance(0.1) else []


def xreadgroup(gen: CommandGenerator) -> list[Command]:
    """Reads with '>' mostly, history reads otherwise; a second stream only if it has the group."""
    first = gen.group_key()
    group = gen.group_of(first)
    others = [k for k in STREAM_KEYS if k != first and group in gen.groups[k]]
    keys = [first] + ([gen.pick(others)] if others and gen.chance(0.25) else [])
    options: list[Arg] = []
    if gen.chance(0.6):
        options += [gen.word("COUNT"), gen.count((1, 2, 3, 10))]
    if gen.chance(0.15):
        options.append(gen.word("NOACK"))
    ids = [">" if gen.chance(0.75) else gen.pick(("0", "0-0", gen.old_id(k))) for k in keys]
    return [(gen.word("XREADGROUP"), gen.word("GROUP"), group, gen.consumer(), *options,
             gen.word("STREAMS"), *keys, *ids)]


def xack(gen: CommandGenerator) -> list[Command]:
    key = gen.group_key()
    return [(gen.word("XACK"), key, gen.group_of(key), *[gen.old_id(key) for _ in range(gen.rng.randint(1, 3))])]


def xpending(gen: CommandGenerator) -> list[Command]:
    """Summary form, or extended with optional IDLE (0 or far past only) and consumer filter."""
    key = gen.group_key()
    group = gen.group_of(key)
    if gen.chance(0.35):
        return [(gen.word("XPENDING"), key, group)]
    idle: list[Arg] = [gen.word("IDLE"), gen.pick((0, FAR_PAST_IDLE_MS))] if gen.chance(0.2) else []
    consumer: list[Arg] = [gen.consumer()] if gen.chance(0.4) else []
    return [(gen.word("XPENDING"), key, group, *idle, gen.range_id(key), gen.range_id(key),
             gen.count((0, 1, 3, 10, 100, -1)), *consumer)]


def _claim_options(gen: CommandGenerator, key: str) -> list[Arg]:
    """XCLAIM options restricted to clock-independent outcomes."""
    options: list[Arg] = []
    if gen.chance(0.15):
        options += [gen.word("IDLE"), gen.pick((0, 5, FAR_PAST_IDLE_MS + 7, BEYOND_NOW_MS))]
    if gen.chance(0.15):
        options += [gen.word("TIME"), gen.pick((0, 1, 1000, FAR_FUTURE_UNIX_MS))]
    if gen.chance(0.15):
        options += [gen.word("RETRYCOUNT"), gen.pick((0, 3, -1))]
    for flag, probability in (("FORCE", 0.15), ("JUSTID", 0.3)):
        if gen.chance(probability):
            options.append(gen.word(flag))
    if gen.chance(0.05):
        options += [gen.word("LASTID"), gen.old_id(key)]
    return options


def xclaim(gen: CommandGenerator) -> list[Command]:
    key = gen.group_key()
    min_idle = gen.pick((0, 0, 0, FAR_PAST_IDLE_MS))
    ids = [gen.old_id(key) for _ in range(gen.rng.randint(1, 3))]
    return [(gen.word("XCLAIM"), key, gen.group_of(key), gen.consumer(), min_idle, *ids, *_claim_options(gen, key))]


def xautoclaim(gen: CommandGenerator) -> list[Command]:
    key = gen.group_key()
    start = gen.pick(("0", "0-0", "-", gen.old_id(key), "(" + gen.old_id(key)))
    options: list[Arg] = [gen.word("COUNT"), gen.count((1, 2, 5, 100))] if gen.chance(0.6) else []
    if gen.chance(0.3):
        options.append(gen.word("JUSTID"))
    return [(gen.word("XAUTOCLAIM"), key, gen.group_of(key), gen.consumer(),
             gen.pick((0, 0, FAR_PAST_IDLE_MS)), start, *options)]


def xinfo(gen: CommandGenerator) -> list[Command]:
    sub = gen.rng.choices(("STREAM", "GROUPS", "CONSUMERS"), weights=(50, 25, 25))[0]
    key = gen.group_key() if sub == "CONSUMERS" else gen.any_key()
    if sub == "CONSUMERS":
        return [(gen.word("XINFO"), gen.word(sub), key, gen.group_of(key))]
    if sub == "GROUPS" or gen.chance(0.5):
        return [(gen.word("XINFO"), gen.word(sub), key)]
    count: list[Arg] = [gen.word("COUNT"), gen.count((0, 1, 5, 10, -1))] if gen.chance(0.5) else []
    return [(gen.word("XINFO"), gen.word(sub), key, gen.word("FULL"), *count)]


def keyspace(gen: CommandGenerator) -> list[Command]:
    """Plain key commands; SET on s3 retypes a stream (WRONGTYPE), DEL recreates it later."""
    if gen.retyped and gen.chance(0.5):
        key = min(gen.retyped)          # sets have no stable order across processes
        gen.retyped.discard(key)
        gen.forget_key(key)
        return [(gen.word("DEL"), key)]
    roll = gen.rng.random()
    if roll < 0.15:
        key = gen.pick((STRING_KEY,) * 5 + ("s3",))
        if key in gen.streams:
            gen.retyped.add(key)
            gen.forget_key(key)
        return [(gen.word("SET"), key, f"v{gen.rng.randint(0, 9)}")]
    if roll < 0.25:
        key = gen.pick(("s2", "s3", STRING_KEY))
        gen.retyped.discard(key)
        gen.forget_key(key)
        return [(gen.word("DEL"), key)]
    if roll < 0.45:
        return [(gen.word("GET"), STRING_KEY if gen.chance(0.8) else gen.any_key())]
    name = gen.pick(("EXISTS", "TYPE"))
    return [(gen.word(name), gen.any_key())]


# ---- invalid builders -----------------------------------------------------------------------
# Each returns one command that must fail on Redis: wrong arity, bad IDs, bad numbers,
# unknown options/subcommands, wrong type, syntax errors.


def _pick_invalid(gen: CommandGenerator, makers: tuple[Callable[[CommandGenerator], Command], ...]) -> Command:
    return gen.rng.choice(makers)(gen)


def bad_xadd(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    top = gen.streams[key].last
    makers = (
        lambda g: ("XADD", key, format_id((top[0] + 1, 0)), "f"),           # odd field/value count
        lambda g: ("XADD", key),                                            # arity
        lambda g: ("XADD", key, format_id(top), "f", "v") if top != (0, 0) else ("XADD", key, "0-0", "f", "v"),
        lambda g: ("XADD", key, "0-0", "f", "v"),                           # must be > 0-0
        lambda g: ("XADD", key, g.bad_id(), "f", "v"),
        lambda g: ("XADD", key, "MAXLEN", -1, "999999-0", "f", "v"),
        lambda g: ("XADD", key, "MAXLEN", "abc", "999999-0", "f", "v"),
        lambda g: ("XADD", key, "MAXLEN", "=", 5, "LIMIT", 5, "999999-0", "f", "v"),  # LIMIT needs ~
        lambda g: ("XADD", key, "MAXLEN", 5, "MINID", "1", "999999-0", "f", "v"),
        lambda g: ("XADD", key, "LIMIT", 5, "999999-0", "f", "v"),
        lambda g: ("XADD", key, "FOO", "999999-0", "f", "v"),               # FOO is taken as the ID
        lambda g: ("XADD", STRING_KEY, "1-0", "f", "v"),                    # WRONGTYPE
        lambda g: ("XADD", key, "MAXLEN", "~", 5, "LIMIT", -1, "999999-0", "f", "v"),
    )
    return _pick_invalid(gen, makers)


def bad_read_only(gen: CommandGenerator) -> Command:
    """XLEN / XRANGE / XREVRANGE failures."""
    key = gen.stream_key()
    makers = (
        lambda g: ("XLEN",),
        lambda g: ("XLEN", key, "extra"),
        lambda g: ("XLEN", STRING_KEY),
        lambda g: ("XRANGE", key, "-"),
        lambda g: ("XRANGE", key, g.bad_id(), "+"),
        lambda g: ("XRANGE", key, "(-", "+"),
        lambda g: ("XRANGE", key, "-", "(0-0"),                            # invalid end ID for the interval
        lambda g: ("XREVRANGE", key, "+", "(" + MAX_ID),                   # invalid start ID for the interval
        lambda g: ("XRANGE", key, "-", "+", "COUNT"),
        lambda g: ("XRANGE", key, "-", "+", "COUNT", "abc"),
        lambda g: ("XREVRANGE", key, "+", "-", "FOO", 1),
        lambda g: ("XRANGE", STRING_KEY, "-", "+"),
    )
    return _pick_invalid(gen, makers)


def bad_xdel_xtrim(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XDEL", key),
        lambda g: ("XDEL", key, "1-0", g.bad_id()),
        lambda g: ("XDEL", key, "-"),
        lambda g: ("XDEL", STRING_KEY, "1-0"),
        lambda g: ("XTRIM", key),
        lambda g: ("XTRIM", key, "FOO", 1),
        lambda g: ("XTRIM", key, "MAXLEN", 1, "LIMIT", 10),                # LIMIT without ~
        lambda g: ("XTRIM", key, "MAXLEN", "abc"),
        lambda g: ("XTRIM", key, "MINID", g.bad_id()),
        lambda g: ("XTRIM", key, "LIMIT", 10),
        lambda g: ("XTRIM", STRING_KEY, "MAXLEN", 1),
    )
    return _pick_invalid(gen, makers)


def bad_xsetid(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XSETID", key),
        lambda g: ("XSETID", key, "0-1"),                                  # below the top item (usually)
        lambda g: ("XSETID", key, g.bad_id()),
        lambda g: ("XSETID", key, "0-1", "ENTRIESADDED", 0),
        lambda g: ("XSETID", key, "5-0", "MAXDELETEDID", "6-0"),
        lambda g: ("XSETID", key, MAX_ID, "ENTRIESADDED", -1),
        lambda g: ("XSETID", key, MAX_ID, "FOO"),
        lambda g: ("XSETID", MISSING_KEY, "5-0"),
        lambda g: ("XSETID", STRING_KEY, "5-0"),
    )
    return _pick_invalid(gen, makers)


def bad_xread(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XREAD", "STREAMS", key),
        lambda g: ("XREAD", "STREAMS", key, "s2", "0"),                    # unbalanced
        lambda g: ("XREAD", "STREAMS", key, ">"),
        lambda g: ("XREAD", "COUNT", "abc", "STREAMS", key, "0"),
        lambda g: ("XREAD", "GROUP", "g1", "c1", "STREAMS", key, "0"),
        lambda g: ("XREAD", "NOACK", "STREAMS", key, "0"),
        lambda g: ("XREAD", "FOO", "STREAMS", key, "0"),
        lambda g: ("XREAD", "STREAMS", key, g.bad_id()),
        lambda g: ("XREAD", "STREAMS", STRING_KEY, "0"),
    )
    return _pick_invalid(gen, makers)


def bad_xgroup(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XGROUP",),
        lambda g: ("XGROUP", "CREATE", key, "g1"),
        lambda g: ("XGROUP", "FOO", key, "g1"),
        lambda g: ("XGROUP", "CREATE", key, "g9", g.bad_id(), "MKSTREAM"),
        lambda g: ("XGROUP", "CREATE", key, "g9", "0", "FOO"),
        lambda g: ("XGROUP", "CREATE", key, "g9", "0", "ENTRIESREAD", -5),
        lambda g: ("XGROUP", "CREATE", key, "g9", "0", "ENTRIESREAD", "abc"),
        lambda g: ("XGROUP", "CREATE", MISSING_KEY, "g1", "0"),
        lambda g: ("XGROUP", "CREATE", STRING_KEY, "g1", "0", "MKSTREAM"),
        lambda g: ("XGROUP", "SETID", key, "nogroup", "0"),
        lambda g: ("XGROUP", "SETID", key, "g1", "0", "MKSTREAM"),
        lambda g: ("XGROUP", "DESTROY", key),
        lambda g: ("XGROUP", "CREATECONSUMER", key, "nogroup", "c1"),
        lambda g: ("XGROUP", "DELCONSUMER", key, "g1"),
    )
    return _pick_invalid(gen, makers)


def bad_xreadgroup(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", key, "$"),
        lambda g: ("XREADGROUP", "GROUP", "g1", "STREAMS", key, ">"),
        lambda g: ("XREADGROUP", "COUNT", 1, "NOACK", "STREAMS", key, ">"),  # missing GROUP
        lambda g: ("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", key, "s2", ">"),
        lambda g: ("XREADGROUP", "GROUP", "g1", "c1", "COUNT", "abc", "STREAMS", key, ">"),
        lambda g: ("XREADGROUP", "GROUP", "g1", "c1", "FOO", "STREAMS", key, ">"),
        lambda g: ("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", key, g.bad_id()),
        lambda g: ("XREADGROUP", "GROUP", "nogroup", "c1", "STREAMS", key, ">"),
        lambda g: ("XREADGROUP", "GROUP", "g1", "c1", "STREAMS", STRING_KEY, ">"),
    )
    return _pick_invalid(gen, makers)


def bad_xack_xpending(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XACK", key, "g1"),
        lambda g: ("XACK", key, "g1", g.bad_id()),
        lambda g: ("XACK", STRING_KEY, "g1", "1-0"),
        lambda g: ("XPENDING", key),
        lambda g: ("XPENDING", key, "g1", "-"),
        lambda g: ("XPENDING", key, "g1", "-", "+", "abc"),
        lambda g: ("XPENDING", key, "g1", "IDLE", "abc", "-", "+", 10),
        lambda g: ("XPENDING", key, "g1", "IDLE", 0, "-", "+"),
        lambda g: ("XPENDING", key, "g1", g.bad_id(), "+", 10),
        lambda g: ("XPENDING", key, "nogroup"),
        lambda g: ("XPENDING", STRING_KEY, "g1"),
    )
    return _pick_invalid(gen, makers)


def bad_claim(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XCLAIM", key, "g1", "c1", 0),
        lambda g: ("XCLAIM", key, "g1", "c1", "abc", "1-0"),
        lambda g: ("XCLAIM", key, "g1", "c1", 0, "1-0", "FOO"),
        lambda g: ("XCLAIM", key, "g1", "c1", 0, "1-0", "IDLE", "abc"),
        lambda g: ("XCLAIM", key, "g1", "c1", 0, "1-0", "RETRYCOUNT", "abc"),
        lambda g: ("XCLAIM", key, "g1", "c1", 0, "1-0", "LASTID", "abc"),
        lambda g: ("XCLAIM", key, "nogroup", "c1", 0, "1-0"),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", 0),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", 0, "0", "COUNT", 0),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", 0, "0", "COUNT", "abc"),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", "abc", "0"),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", 0, g.bad_id()),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", 0, "0", "FOO"),
        lambda g: ("XAUTOCLAIM", key, "g1", "c1", 0, "(" + MAX_ID),
        lambda g: ("XAUTOCLAIM", STRING_KEY, "g1", "c1", 0, "0"),
    )
    return _pick_invalid(gen, makers)


def bad_xinfo(gen: CommandGenerator) -> Command:
    key = gen.stream_key()
    makers = (
        lambda g: ("XINFO",),
        lambda g: ("XINFO", "STREAM"),
        lambda g: ("XINFO", "FOO", key),
        lambda g: ("XINFO", "STREAM", MISSING_KEY),
        lambda g: ("XINFO", "STREAM", key, "FULL", "COUNT"),
        lambda g: ("XINFO", "STREAM", key, "FULL", "COUNT", "abc"),
        lambda g: ("XINFO", "STREAM", key, "BLAH"),
        lambda g: ("XINFO", "GROUPS", key, "extra"),
        lambda g: ("XINFO", "CONSUMERS", key),
        lambda g: ("XINFO", "CONSUMERS", key, "nogroup"),
        lambda g: ("XINFO", "GROUPS", STRING_KEY),
    )
    return _pick_invalid(gen, makers)


def bad_keyspace(gen: CommandGenerator) -> Command:
    makers = (
        lambda g: ("GET", g.stream_key()),                                  # WRONGTYPE on a stream
        lambda g: ("SET", STRING_KEY),
        lambda g: ("TYPE",),
        lambda g: ("EXISTS",),
    )
    return _pick_invalid(gen, makers)


FAMILIES: tuple[Family, ...] = (
    Family("XADD", 17, xadd, bad_xadd),
    Family("XLEN", 2, xlen, bad_read_only),
    Family("XRANGE/XREVRANGE", 7, xrange, bad_read_only),
    Family("XDEL", 3, xdel, bad_xdel_xtrim),
    Family("XTRIM", 3, xtrim, bad_xdel_xtrim),
    Family("XSETID", 1.5, xsetid, bad_xsetid),
    Family("XREAD", 5, xread, bad_xread),
    Family("XGROUP", 7, xgroup, bad_xgroup),
    Family("XREADGROUP", 10, xreadgroup, bad_xreadgroup),
    Family("XACK", 5, xack, bad_xack_xpending),
    Family("XPENDING", 6, xpending, bad_xack_xpending),
    Family("XCLAIM", 5, xclaim, bad_claim),
    Family("XAUTOCLAIM", 4, xautoclaim, bad_claim),
    Family("XINFO", 6, xinfo, bad_xinfo),
    Family("keyspace", 3, keyspace, bad_keyspace),
)


def generate(seed: int, length: int, *, invalid_share: float = DEFAULT_INVALID_SHARE) -> list[Command]:
    """The command sequence for one seed (pure function of its arguments)."""
    return CommandGenerator(seed, invalid_share=invalid_share).sequence(length)
