"""Stream storage (engine/core/stream.pyx): checked against a Python model of Redis's
node layout and trimming, and against a real redis-server for node boundaries
(XINFO radix-tree-keys), trimming results and memory per entry."""
import bisect
import random
import re

import pytest
import redis
from hypothesis import HealthCheck, given, settings, strategies as st

from engine.core.memory import used_bytes
from native.stream_probe import CHECKPOINT_EVERY as K, CHECKPOINT_NARROW_MAX, StreamTestView
from servers import RedisServer

MAX = 2**64 - 1
LO, HI = (0, 0), (MAX, MAX)
LP_MAX = 1 << 30


# ---- model: Redis's stream layout, with listpack sizes computed independently ----

_CANONICAL_INT = re.compile(rb"0|-?[1-9][0-9]*")


def lp_int(v):
    for lo, hi, size in ((0, 127, 2), (-4096, 4095, 3), (-32768, 32767, 4),
                         (-2**23, 2**23 - 1, 5), (-2**31, 2**31 - 1, 6)):
        if lo <= v <= hi:
            return size
    return 10


def lp_str(b):
    if _CANONICAL_INT.fullmatch(b) and -2**63 <= int(b) < 2**63:
        return lp_int(int(b))
    enc = len(b) + (1 if len(b) < 64 else 2 if len(b) < 4096 else 5)
    return enc + (1 if enc <= 127 else 2 if enc < 16383 else 3 if enc < 2097151 else 4)


def s64(v):
    v &= MAX
    return v - 2**64 if v >= 2**63 else v


class MNode:
    def __init__(self, id, fields):
        self.master = id
        self.mfields = fields[0::2]
        self.entries = []  # [id, fields, deleted]
        self.rest = 7 + lp_int(len(self.mfields)) + sum(map(lp_str, self.mfields)) + 2

    @property
    def live(self):
        return sum(1 for e in self.entries if not e[2])

    def lp_bytes(self):
        return self.rest + lp_int(self.live) + lp_int(len(self.entries) - self.live)


class Model:
    """Redis's t_stream.c behaviour on plain Python lists."""

    def __init__(self, max_bytes, max_entries):
        self.max_bytes = max_bytes if 0 < max_bytes <= LP_MAX else LP_MAX
        self.max_entries = max_entries
        self.nodes = []
        self.length = 0

    def append(self, id, fields):
        tail = self.nodes[-1] if self.nodes else None
        if tail and (tail.lp_bytes() + sum(map(len, fields)) >= self.max_bytes
                     or (self.max_entries and len(tail.entries) >= self.max_entries)):
            tail = None
        if tail is None:
            tail = MNode(id, fields)
            self.nodes.append(tail)
        same = fields[0::2] == tail.mfields
        n = len(fields) // 2
        size = 2 + lp_int(s64(id[0] - tail.master[0])) + lp_int(s64(id[1] - tail.master[1]))
        size += sum(map(lp_str, fields[1::2]))
        if not same:
            size += lp_int(n) + sum(map(lp_str, fields[0::2]))
        size += lp_int(n + 3 + (0 if same else n + 1))
        tail.rest += size
        tail.entries.append([id, list(fields), False])
        self.length += 1

    def delete(self, id):
        for node in self.nodes:
            for e in node.entries:
                if e[0] == id and not e[2]:
                    if node.live == 1:
                        self.nodes.remove(node)
                    else:
                        e[2] = True
                    self.length -= 1
                    return True
        return False

    def trim(self, strategy, maxlen=0, minid=LO, approx=False, limit=0):
        deleted = 0
        while self.nodes:
            node = self.nodes[0]
            if strategy == "maxlen" and self.length <= maxlen:
                break
            entries = node.live
            if limit and deleted + entries > limit:
                break
            if strategy == "maxlen":
                remove = self.length - entries >= maxlen
            else:
                remove = node.entries[-1][0] < minid
            if remove:
                self.nodes.pop(0)
                self.length -= entries
                deleted += entries
                continue
            if approx:
                break
            for e in node.entries:
                if (self.length <= maxlen) if strategy == "maxlen" else (e[0] >= minid):
                    break
                if not e[2]:
                    e[2] = True
                    self.length -= 1
                    deleted += 1
            break
        return deleted

    def live(self):
        return [(e[0], e[1]) for n in self.nodes for e in n.entries if not e[2]]

    def first_id(self):
        live = self.live()
        return live[0][0] if live else LO

    def range(self, start, end, count=-1, rev=False):
        out = [(i, f) for i, f in self.live() if start <= i <= end]
        if rev:
            out.reverse()
        return out if count < 0 else out[:count]

    def summary(self):
        return [(n.master, n.live, len(n.entries) - n.live, n.lp_bytes()) for n in self.nodes]


def reply(entries):
    return [[b"%d-%d" % i, f] for i, f in entries]


# ---- lookups by ID: checkpoints (every K-th entry of a node) ----

def _neighbours(id):
    ms, seq = id
    yield id
    yield (ms, seq - 1) if seq else (ms - 1, MAX) if ms else id
    yield (ms, seq + 1) if seq < MAX else (ms + 1, 0) if ms < MAX else id


def probe_points(model):
    """IDs at and next to every node boundary and every checkpoint: each node's first
    and last two entries and entries K-1, K, K+1, 2K-1... (live or tombstones), plus
    the IDs just before and after each (usually absent)."""
    points = {LO, HI}
    for node in model.nodes:
        n = len(node.entries)
        for i in {i + d for i in range(0, n + 1, K) for d in (-1, 0, 1)} | {n - 2, n - 1}:
            if 0 <= i < n:
                points.update(_neighbours(node.entries[i][0]))
    return sorted(points)


def check_layout(view):
    """Each node's checkpoints are the offsets of its entries K, 2K... (tombstones
    counted), 2-byte while the node's data fits in 64 KiB, inside the allocation
    (whose size the node keeps right)."""
    for offs, cps, width, used, cap, usable in view.layout():
        assert cap == usable
        assert cps == offs[K::K]
        assert width == (2 if used <= CHECKPOINT_NARROW_MAX else 4)
        assert used + width * len(cps) <= cap


def check_lookups(view, model, points, ranges=True):
    """contains / fields_of at each point (present, deleted or absent), and ranges
    starting or ending there (the iterator starts from the nearest checkpoint); the
    batched lookup over all points, and the node search from guesses of the entry's
    place that are wrong (the search gallops from them), or absurd."""
    entries = model.live()
    live = dict(entries)
    ids = [i for i, _ in entries]
    stored = {e[0] for node in model.nodes for e in node.entries}
    rng = random.Random(len(points))
    shuffled = rng.sample(list(points), len(points))
    for batch in (list(points), shuffled):
        assert view.locate_many(batch) == [p in live for p in batch]
    for p in points:
        assert (p, view.contains(p)) == (p, p in live)
        assert (p, view.fields_of(p)) == (p, live.get(p))
        for guess in (0, 1, rng.randrange(120), rng.randrange(2 ** 32 - 1), 2 ** 32 - 2):
            assert (p, guess, view.find_guessing(p, guess)) == (p, guess, p in stored)
        if ranges:
            # model.range, by bisection: a scan per point would make this quadratic
            at = bisect.bisect_left(ids, p)
            assert view.range(p, HI, 2) == reply(entries[at:at + 2])
            at = bisect.bisect_right(ids, p)
            assert view.range(LO, p, 2, True) == reply(entries[max(at - 2, 0):at][::-1])


# ---- property test against the model ----

FIELD_SETS = [[b"f"], [b"a", b"b"], [b"123", b"x"], [b"f", b"g", b"h"], [b"-7", b""]]
VALUES = st.one_of(
    st.binary(max_size=8),
    st.integers(-2**63 - 3, 2**63 + 3).map(lambda i: str(i).encode()),
    st.sampled_from([b"0", b"-0", b"007", b"+1", b"-", b"1 ", b"x" * 63, b"x" * 64,
                     b"y" * 130, b"z" * 4100, b"w" * 16378]),
)
ID_STEP = st.one_of(
    st.tuples(st.just(0), st.integers(1, 3)),                 # same ms, next seqs
    st.tuples(st.integers(1, 300), st.integers(0, 5)),        # seq restarts: delta < 0
    st.tuples(st.integers(2**20, 2**40), st.integers(0, 2**40)),
    st.tuples(st.just(2**63 + 11), st.integers(0, MAX)),      # 64-bit deltas
)
FRACTION = st.floats(0, 1, exclude_max=True)
ADD = st.tuples(st.just("add"), ID_STEP, st.integers(0, len(FIELD_SETS) - 1),
                st.lists(VALUES, min_size=3, max_size=3), st.integers(1, 60))
OPS = st.lists(st.one_of(
    ADD, ADD,
    st.tuples(st.just("del"), FRACTION, st.booleans()),
    st.tuples(st.just("trim"), st.sampled_from(["maxlen", "minid"]), FRACTION,
              st.booleans(), st.sampled_from([0, 0, 1, 3, 10])),
    st.tuples(st.just("range"), FRACTION, FRACTION, st.sampled_from([-1, 0, 1, 2, 7]),
              st.booleans()),
), min_size=15, max_size=60)


def pick_id(ids, frac, off):
    """An appended ID (live or not), or, with off, one next to it (likely absent)."""
    if not ids:
        return (5, 5)
    ms, seq = ids[int(frac * len(ids))]
    return (ms, seq + 1) if off and seq < MAX else (ms, seq)


@pytest.mark.slow
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(config=st.sampled_from([(4096, 100), (0, 0), (1, 100), (200, 0), (0, 4), (700, 6)]),
       first=st.sampled_from([(0, 1), (1_700_000_000_000, 0), (2**63 - 5, MAX - 2)]),
       ops=OPS)
def test_matches_model(config, first, ops):
    view, model = StreamTestView(), Model(*config)
    ids, last = [], None
    for op in ops:
        if op[0] == "add":  # `repeat` entries, each `step` after the previous one
            _, (dms, dseq), fs, values, repeat = op
            for k in range(repeat):
                if last is None:
                    nid = first
                else:
                    nid = (last[0] + dms, last[1] + dseq if dms == 0 else dseq + k)
                    if nid[0] > MAX or nid[1] > MAX:
                        break
                fields = [x for pair in zip(FIELD_SETS[fs], values[k % 3:] + values[:k % 3])
                          for x in pair]
                view.append(nid, fields, *config)
                model.append(nid, fields)
                ids.append(nid)
                last = nid
        elif op[0] == "del":
            victim = pick_id(ids, op[1], op[2])
            assert view.delete(victim) == model.delete(victim)
        elif op[0] == "trim":
            _, strategy, frac, approx, limit = op
            maxlen = int(frac * (model.length + 2))
            minid = pick_id(ids, frac, False)
            limit = limit if approx else 0
            assert (view.trim(strategy, maxlen, minid, approx, limit)
                    == model.trim(strategy, maxlen, minid, approx, limit))
        else:
            _, a, b, count, rev = op
            start, end = sorted([pick_id(ids, a, True), pick_id(ids, b, False)])
            expect = model.range(start, end, count, rev)
            assert view.range(start, end, count, rev) == reply(expect)
            assert view.iterate(start, end, rev) == model.range(start, end, -1, rev)
            if ids:
                probe = pick_id(ids, a, False)
                live = dict(model.live())
                assert view.contains(probe) == (probe in live)
                assert view.fields_of(probe) == live.get(probe)
        assert [n[:4] for n in view.nodes()] == model.summary()
        assert view.length == model.length
        if op[0] == "trim":  # first_id is trim's to keep (XADD/XDEL set it themselves)
            assert view.first_id == model.first_id()
        check_layout(view)
        points = probe_points(model)
        check_lookups(view, model, random.Random(len(points)).sample(points, min(len(points), 12)))
    assert view.range(LO, HI) == reply(model.live())
    assert view.iterate(LO, HI, True) == model.live()[::-1]
    check_lookups(view, model, probe_points(model), ranges=False)
    check_lookups(view, model, sorted({p for id in ids for p in _neighbours(id)}), ranges=False)


def test_encoding_edges_round_trip():
    """Lengths at varint / backlen boundaries, negative and 64-bit ID deltas."""
    view = StreamTestView()
    sizes = [0, 1, 127, 128, 16383, 16384, 70000]
    ids = [(5, MAX), (6, 0), (6, 1), (2**63, 7), (MAX - 1, 0), (MAX, 3), (MAX, MAX)]
    expect = []
    for i, (size, id) in enumerate(zip(sizes, ids)):
        fields = [b"k" * (size % 300), bytes([i]) * size]
        view.append(id, fields, 0, 0)
        expect.append((id, fields))
    assert view.node_count == 1
    assert view.iterate(LO, HI) == expect
    assert view.iterate(LO, HI, True) == expect[::-1]
    assert view.range((6, 1), (MAX, 3), 2, True) == reply(expect[5:3:-1])


def test_emptied_node_is_dropped_and_tail_reused():
    """Deleting a node's last live entry frees the node; the previous node becomes
    the tail and takes the next append if it has room (as in Redis)."""
    base = used_bytes()
    view = StreamTestView()
    view.append((1, 0), [b"f", b"a"], 200, 0)
    view.append((2, 0), [b"f", b"x" * 300], 200, 0)
    assert view.node_count == 2
    assert view.delete((2, 0)) and not view.delete((2, 0))
    assert view.node_count == 1
    view.append((3, 0), [b"f", b"b"], 200, 0)
    assert view.nodes()[0][:3] == ((1, 0), 2, 0)
    assert used_bytes() - base == view.memory_bytes
    del view
    assert used_bytes() == base


def test_minid_trim_can_leave_a_node_without_live_entries(server):
    """Redis keeps such a node (its last entry, a tombstone, is >= MINID)."""
    configure(server, 4096, 100)
    view = StreamTestView()
    server.delete(b"quirk")
    for i in range(1, 6):
        view.append((i, 0), [b"f", b"v"])
        server.xadd(b"quirk", {b"f": b"v"}, id=b"%d-0" % i)
    view.delete((5, 0))
    server.xdel(b"quirk", b"5-0")
    trimmed = server.xtrim(b"quirk", minid=b"5-0", approximate=False)
    assert view.trim("minid", minid=(5, 0)) == trimmed == 4
    info = server.xinfo_stream(b"quirk")
    assert (view.length, view.node_count) == (0, 1) == (info["length"], info["radix-tree-keys"])
    assert view.first_id == LO
    assert view.range(LO, HI) == [] and view.iterate(LO, HI, True) == []
    view.append((6, 0), [b"f", b"w"])
    assert view.nodes()[0][:3] == ((1, 0), 1, 5)
    assert view.range(LO, HI) == [[b"6-0", [b"f", b"w"]]]


@pytest.mark.slow
@pytest.mark.parametrize("config", [(4096, 100), (0, 0), (0, K), (0, K + 1), (0, 2 * K - 1),
                                    (0, 2 * K + 1), (300, 0), (0, 1)])
def test_lookups_across_appends_deletes_trims(config):
    """Every ID (and its neighbours) after appends, deletes (tombstones and dropped
    nodes), exact and `~` trims, and appends again (into a reopened tail node too)."""
    rnd = random.Random(repr(config))
    base = used_bytes()
    view, model, ids = StreamTestView(), Model(*config), []

    def add(count):
        for _ in range(count):
            last = ids[-1] if ids else (1000, 0)
            nid = (last[0], last[1] + rnd.choice([1, 2])) if rnd.random() < 0.6 else \
                  (last[0] + rnd.choice([1, 3, 200, 2**33]), rnd.randrange(3))
            fields = rnd.choice([[b"f", b"v%d" % len(ids)], [b"f", b"x" * rnd.randrange(300)],
                                 [b"a", b"1", b"b", b"%d" % len(ids)]])
            view.append(nid, fields, *config)
            model.append(nid, fields)
            ids.append(nid)

    def check():
        assert [n[:4] for n in view.nodes()] == model.summary()
        check_layout(view)
        check_lookups(view, model, probe_points(model))
        check_lookups(view, model, sorted({p for id in ids for p in _neighbours(id)}),
                      ranges=False)
        assert view.iterate(LO, HI) == model.live()
        assert used_bytes() - base == view.memory_bytes

    add(700)
    check()
    for id in ids[::3] + ids[1:40]:                     # tombstones, whole nodes
        assert view.delete(id) == model.delete(id)
    check()
    for id in ids[-150:]:                               # empties the tail node(s)
        assert view.delete(id) == model.delete(id)
    check()
    add(200)                                            # the previous node takes more
    check()
    minid = ids[len(ids) // 3]
    assert (view.trim("minid", minid=minid, approx=True)
            == model.trim("minid", minid=minid, approx=True))
    assert view.trim("maxlen", model.length - 57) == model.trim("maxlen", model.length - 57)
    check()
    add(100)
    check()
    del view
    assert used_bytes() == base


def test_checkpoints_widen_past_64k():
    """A node whose data grows past 64 KiB rewrites its checkpoints as 4-byte offsets,
    whatever entry number that happens at; lookups work before and after."""
    for size in (1000, 1717, 3001, 8190):
        view, model, ids = StreamTestView(), Model(0, 0), []
        for i in range(200 * 1000 // size):
            nid = (7, i * 3)
            fields = [b"f", bytes([i % 251]) * size] if i % 5 else [b"g", b"h" * (size // 2)]
            view.append(nid, fields, 0, 0)
            model.append(nid, fields)
            ids.append(nid)
            if i % 7 == 0 or abs(view.nodes()[0][4] - 0xFFFF) < 3 * size:
                check_layout(view)
                check_lookups(view, model, ids[:3] + ids[-2 * K:], ranges=False)
        assert view.node_count == 1 and view.layout()[0][2] == 4
        if size == 1717:
            for id in ids[1::4]:
                assert view.delete(id) == model.delete(id)
        check_layout(view)
        check_lookups(view, model, sorted({p for id in ids for p in _neighbours(id)}))


def test_closed_node_shrinks_and_reopens():
    """A node closed by max_entries shrinks to fit (checkpoints kept at its new end);
    when the next node goes, the next append grows it again and moves them back."""
    base = used_bytes()
    view, model = StreamTestView(), Model(0, 5 * K + 3)
    for i in range(5 * K + 4):
        view.append((1, i), [b"f", b"v"], 0, 5 * K + 3)
        model.append((1, i), [b"f", b"v"])
    offs, cps, width, used, cap, _ = view.layout()[0]
    assert len(cps) == 5 and cap - (used + 2 * len(cps)) < 16   # shrunk to fit
    assert view.delete((1, 5 * K + 3)) and model.delete((1, 5 * K + 3))
    assert view.node_count == 1
    view.append((2, 0), [b"f", b"w"], 0, 0)      # no max_entries now: grows it
    model.max_entries = 0
    model.append((2, 0), [b"f", b"w"])
    for i in range(1, 3 * K):
        view.append((2, i), [b"f", b"w"], 0, 0)
        model.append((2, i), [b"f", b"w"])
        check_layout(view)
    assert view.node_count == 1
    check_lookups(view, model, probe_points(model))
    assert used_bytes() - base == view.memory_bytes


@pytest.mark.slow
def test_copy_has_the_same_nodes_and_is_independent():
    """copy_stream (COPY): node by node the same entries, checkpoints and sizes (each
    node's capacity its own allocation's); growing, deleting from and trimming the copy
    leave the source as it was, and memory is counted for both."""
    from engine.core.groups import copy_stream
    base = used_bytes()
    view, model = StreamTestView(), Model(4096, 100)
    rng = random.Random(5)
    for i in range(3000):
        fields = [b"f", bytes([i % 251]) * rng.randint(0, 300)]
        view.append((i, 0), fields)
        model.append((i, 0), fields)
    for i in range(0, 3000, 7):
        assert view.delete((i, 0)) == model.delete((i, 0))
    copy = StreamTestView(copy_stream(view.stream))
    assert copy.nodes() == view.nodes() and copy.length == view.length
    assert [l[:4] for l in copy.layout()] == [l[:4] for l in view.layout()]
    check_layout(copy)
    check_lookups(copy, model, probe_points(model), ranges=False)
    assert used_bytes() - base == view.memory_bytes + copy.memory_bytes
    before = view.range(LO, HI)
    for i in range(3000, 3400):                 # grows the copy's tail node
        copy.append((i, 0), [b"f", b"x" * 200])
    for i in range(1, 3000, 5):
        copy.delete((i, 0))
    copy.trim("maxlen", 500)
    check_layout(copy)
    check_layout(view)
    assert view.range(LO, HI) == before
    check_lookups(view, model, probe_points(model))


def test_rejects_non_bytes():
    with pytest.raises(TypeError):
        StreamTestView().append((1, 0), [b"f", "v"])


# ---- against redis-server ----

@pytest.fixture(scope="module")
def server():
    with RedisServer(["--save", "", "--appendonly", "no"]) as srv:
        client = srv.client()
        yield client
        client.close()


def configure(r, max_bytes, max_entries):
    r.config_set("stream-node-max-bytes", max_bytes)
    r.config_set("stream-node-max-entries", max_entries)


def sid(i):
    return b"%d-%d" % i


def flat(fields):
    return [x for kv in fields.items() for x in kv]


INT_EDGES = [v + d for v in (0, 128, 4096, 2**15, 2**23, 2**31, 2**63) for d in (-1, 0)]
INT_EDGES += [-v for v in INT_EDGES] + [-(2**63) - 1]
SHAPES = {
    "tiny": lambda i: [b"f", b"v%d" % i],
    "kb_values": lambda i: [b"f", b"x" * 1000, b"g", b"%d" % i],
    "int_like": lambda i: [b"n", b"%d" % (i * 7919 - 10**6), b"m", b"%d" % (i * 2654435761 % 2**63),
                           b"z", b"0%d" % i, b"-", b"-%d" % (i * 31)],
    "changing_fields": lambda i: ([b"a", b"b"] if i % 5 == 0
                                  else [b"f%d" % (i % 3), b"v", b"12", b"%d" % i]),
    "many_fields": lambda i: [x for j in range(i % 9 + 1) for x in (b"k%d" % j, b"%d" % (j * i))],
    "str_edges": lambda i: [b"f", b"x" * (59 + i % 9), b"g", b"y" * (4090 + i % 10)],
    "big_edges": lambda i: [b"f", b"w" * (16370 + i % 12)],  # backlen 2 -> 3 bytes
    "int_edges": lambda i: [b"f", b"%d" % INT_EDGES[i % len(INT_EDGES)],
                            b"g", b"%d" % INT_EDGES[i * 7 % len(INT_EDGES)]],
}
ID_PATTERNS = {
    "bursts": lambda i: (1_700_000_000_000 + i // 7, i % 7),
    "jumps": lambda i: (i * 1_000_003 + (i // 3) * 2**35, 2**40 - i if i % 2 else i),
}
CONFIGS = [(4096, 100), (4096, 0), (0, 0), (0, 10), (512, 7), (1, 100), (100_000, 1000),
           (256, 0), (999, 0), (2048, 0)]


@pytest.mark.parametrize("config", CONFIGS)
def test_node_count_matches_redis(server, config):
    configure(server, *config)
    for shape, make in SHAPES.items():
        for pattern, make_id in ID_PATTERNS.items():
            n = 150 if shape.endswith(("values", "edges")) and shape != "int_edges" else 700
            view, key = StreamTestView(), b"nodes:%s:%s" % (shape.encode(), pattern.encode())
            pipe = server.pipeline(transaction=False)
            for i in range(1, n + 1):
                fields = make(i)
                view.append(make_id(i), fields, *config)
                pipe.execute_command("XADD", key, sid(make_id(i)), *fields)
            pipe.xinfo_stream(key)
            pipe.delete(key)
            info = pipe.execute()[-2]
            assert (shape, pattern, view.node_count) == (shape, pattern, info["radix-tree-keys"])


def _size_cases():
    """(entries, IDs to delete) exercising each listpack encoding size."""
    strings = [b"x" * n for n in (0, 1, 63, 64, 65, 125, 126, 127, 4095, 4096, 4097,
                                       16377, 16378)]
    strings += [b"-0", b"007", b"+1", b"1 ", b"-", b"9223372036854775808",
                b"-9223372036854775809"]
    deltas = [0, 1, 127, 128, 4095, 4096, 2**15, 2**23, 2**31, 2**40, 2**63 + 5]
    ms = [1000 + sum(deltas[:i + 1]) for i in range(len(deltas))]
    many = [x for j in range(70) for x in (b"%d" % j, b"v")]  # lp-count > 127
    return {
        "ints": ([((1, i), [b"f", b"%d" % v, b"g", b"x"]) for i, v in enumerate(INT_EDGES)], []),
        "strings": ([((1, i), [b"f", v]) for i, v in enumerate(strings)], []),
        "id_deltas": ([((m, (7 * i) % 5), [b"f", b"v"]) for i, m in enumerate(ms)], []),
        "fields": ([((1, 0), [b"a", b"1"]), ((1, 1), [b"a", b"2", b"b", b"3"]),
                    ((1, 2), many), ((1, 3), [b"12", b"x"]), ((1, 4), [b"a", b"5"])], []),
        "counts": ([((1, i), [b"f", b"v"]) for i in range(300)],
                   [(1, i) for i in range(0, 300, 2)] + [(1, i) for i in range(1, 30, 4)]),
    }


@pytest.mark.parametrize("case", sorted(_size_cases()))
def test_listpack_size_exact(server, case):
    """Redis splits a node when lp_bytes + the next entry's data >= max-bytes: with
    max-bytes set right at our computed size it must split, one byte more it must
    not. Any byte of difference in our listpack size shows here."""
    entries, deletes = _size_cases()[case]
    view = StreamTestView()
    for id, fields in entries:
        view.append(id, fields, 0, 0)
    for id in deletes:
        view.delete(id)
    lp_bytes = view.nodes()[-1][3]
    last = (MAX - 1, 0)
    big = [b"f", b"b" * 20000]  # larger than any earlier entry: only this check decides
    for max_bytes, nodes in ((lp_bytes + 20001, 2), (lp_bytes + 20002, 1)):
        configure(server, max_bytes, 0)
        pipe = server.pipeline(transaction=False)
        pipe.delete(b"size")
        for id, fields in entries:
            pipe.execute_command("XADD", b"size", sid(id), *fields)
        if deletes:
            pipe.xdel(b"size", *map(sid, deletes))
        pipe.execute_command("XADD", b"size", sid(last), *big)
        pipe.xinfo_stream(b"size")
        assert (max_bytes - lp_bytes, pipe.execute()[-1]["radix-tree-keys"]) == \
            (max_bytes - lp_bytes, nodes)


def near_head(rnd, view, ids):
    """An appended ID among the first ~30 from the first live entry: trims act there."""
    first = view.range(LO, HI, 1)
    head = bisect.bisect_left(ids, tuple(map(int, first[0][0].split(b"-")))) if first else 0
    return ids[min(len(ids) - 1, head + rnd.randrange(30))]


@pytest.mark.parametrize("config,seed", [((4096, 100), 1), ((300, 5), 2), ((150, 0), 3),
                                         ((0, 7), 4), ((1000, 20), 5), ((4096, 100), 6)])
def test_random_ops_match_redis(server, config, seed):
    """XADD / XDEL / XTRIM (MAXLEN, MINID, exact, ~ with LIMIT) on both sides."""
    rnd = random.Random(seed)
    configure(server, *config)
    key = b"ops:%d" % seed
    view, ids, ms = StreamTestView(), [], 1000
    server.delete(key)
    for step in range(1000):
        op = rnd.random() if ids else 0.0
        if op < 0.7:
            ms += rnd.choice([0, 0, 1, 50])
            nid = (ms, rnd.randrange(1000) + (ids[-1][1] + 1 if ids and ids[-1][0] == ms else 0))
            fields = SHAPES[rnd.choice(["tiny", "int_like", "changing_fields", "many_fields"])](
                rnd.randrange(10**6))
            view.append(nid, fields, *config)
            server.execute_command("XADD", key, sid(nid), *fields)
            ids.append(nid)
        elif op < 0.88:
            victim = near_head(rnd, view, ids) if rnd.random() < 0.7 else rnd.choice(ids)
            assert view.delete(victim) == server.xdel(key, sid(victim))
        else:
            approx = rnd.random() < 0.5
            limit = rnd.choice([0, 1, 5, 50]) if approx else 0
            tail = ["LIMIT", limit] if approx else []
            if rnd.random() < 0.5:
                maxlen = max(0, view.length - rnd.randrange(30))
                got = view.trim("maxlen", maxlen, approx=approx, limit=limit)
                want = server.execute_command("XTRIM", key, "MAXLEN", "~" if approx else "=",
                                              maxlen, *tail)
            else:
                minid = near_head(rnd, view, ids)
                got = view.trim("minid", minid=minid, approx=approx, limit=limit)
                want = server.execute_command("XTRIM", key, "MINID", "~" if approx else "=",
                                              sid(minid), *tail)
            assert got == want
        info = server.xinfo_stream(key)
        assert (step, view.node_count, view.length) == (step, info["radix-tree-keys"],
                                                        info["length"])
        if op >= 0.88:
            assert sid(view.first_id) == info["recorded-first-entry-id"]
        if step % 50 == 0 or step == 999:
            assert view.range(LO, HI) == [[i, flat(f)] for i, f in server.xrange(key)]


def test_memory_per_entry_below_redis(server):
    """The seed benchmark's shape: one short field and a short value per entry."""
    n = 200_000
    configure(server, 4096, 100)
    ids = [(1_700_000_000_000 + i // 10, i % 10) for i in range(n)]
    fields = [x for i in range(n) for x in (b"f", b"v%d" % i)]

    base = used_bytes()
    view = StreamTestView()
    view.append_many(ids, fields)
    ours = view.memory_bytes
    assert used_bytes() - base == ours
    assert view.node_count == n // 100

    before = server.info("memory")["used_memory"]
    pipe = server.pipeline(transaction=False)
    for i, id in enumerate(ids):
        pipe.execute_command("XADD", b"mem", sid(id), b"f", fields[2 * i + 1])
        if i % 10_000 == 9_999:
            pipe.execute()
    pipe.execute()
    theirs = server.info("memory")["used_memory"] - before
    assert server.xinfo_stream(b"mem")["radix-tree-keys"] == view.node_count
    server.delete(b"mem")
    print(f"\nbytes/entry: sluice {ours / n:.2f}, redis-server {theirs / n:.2f}")
    assert ours / n < theirs / n
