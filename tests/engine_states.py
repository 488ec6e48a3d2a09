"""Engine states for the persistence and replay tests, and what must survive them.

`random_engine(seed)` runs a seeded mix of stream, group and string commands through
Engine.execute under a ManualClock (auto and explicit IDs, several field layouts,
binary and empty strings, trims, deletions, XSETID, groups with unknown
entries-read, claims, acks, consumers without pending entries, TTLs, several
databases), so states include empty streams with a last ID, pending entries whose
stream entry is gone, and the like. `observe(engine)` returns everything a client
can see about every key, checking each group's three PEL trees on the way.
`grouped_streams(clock, keys, entries)` is the small start of the consumer-group tests.
`effect_log(engine)` and `replay(log, clock)` carry a run's effects into a fresh engine.
"""
from __future__ import annotations

import random

from engine import Engine, ManualClock, ResponseError
from native.groups_probe import pending_by_time, verify_group
from engine.core.stream import Stream

T0 = 1_700_000_000_000
DATABASES = (0, 1, 5)
STREAM_KEYS = (b"s1", b"s2", b"\xffbin\x00key")
GROUPS = (b"g1", b"g2")
CONSUMERS = (b"alice", b"bob", b"\xc3\xa9ve", b"")
FIELD_SETS = ([b"f"], [b"f", b"g"], [b"name", b"n"], [b""], [b"\x00\xff"])


def contents(db) -> dict:
    """Every key of a Database with its value, whether due or not."""
    return {key: value for key, value, _ in db.items()}


def expiries(db) -> dict:
    """Every key of a Database that has a TTL, with its absolute expiry in ms."""
    return {key: when for key, _, when in db.items() if when is not None}


def grouped_streams(clock: ManualClock, keys: tuple[str, ...] = ("s",),
                    entries: int = 3) -> Engine:
    """An engine on `clock` whose streams `keys` each hold entries 1-0..<entries>-0
    (field f, values v1, v2, ...) and a group g from 0 that has read nothing."""
    eng = Engine(clock=clock)
    for key in keys:
        for i in range(1, entries + 1):
            eng.execute("XADD", key, f"{i}-0", "f", f"v{i}")
        eng.execute("XGROUP", "CREATE", key, "g", "0")
    return eng


def effect_log(engine: Engine) -> list:
    """The (database, effect) pairs `engine` reports from now on, as they come."""
    log: list = []
    engine.add_effect_listener(lambda db, effects: log.extend((db, e) for e in effects))
    return log


def replay(log: list, clock: ManualClock) -> Engine:
    """A fresh engine on `clock` that ran each logged effect in its database; database 0
    selected."""
    fresh = Engine(clock=clock)
    for db, argv in log:
        fresh.select(db)
        fresh.execute(*argv)
    fresh.select(0)
    return fresh


def random_value(rng: random.Random) -> bytes:
    kind = rng.random()
    if kind < 0.2:
        return b""
    if kind < 0.4:
        return str(rng.randrange(-10**6, 10**6)).encode()
    if kind < 0.5:
        return bytes(rng.randrange(256) for _ in range(rng.choice((1, 40, 300))))
    return b"v%d" % rng.randrange(1000)


class Workload:
    """One seeded run; `ids` remembers the IDs each stream got (live or not)."""

    def __init__(self, seed: int, *, t0: int = T0, node_max_entries: int | None = None):
        self.rng = random.Random(seed)
        self.clock = ManualClock(t0)
        rng = self.rng
        self.engine = Engine(clock=self.clock,
                             stream_node_max_entries=node_max_entries or rng.choice((3, 10, 100)),
                             stream_node_max_bytes=rng.choice((0, 200, 4096)))
        self.ids: dict[tuple[int, bytes], list[bytes]] = {}
        self.db = 0

    def run(self, steps: int) -> Engine:
        ops = [self.xadd] * 8 + [self.xdel, self.xtrim, self.xsetid, self.group,
                                 self.group, self.read, self.read, self.read, self.claim,
                                 self.claim, self.autoclaim, self.ack, self.string,
                                 self.expire, self.select, self.consumer]
        for _ in range(steps):
            self.clock.advance(self.rng.choice((0, 0, 1, 3, 250)))
            try:
                self.rng.choice(ops)()
            except ResponseError:
                pass
        self.engine.select(0)
        return self.engine

    # -- helpers ---------------------------------------------------------------------

    def x(self, *args):
        return self.engine.execute(*args)

    def key(self) -> bytes:
        return self.rng.choice(STREAM_KEYS)

    def some_ids(self, key: bytes, n: int) -> list[bytes]:
        known = self.ids.get((self.db, key)) or [b"1-1"]
        return [self.rng.choice(known) for _ in range(n)]

    # -- operations ------------------------------------------------------------------

    def xadd(self) -> None:
        rng, key = self.rng, self.key()
        args: list = [b"XADD", key]
        if rng.random() < 0.08:
            args += [b"MAXLEN", rng.choice((b"~", b"=")), rng.choice((0, 1, 5, 20))]
        elif rng.random() < 0.08:
            args += [b"MINID", rng.choice((b"~", b"=")), self.some_ids(key, 1)[0]]
        if rng.random() < 0.6:
            args.append(b"*")
        else:
            ms = self.clock.now_ms() + rng.choice((-5, 0, 0, 1))
            args.append(b"%d-%d" % (ms, rng.randrange(3)) if rng.random() < 0.7 else b"%d-*" % ms)
        fields = rng.choice(FIELD_SETS) if rng.random() < 0.8 else [b"other%d" % rng.randrange(3)]
        for name in fields:
            args += [name, random_value(rng)]
        reply = self.x(*args)
        if reply is not None:
            self.ids.setdefault((self.db, key), []).append(reply)

    def xdel(self) -> None:
        key = self.key()
        self.x(b"XDEL", key, *self.some_ids(key, self.rng.choice((1, 3, 30))))

    def xtrim(self) -> None:
        rng, key = self.rng, self.key()
        if rng.random() < 0.5:
            self.x(b"XTRIM", key, b"MAXLEN", rng.choice((b"~", b"=")), rng.randrange(30))
        else:
            self.x(b"XTRIM", key, b"MINID", rng.choice((b"~", b"=")), self.some_ids(key, 1)[0])

    def xsetid(self) -> None:
        rng, key = self.rng, self.key()
        info = dict(zip(*[iter(self.x(b"XINFO", b"STREAM", key))] * 2))
        ms, seq = map(int, info[b"last-generated-id"].split(b"-"))
        args = [b"XSETID", key, b"%d-%d" % (ms + rng.randrange(3), seq + rng.randrange(5))]
        if rng.random() < 0.5:
            args += [b"ENTRIESADDED", info[b"entries-added"] + rng.randrange(4)]
        if rng.random() < 0.5:
            args += [b"MAXDELETEDID", b"%d-0" % max(ms - rng.randrange(2), 0)]
        self.x(*args)

    def group(self) -> None:
        rng, key, group = self.rng, self.key(), self.rng.choice(GROUPS)
        roll = rng.random()
        if roll < 0.5:
            args = [b"XGROUP", b"CREATE", key, group,
                    rng.choice((b"$", b"0", self.some_ids(key, 1)[0])), b"MKSTREAM"]
            if rng.random() < 0.4:
                args += [b"ENTRIESREAD", rng.choice((-1, 0, 3, 1000))]
            self.x(*args)
        elif roll < 0.7:
            args = [b"XGROUP", b"SETID", key, group, rng.choice((b"$", b"0", self.some_ids(key, 1)[0]))]
            if rng.random() < 0.5:
                args += [b"ENTRIESREAD", rng.choice((-1, 0, 7))]
            self.x(*args)
        elif roll < 0.8:
            self.x(b"XGROUP", b"DESTROY", key, group)
        else:
            self.x(b"XGROUP", b"DELCONSUMER", key, group, rng.choice(CONSUMERS))

    def consumer(self) -> None:
        self.x(b"XGROUP", b"CREATECONSUMER", self.key(), self.rng.choice(GROUPS),
               self.rng.choice(CONSUMERS))

    def read(self) -> None:
        rng, key = self.rng, self.key()
        self.x(b"XREADGROUP", b"GROUP", rng.choice(GROUPS), rng.choice(CONSUMERS),
               b"COUNT", rng.choice((1, 5, 50)), b"STREAMS", key,
               b">" if rng.random() < 0.85 else b"0")

    def claim(self) -> None:
        rng, key = self.rng, self.key()
        args = [b"XCLAIM", key, rng.choice(GROUPS), rng.choice(CONSUMERS),
                rng.choice((0, 0, 100)), *self.some_ids(key, rng.choice((1, 4)))]
        if rng.random() < 0.3:
            args += [b"IDLE", rng.randrange(10_000)]
        elif rng.random() < 0.3:
            args += [b"TIME", self.clock.now_ms() - rng.randrange(10_000)]
        if rng.random() < 0.3:
            args += [b"RETRYCOUNT", rng.randrange(10)]
        if rng.random() < 0.3:
            args.append(b"FORCE")
        if rng.random() < 0.5:
            args.append(b"JUSTID")
        self.x(*args)

    def autoclaim(self) -> None:
        rng = self.rng
        self.x(b"XAUTOCLAIM", self.key(), rng.choice(GROUPS), rng.choice(CONSUMERS),
               rng.choice((0, 500)), b"0-0", b"COUNT", rng.choice((2, 20)))

    def ack(self) -> None:
        key = self.key()
        self.x(b"XACK", key, self.rng.choice(GROUPS), *self.some_ids(key, self.rng.choice((1, 5))))

    def string(self) -> None:
        rng = self.rng
        args = [b"SET", b"str%d" % rng.randrange(4), random_value(rng)]
        if rng.random() < 0.5:
            args += [b"PX", rng.randrange(1, 10**7)]
        self.x(*args)

    def expire(self) -> None:
        rng = self.rng
        key = rng.choice(STREAM_KEYS + (b"str0", b"str1"))
        if rng.random() < 0.7:
            self.x(b"PEXPIRE", key, rng.randrange(10**4, 10**8))
        else:
            self.x(b"PERSIST", key)

    def select(self) -> None:
        self.db = self.rng.choice(DATABASES)
        self.engine.select(self.db)


def random_engine(seed: int, steps: int = 400, **kw) -> Engine:
    return Workload(seed, **kw).run(steps)


# -- what must survive --------------------------------------------------------------------

def as_dict(flat: list) -> dict:
    return dict(zip(flat[::2], flat[1::2]))


LAYOUT_FIELDS = (b"radix-tree-keys", b"radix-tree-nodes")


def stream_view(engine: Engine, key: bytes, *, consumer_times: bool = True,
                layout: bool = False) -> dict:
    """XINFO STREAM FULL as nested dicts, without the node layout unless `layout`
    (where one node ends depends on deletions made before a save, not on the data;
    a replay of the log reproduces it)."""
    full = as_dict(engine.execute(b"XINFO", b"STREAM", key, b"FULL", b"COUNT", 0))
    if not layout:
        for name in LAYOUT_FIELDS:
            full.pop(name)
    groups = []
    for g in full[b"groups"]:
        g = as_dict(g)
        consumers = [as_dict(c) for c in g[b"consumers"]]
        if not consumer_times:
            for c in consumers:
                c.pop(b"seen-time", None)
                c.pop(b"active-time", None)
        g[b"consumers"] = consumers
        groups.append(g)
    full[b"groups"] = groups
    return full


def observe(engine: Engine, *, consumer_times: bool = True, layout: bool = False,
            expire: bool = True) -> dict:
    """Every key of every database: strings with their expiry; streams with their
    expiry, XINFO STREAM FULL (entries, IDs, counters, groups, PEL with delivery
    times, counts and owners, consumers) and each group's pel_by_time. `expire`:
    keys whose TTL has passed are removed first."""
    state = {}
    if expire:
        engine.active_expire(1 << 30)
    for db in engine.databases:
        engine.select(db.index)
        for key, value, expiry in sorted(db.items(), key=lambda item: item[0]):
            if isinstance(value, Stream):
                by_time = {}
                for name, group in value.groups.items():
                    verify_group(group)
                    by_time[name] = pending_by_time(group)
                state[db.index, key] = ("stream", expiry,
                                        stream_view(engine, key, consumer_times=consumer_times,
                                                    layout=layout),
                                        by_time)
            elif isinstance(value, bytes):
                state[db.index, key] = ("string", expiry, value)
            else:
                state[db.index, key] = (value.TYPE_NAME, expiry, collection_view(value))
    engine.select(0)
    return state


def collection_view(value) -> list:
    """A list, hash or set as comparable data (hash and set order is not kept)."""
    record = value.to_record()
    if value.TYPE_NAME == b"list":
        return record
    if value.TYPE_NAME == b"hash":
        return sorted(zip(record[::2], record[1::2]))
    return sorted(record)


def logged_state(engine: Engine, layout: bool = True) -> dict:
    """What logging and reloading must preserve: observe() as the engine is (nothing
    expired on the way: a replay may run under a later clock), without consumer
    seen/active times (the log does not keep them, as in Redis); `layout` keeps the
    node boundaries (a replay reproduces them, a rewrite packs entries anew)."""
    return observe(engine, consumer_times=False, layout=layout, expire=False)


def mixed_workload(engine: Engine, clock: ManualClock, rng: random.Random, steps: int) -> None:
    """A mixed run on `clock` with auto IDs, approximate trims, claims, acks and
    expiry (the replay and AOF tests; a second run goes on with the first's keys)."""
    keys = [b"s1", b"s2"]
    for key in keys:
        if not engine.execute("EXISTS", key):    # a second run goes on with the first's
            engine.execute("XGROUP", "CREATE", key, "g1", "$", "MKSTREAM")
            engine.execute("XGROUP", "CREATE", key, "g2", "0")
    for _ in range(steps):
        clock.advance(rng.choice([0, 0, 1, 5, 50]))
        key = rng.choice(keys)
        op = rng.random()
        consumer = rng.choice(["c1", "c2", "c3"])
        group = rng.choice(["g1", "g2"])
        try:
            if op < 0.35:
                args = ["XADD", key]
                if rng.random() < 0.2:
                    args += ["MAXLEN", "~", str(rng.randint(50, 300))]
                engine.execute(*args, "*", "f", str(rng.random()), "n", "1")
            elif op < 0.5:
                engine.execute("XREADGROUP", "GROUP", group, consumer, "COUNT",
                               rng.randint(1, 20), "STREAMS", key, ">")
            elif op < 0.6:
                engine.execute("XREADGROUP", "GROUP", group, consumer, "COUNT",
                               rng.randint(1, 20), "CLAIM", rng.choice([0, 10, 100]),
                               "STREAMS", key, ">")
            elif op < 0.7:
                pending = engine.execute("XPENDING", key, group, "-", "+", 10)
                if pending:
                    engine.execute("XACK", key, group, *[p[0] for p in pending[:5]])
            elif op < 0.75:
                engine.execute("XAUTOCLAIM", key, group, consumer, 20, "0", "COUNT", 5)
            elif op < 0.8:
                pending = engine.execute("XPENDING", key, group, "-", "+", 3)
                if pending:
                    engine.execute("XCLAIM", key, group, consumer, 0,
                                   *[p[0] for p in pending], "IDLE", rng.randint(0, 500))
            elif op < 0.83:
                entries = engine.execute("XRANGE", key, "-", "+", "COUNT", 20)
                if entries:
                    engine.execute("XDEL", key, rng.choice(entries)[0])
            elif op < 0.85:
                engine.execute("XREADGROUP", "GROUP", group, consumer, "STREAMS", key, "0")
            elif op < 0.87:
                engine.execute("XGROUP", "DELCONSUMER", key, group, consumer)
            elif op < 0.89:
                engine.execute("XTRIM", key, "MINID", "~", f"{clock.now_ms() - 2000}-0")
            elif op < 0.92:
                engine.execute("SET", f"lock:{rng.randint(0, 5)}", "x", "PX", rng.randint(1, 200))
            elif op < 0.94:
                engine.execute("GET", f"lock:{rng.randint(0, 5)}")
            elif op < 0.95:
                engine.execute("XGROUP", "SETID", key, group, "0", "ENTRIESREAD", "0")
            else:
                engine.execute("XREADGROUP", "GROUP", group, consumer, "NOACK", "COUNT", 3,
                               "STREAMS", key, ">")
        except Exception as err:  # error replies are part of the run; nothing is logged
            assert "ERR" in str(err) or "NOGROUP" in str(err), err
