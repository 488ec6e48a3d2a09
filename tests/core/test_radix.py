"""engine.core.radix against a sorted-list reference model, plus its memory targets.

The tree is driven through RadixTestTree / RadixTestIter (thin wrappers over the cdef
API in the test probe tests/native/radix_probe.pyx). `bucket_max` shrinks buckets so
that a few dozen keys already exercise bursts, merges, collapses and deep paths.
"""
import bisect
import random
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.core.radix import treat_all_trees_as_big
from native.radix_probe import SPARE_LIMIT, RadixTestTree

OPS = ("first", "last", "ge", "gt", "le", "lt", "eq")


def emptied(tree) -> bool:
    """Back to the tree's header (whose size malloc may round up by a few bytes,
    depending on the heap), but for the spare root bucket an emptied tree keeps for its
    next insert (SPARE_LIMIT, plus what malloc does not split off a block it shrinks:
    less than its 32-byte minimum chunk): nothing else leaked."""
    return (tree.bytes_used - tree.spare_bytes == tree.header_bytes
            and tree.spare_bytes < SPARE_LIMIT + 32)


class Model:
    """The reference: a dict plus its sorted keys."""

    def __init__(self):
        self.d = {}
        self.keys = []

    def insert(self, k, v, replace=True):
        if k in self.d:
            if replace:
                self.d[k] = v
            return False
        bisect.insort(self.keys, k)
        self.d[k] = v
        return True

    def remove(self, k):
        if k not in self.d:
            return None
        del self.keys[bisect.bisect_left(self.keys, k)]
        return self.d.pop(k)

    def seek(self, op, k):
        """The key radix_seek(op, k) lands on, or None."""
        keys = self.keys
        if op == "first":
            i = 0
        elif op == "last":
            i = len(keys) - 1
        elif op == "ge":
            i = bisect.bisect_left(keys, k)
        elif op == "gt":
            i = bisect.bisect_right(keys, k)
        elif op == "le":
            i = bisect.bisect_right(keys, k) - 1
        elif op == "lt":
            i = bisect.bisect_left(keys, k) - 1
        else:
            return k if k in self.d else None
        return keys[i] if 0 <= i < len(keys) else None

    def walk(self, op, k, forward, limit=-1):
        out = []
        cur = self.seek(op, k)
        while cur is not None and limit != 0:
            out.append((cur, self.d[cur]))
            limit -= 1
            cur = self.seek("gt" if forward else "lt", cur)
        return out

    def items(self):
        return [(k, self.d[k]) for k in self.keys]


@pytest.fixture(params=[False, True], ids=["paths-by-size", "big-tree-paths"])
def tree_paths(request):
    """Runs a test twice: as is (bucket searches interpolate and descents prefetch only
    in trees of 64 KiB / 1 MiB or more), then with every tree taking those paths."""
    old = treat_all_trees_as_big(request.param)
    yield request.param
    treat_all_trees_as_big(old)


def assert_same(tree, model):
    tree.check()
    assert tree.count == len(model.keys)
    items = model.items()
    assert tree.range_forward() == items
    assert tree.range_backward() == items[::-1]


def be(n, key_len):
    return n.to_bytes(key_len, "big")


# ---------------------------------------------------------------- key patterns

def keys_alphabet(key_len):
    """Few distinct byte values: long shared prefixes and many equal bytes."""
    return st.lists(st.sampled_from(b"\x00\x01\x02\xfe\xff"), min_size=key_len,
                    max_size=key_len).map(bytes)


def keys_counter(key_len):
    """Sequential big-endian counters around a base, crossing byte boundaries."""
    base = int.from_bytes(bytes(range(1, key_len + 1)), "big") & ~0xFF
    return st.integers(0, min(4000, 256 ** key_len - 1 - base)).map(
        lambda n: be(base + n, key_len))


def keys_strided(key_len):
    """Counters spaced so that keys differ at several byte positions at once."""
    return st.tuples(st.integers(0, 60), st.sampled_from([1, 255, 257, 65535, 65793])).map(
        lambda t: be((t[0] * t[1]) % 256 ** key_len, key_len))


def keys_time_id(key_len):
    """24-byte time + ID keys (other lengths: the leading bytes of one)."""
    return st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 300)).map(
        lambda t: struct.pack(">QQQ", 1_700_000_000_000 + t[0],
                              1_699_999_990_000 + t[1], t[2])[:key_len])


def keys_random(key_len):
    return st.binary(min_size=key_len, max_size=key_len)


PATTERNS = [keys_alphabet, keys_counter, keys_strided, keys_time_id, keys_random]
SHAPES = [(1, 0), (1, 8), (2, 0), (2, 16), (16, 0), (16, 8), (16, 16), (24, 0)]


@st.composite
def scenarios(draw):
    key_len, value_len = draw(st.sampled_from(SHAPES))
    bucket_max = draw(st.sampled_from([0, 1, 2, 3, 4, 6, 8]))
    pattern = draw(st.sampled_from(PATTERNS))
    pool = draw(st.lists(pattern(key_len), min_size=1, max_size=120, unique=True))
    value = st.binary(min_size=value_len, max_size=value_len)
    key = st.one_of(st.sampled_from(pool), pattern(key_len))
    it = st.integers(0, 2)
    op = st.one_of(
        st.tuples(st.just("ins"), key, value),
        st.tuples(st.just("try"), key, value),
        st.tuples(st.just("rem"), key),
        st.tuples(st.just("find"), key),
        st.tuples(st.just("bulk"), st.integers(0, len(pool)), st.integers(1, 60),
                  st.booleans()),
        st.tuples(st.just("cut"), st.integers(0, 120), st.integers(1, 40)),
        st.tuples(st.just("seek"), it, st.sampled_from(OPS), key),
        st.tuples(st.just("step"), it, st.lists(st.booleans(), min_size=1, max_size=8)),
        st.tuples(st.just("setv"), it, value),
        st.tuples(st.just("walk"), st.sampled_from(OPS), key, st.booleans(),
                  st.integers(-1, 20)),
        st.tuples(st.just("dwi"), st.sampled_from(OPS), key, st.booleans(),
                  st.lists(st.booleans(), min_size=1, max_size=4)),
    )
    ops = draw(st.lists(op, max_size=60))
    return key_len, value_len, bucket_max, pool, ops


def run_ops(tree, model, pool, ops, value_len):
    iters = [tree.iterator() for _ in range(3)]
    cur = [None, None, None]        # key each iterator is on (None: unpositioned)
    fresh = [False, False, False]   # positioned with no insert/remove since

    def changed():
        fresh[:] = [False] * 3

    for op in ops:
        kind = op[0]
        if kind in ("ins", "try"):
            _, k, v = op
            replace = kind == "ins"
            got = tree.insert(k, v) if replace else tree.try_insert(k, v)
            assert got == model.insert(k, v, replace)
            if got:
                changed()
            assert tree.find(k) == model.d[k]
        elif kind == "rem":
            got = tree.remove(op[1])
            assert got == model.remove(op[1])
            if got is not None:
                changed()
        elif kind == "find":
            assert tree.find(op[1]) == model.d.get(op[1])
        elif kind == "app":
            # Appends past the largest key, `step` apart (the insert finger's fast path;
            # big steps change bytes above the deepest inner node's depth).
            _, n, step = op
            key_len = len(pool[0])
            top = int.from_bytes(model.keys[-1], "big") if model.keys else 0
            for _ in range(n):
                top += step
                if top >= 256 ** key_len:
                    break
                k = be(top, key_len)
                v = k[-1:] * value_len
                assert tree.insert(k, v) and model.insert(k, v)
                assert tree.find(k) == v
            tree.check()
            changed()
        elif kind == "ack":
            # Removes the n smallest keys one by one, in order (the remove finger's path).
            for k in model.keys[:op[1]]:
                assert tree.remove(k) == model.remove(k)
            tree.check()
            changed()
        elif kind == "pop":
            # The n smallest keys at once (radix_remove_first: whole buckets).
            assert tree.remove_first(op[1]) == min(op[1], len(model.keys))
            for k in model.keys[:op[1]]:
                model.remove(k)
            tree.check()
            changed()
        elif kind == "bulk":
            _, start, n, rising = op
            chunk = pool[start:start + n]
            for k in (sorted(chunk) if rising else chunk):
                v = k[:1] * value_len
                if tree.insert(k, v) != model.insert(k, v):
                    raise AssertionError(f"insert {k!r}")
            changed()
        elif kind == "cut":
            # Remove a run of neighbouring keys: empties whole child ranges.
            _, start, n = op
            for k in model.keys[start:start + n]:
                assert tree.remove(k) == model.remove(k)
            changed()
        elif kind == "seek":
            _, i, sop, k = op
            key = None if sop in ("first", "last") else k
            assert iters[i].seek(sop, key) == (model.seek(sop, k) is not None)
            cur[i] = model.seek(sop, k)
            fresh[i] = cur[i] is not None
        elif kind == "step":
            _, i, dirs = op
            for forward in dirs:
                got = iters[i].next() if forward else iters[i].prev()
                if cur[i] is not None:
                    cur[i] = model.seek("gt" if forward else "lt", cur[i])
                assert got == (cur[i] is not None)
                fresh[i] = cur[i] is not None
        elif kind == "setv":
            _, i, v = op
            if fresh[i]:
                iters[i].set_value(v)
                model.d[cur[i]] = v
        elif kind == "walk":
            _, sop, k, forward, limit = op
            key = None if sop in ("first", "last") else k
            got = (tree.range_forward if forward else tree.range_backward)(sop, key, limit)
            assert got == model.walk(sop, k, forward, limit)
        elif kind == "dwi":
            _, sop, k, forward, pattern = op
            key = None if sop in ("first", "last") else k
            visited = tree.delete_while_iterating(sop, key, forward, pattern)
            expect = [kk for kk, _ in model.walk(sop, k, forward)]
            assert visited == expect
            for n, kk in enumerate(expect):
                if pattern[n % len(pattern)]:
                    model.remove(kk)
            if visited:
                changed()
        for i in range(3):
            assert iters[i].key == cur[i]
            if fresh[i]:
                assert iters[i].value == model.d[cur[i]]


def check_scenario_then_empty(scenario):
    """Runs a generated scenario on a tree and the model, compares them, then removes
    every key: the tree must end valid and empty."""
    key_len, value_len, bucket_max, pool, ops = scenario
    tree = RadixTestTree(key_len, value_len, bucket_max)
    model = Model()
    run_ops(tree, model, pool, ops, value_len)
    assert_same(tree, model)
    for k in list(model.keys):
        tree.remove(k)
    tree.check()
    assert tree.count == 0 and emptied(tree)


@pytest.mark.slow
@settings(max_examples=1000, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_random_operations_match_model(tree_paths, scenario):
    check_scenario_then_empty(scenario)


@pytest.mark.slow
@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(scenarios())
def test_clone_is_an_equal_independent_tree(tree_paths, scenario):
    """radix_clone (COPY): the copy holds the same entries in a valid tree; emptying
    and refilling it leaves the original as it was."""
    key_len, value_len, bucket_max, pool, ops = scenario
    tree = RadixTestTree(key_len, value_len, bucket_max)
    model = Model()
    run_ops(tree, model, pool, ops, value_len)
    copy = tree.clone()
    assert_same(copy, model)
    assert copy.bucket_max == tree.bucket_max       # (check(): its bytes are counted)
    for k in list(model.keys):
        copy.remove(k)
    for k in pool[:20]:
        copy.insert(k, b"\xff" * value_len)
    copy.check()
    assert_same(tree, model)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SHAPES), st.sampled_from([0, 2, 3, 5]),
       st.sampled_from(PATTERNS), st.data())
def test_insert_and_delete_while_iterating(tree_paths, shape, bucket_max, pattern, data):
    """Every step inserts or removes keys around the iterator; it must continue from
    the last key it returned."""
    key_len, value_len = shape
    keys = data.draw(st.lists(pattern(key_len), min_size=1, max_size=150, unique=True))
    tree = RadixTestTree(key_len, value_len, bucket_max)
    model = Model()
    for k in keys[: len(keys) // 2]:
        tree.insert(k, bytes(value_len))
        model.insert(k, bytes(value_len))
    forward = data.draw(st.booleans())
    it = tree.iterator()
    cur = model.seek("first" if forward else "last", None)
    assert it.seek("first" if forward else "last") == (cur is not None)
    rng = random.Random(data.draw(st.integers(0, 2**32)))
    while cur is not None:
        assert it.key == cur
        for _ in range(rng.randrange(3)):
            k = rng.choice(keys)
            if rng.random() < 0.5:
                assert tree.insert(k, bytes(value_len)) == model.insert(k, bytes(value_len))
            else:
                assert (tree.remove(k) is None) == (model.remove(k) is None)
        if rng.random() < 0.3:
            tree.remove(cur)
            model.remove(cur)
        cur = model.seek("gt" if forward else "lt", cur)
        assert (it.next() if forward else it.prev()) == (cur is not None)
    assert it.key is None and not it.next() and not it.prev()
    assert_same(tree, model)


def test_small_universe_fuzz():
    """Dense random churn over tiny key spaces with tiny buckets, checking the structure
    after every operation: reaches the rare restructuring cases (ranges widened by
    dropped neighbours, then split again by keys just below a compressed prefix)."""
    rng = random.Random(99)
    for _ in range(5000):
        key_len = rng.choice((2, 3))
        alphabet = rng.choice((range(4), (0, 1, 2, 0xFE, 0xFF)))
        tree = RadixTestTree(key_len, 0, rng.choice((1, 2, 3, 4)))
        model = Model()
        for _ in range(40):
            k = bytes(rng.choice(alphabet) for _ in range(key_len))
            r = rng.random()
            if r < 0.55:
                assert tree.insert(k) == model.insert(k, b"")
            elif r < 0.85:
                assert (tree.remove(k) is None) == (model.remove(k) is None)
            else:
                start = rng.randrange(len(model.keys) + 1)
                for kk in model.keys[start:start + rng.randrange(1, 6)]:
                    tree.remove(kk)
                    model.remove(kk)
            tree.check()
            op = rng.choice(OPS)
            assert tree.range_forward(op, k, 3) == model.walk(op, k, True, 3)
            assert tree.range_backward(op, k, 3) == model.walk(op, k, False, 3)
        assert_same(tree, model)


# ---------------------------------------------------------------- fingers
#
# The tree remembers the bucket of the last insert and of the last remove ("fingers")
# and skips the descent when the next key falls in one of them. check() verifies that
# every finger still describes the tree exactly (bucket, slot, rightmost flag), so the
# tests below call it after the changes that move, split, merge or free buckets.

APPEND_STEPS = [1, 1, 1, 2, 3, 255, 256, 257, 65536, 2**32 + 7, 2**64 + 1]


@st.composite
def queue_scenarios(draw):
    """Consumer-loop shaped runs: appends past the largest key and in-order acks (the
    fingers' fast paths) interleaved with every other operation, so that the fingers
    go stale in all the ways the tree changes shape."""
    key_len, value_len, bucket_max, pool, ops = draw(scenarios())
    queue_op = st.one_of(
        st.tuples(st.just("app"), st.integers(1, 40), st.sampled_from(APPEND_STEPS)),
        st.tuples(st.just("ack"), st.integers(1, 40)),
        st.tuples(st.just("pop"), st.integers(0, 300)),
    )
    extra = draw(st.lists(st.tuples(st.integers(0, len(ops)), queue_op), max_size=30))
    for at, op in sorted(extra, key=lambda e: e[0], reverse=True):
        ops.insert(at, op)
    return key_len, value_len, bucket_max, pool, ops


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(queue_scenarios())
def test_queue_operations_match_model(tree_paths, scenario):
    check_scenario_then_empty(scenario)


def id_key(key_len, n, per_ms=7):
    """The n-th stream ID of a stream adding per_ms entries per ms, as a 16-byte key
    (24 bytes: behind a delivery time that changes every 50 entries)."""
    k = struct.pack(">QQ", T0 + n // per_ms, n % per_ms)
    return struct.pack(">Q", T0 + 5000 + n // 50) + k if key_len == 24 else k


@pytest.mark.parametrize("key_len,value_len", [(16, 16), (16, 0), (24, 0)])
@pytest.mark.parametrize("bucket_max", [0, 3, 8])
def test_consumer_loop_against_model(tree_paths, key_len, value_len, bucket_max):
    """XREADGROUP / XACK rounds on one tree: batches of appends, acks of the oldest
    pending keys (all of them or leaving a backlog), plus claims and stray operations in
    the middle, checked after every batch."""
    rng = random.Random(key_len * 1000 + value_len * 10 + bucket_max)
    tree = RadixTestTree(key_len, value_len, bucket_max)
    model = Model()
    nxt = 0
    for rnd in range(120):
        for _ in range(rng.choice((1, 2, 10, 100, 300))):
            k = id_key(key_len, nxt)
            nxt += rng.choice((1, 1, 1, 5, 500))
            v = k[-1:] * value_len
            assert tree.try_insert(k, v) if rnd % 2 else tree.insert(k, v)
            model.insert(k, v)
        tree.check()
        for _ in range(rng.randrange(4)):           # stray operations anywhere
            k = rng.choice(model.keys) if model.keys else id_key(key_len, 0)
            r = rng.random()
            if r < 0.3:
                assert tree.remove(k) == model.remove(k)
            elif r < 0.6:
                k2 = id_key(key_len, rng.randrange(nxt + 10))
                v = bytes(value_len)
                assert tree.insert(k2, v) == model.insert(k2, v)
            else:
                assert tree.find(k) == model.d.get(k)
                k2 = id_key(key_len, rng.randrange(nxt + 10))
                assert tree.find(k2) == model.d.get(k2)
        keep = 0 if rng.random() < 0.5 else rng.randrange(len(model.keys) + 1)
        for k in model.keys[:len(model.keys) - keep]:
            assert tree.remove(k) == model.remove(k)
            assert tree.find(k) is None
        k = id_key(key_len, rng.randrange(nxt))         # often acked long ago
        assert tree.remove(k) == model.remove(k)
        tree.check()
        if rnd % 20 == 19:
            assert_same(tree, model)
    assert_same(tree, model)


def test_fingers_kept_through_grows_and_trims():
    """In a one-bucket queue, appends and acks keep both fingers set: growing and
    trimming the bucket they point at updates them instead of dropping them."""
    tree = RadixTestTree(16, 16)
    model = Model()
    n = 0
    for rnd in range(30):
        for _ in range(rnd % 7 + 1):
            k = id_key(16, n)
            n += 1
            assert tree.insert(k, k) and model.insert(k, k)
        for k in model.keys[:min(rnd % 5 + 1, len(model.keys) - 1)]:
            assert tree.remove(k) == model.remove(k)
        tree.check()
        assert tree.stats()["buckets"] == 1
        if rnd:
            assert tree.fingers() == (True, True)
    assert_same(tree, model)


def test_stale_fingers():
    """The shape changes a finger can miss, each followed by operations through both
    fingers and a check (which verifies that the fingers still match the tree)."""
    def ops_around(tree, model, keys):
        for k in keys:
            assert tree.find(k) == model.d.get(k)
        for k in keys[::3]:
            assert tree.remove(k) == model.remove(k)
            tree.check()
            assert tree.insert(k, k[:1]) == model.insert(k, k[:1])
            tree.check()
        assert_same(tree, model)

    key = lambda n: be(n, 2)
    for bucket_max in (1, 2, 3, 4):
        tree = RadixTestTree(2, 1, bucket_max)
        model = Model()
        # Appends: bursts under the insert finger, new inner nodes above it, keys past
        # the rightmost bucket that leave its parent's prefix (steps of 256 and more).
        for n in [*range(0, 40), *range(300, 2000, 256), *range(30000, 30010), 65535]:
            assert tree.insert(key(n), b"v") and model.insert(key(n), b"v")
            tree.check()
        ops_around(tree, model, [key(n) for n in range(0, 65536, 97)])
        # Acks in order: the remove finger's bucket empties and is freed, its parent
        # collapses, neighbours merge.
        for k in model.keys[:30]:
            assert tree.remove(k) == model.remove(k)
            tree.check()
        ops_around(tree, model, [key(n) for n in range(0, 2000, 7)])
        # Removes in the middle: merges with the fingers' buckets and their siblings.
        for k in model.keys[3::2]:
            assert tree.remove(k) == model.remove(k)
            tree.check()
        ops_around(tree, model, list(model.keys) + [key(1), key(65534)])
        # Emptying the tree, then reusing it.
        for k in list(model.keys):
            assert tree.remove(k) == model.remove(k)
            tree.check()
        assert tree.fingers() == (False, False)
        assert tree.count == 0 and emptied(tree)
        for n in (5, 6, 4, 7):
            assert tree.insert(key(n), b"w") and model.insert(key(n), b"w")
            tree.check()
        ops_around(tree, model, [key(n) for n in range(12)])


@pytest.mark.parametrize("key_len,value_len", [(16, 16), (16, 0), (24, 0)])
@pytest.mark.parametrize("window", [1, 5, 50, 100])
def test_queue_window_is_steady(key_len, value_len, window):
    """A queue that fits in one bucket (append the newest, ack the oldest) settles on
    one allocation: no shrink-then-regrow of the bucket on every step. Its slack stays
    within what a grow leaves (1/3 of the bucket, plus the entry just acked)."""
    tree = RadixTestTree(key_len, value_len)
    v = bytes(value_len)
    for n in range(window):
        tree.insert(id_key(key_len, n), v)
    sizes = set()
    for n in range(window, window + 2000):
        assert tree.insert(id_key(key_len, n), v)
        if n >= 3 * window + 50:
            sizes.add(tree.bytes_used)
        assert tree.remove(id_key(key_len, n - window)) == v
        if n >= 3 * window + 50:
            sizes.add(tree.bytes_used)
        s = tree.stats()
        assert s["buckets"] == 1
        assert s["slack_entries"] * 3 <= window + s["slack_entries"] + 3
    assert len(sizes) == 1
    tree.check()
    assert tree.range_forward() == [(id_key(key_len, n), v)
                                    for n in range(2000, 2000 + window)]


@pytest.mark.parametrize("bucket_max", [4, 8, 20])
def test_queue_filling_its_bucket(bucket_max):
    """Windows at and just under a full bucket: the only room is a small gap at the
    bucket's head, so appends split the bucket (or grow it) rather than compacting."""
    for window in range(1, bucket_max + 3):
        tree = RadixTestTree(16, 8, bucket_max)
        model = Model()
        for n in range(window + 6 * bucket_max):
            k = id_key(16, n)
            assert tree.insert(k, k[8:]) and model.insert(k, k[8:])
            if n >= window:
                old = id_key(16, n - window)
                assert tree.remove(old) == model.remove(old)
            tree.check()
        assert_same(tree, model)


def test_in_order_drain_of_the_root_bucket():
    """Acking everything in order, then reading as much again (a consumer's PEL): the
    one bucket keeps its room while it drains and its emptied tree keeps it as the
    spare (at most SPARE_LIMIT), so the refill grows it from there instead of from one
    entry; nothing else is kept."""
    for key_len, value_len in [(16, 16), (16, 0), (24, 0)]:
        tree = RadixTestTree(key_len, value_len)
        keys = [id_key(key_len, n) for n in range(100)]
        for k in keys:
            tree.insert(k, bytes(value_len))
        peak = tree.bytes_used
        for i, k in enumerate(keys):
            assert tree.remove(k) is not None
            if i + 1 < len(keys):
                assert tree.stats()["buckets"] == 1 and tree.bytes_used == peak
        tree.check()
        assert emptied(tree) and tree.spare_bytes > 0
        keys = [id_key(key_len, n) for n in range(100, 200)]
        tree.insert(keys[0], bytes(value_len))
        assert tree.spare_bytes == 0 and tree.stats()["slack_entries"] > 0
        for k in keys[1:]:
            tree.insert(k, bytes(value_len))
        tree.check()
        # the refill grew from the spare: its bucket is at most one growth (1.5x) past
        # what 100 entries need (not compared with `peak`, whose growth steps from one
        # entry depend on how malloc rounds each of them)
        assert tree.stats()["bucket_bytes"] <= 1.5 * 100 * (key_len + value_len) + 64


# ---------------------------------------------------------------- big runs

def mixed_key_source(rng, key_len):
    """Keys from several distributions at once: sequential IDs, clustered counters,
    small alphabets and random bytes."""
    seq = [0]

    def key():
        r = rng.random()
        if r < 0.35:
            seq[0] += rng.choice((1, 1, 1, 2, 300))
            return struct.pack(">QQ", 1_700_000_000_000 + seq[0] // 1000, seq[0] % 1000)[:key_len]
        if r < 0.6:
            return be((0xABCD << (8 * key_len - 16)) + rng.randrange(5000), key_len)
        if r < 0.8:
            return bytes(rng.choice(b"\x00\x05\xff") for _ in range(key_len))
        return rng.randbytes(key_len)
    return key


@pytest.mark.parametrize("bucket_max", [0, 5])
def test_100k_operations_against_model(bucket_max):
    rng = random.Random(20240517 + bucket_max)
    key_len, value_len = 16, 8
    tree = RadixTestTree(key_len, value_len, bucket_max)
    model = Model()
    new_key = mixed_key_source(rng, key_len)
    recent = []
    iters = [tree.iterator() for _ in range(4)]
    cur = [None] * 4
    for n in range(100_000):
        r = rng.random()
        if r < 0.45 or not recent:
            k = new_key()
            v = rng.randbytes(value_len)
            replace = r < 0.4
            got = tree.insert(k, v) if replace else tree.try_insert(k, v)
            assert got == model.insert(k, v, replace)
            recent.append(k)
        elif r < 0.8:
            k = recent.pop(0) if rng.random() < 0.7 else rng.choice(recent)
            assert tree.remove(k) == model.remove(k)
        elif r < 0.88:
            k = rng.choice(recent) if rng.random() < 0.5 else new_key()
            assert tree.find(k) == model.d.get(k)
        elif r < 0.92:
            i = rng.randrange(4)
            op = rng.choice(OPS)
            k = rng.choice(recent) if rng.random() < 0.5 else new_key()
            cur[i] = model.seek(op, k)
            assert iters[i].seek(op, k) == (cur[i] is not None)
        else:
            i = rng.randrange(4)
            forward = rng.random() < 0.5
            got = iters[i].next() if forward else iters[i].prev()
            if cur[i] is not None:
                cur[i] = model.seek("gt" if forward else "lt", cur[i])
            assert got == (cur[i] is not None)
            assert iters[i].key == cur[i]
        if n % 20_000 == 19_999:
            assert_same(tree, model)
    assert_same(tree, model)


@pytest.mark.slow
@pytest.mark.parametrize("value_len,bucket_max", [(0, 0), (8, 16)])
def test_all_2_byte_keys(tree_paths, value_len, bucket_max):
    rng = random.Random(65536 + bucket_max)
    keys = [be(n, 2) for n in range(65536)]
    tree = RadixTestTree(2, value_len, bucket_max)
    model = Model()

    def spot_check():
        assert_same(tree, model)
        for _ in range(200):
            op = rng.choice(OPS)
            k = rng.choice(keys)
            for forward in (True, False):
                assert (tree.range_forward if forward else tree.range_backward)(op, k, 5) \
                    == model.walk(op, k, forward, 5)

    rng.shuffle(keys)
    for n, k in enumerate(keys):
        v = k[-1:] * value_len
        assert tree.insert(k, v)
        model.insert(k, v)
        if n in (100, 5000, 40000):
            spot_check()
    spot_check()
    rng.shuffle(keys)
    for n, k in enumerate(keys):
        assert tree.remove(k) == model.remove(k)
        if n in (1000, 30000, 60000, 65500):
            spot_check()
    spot_check()
    assert emptied(tree)


# ---------------------------------------------------------------- bucket search
#
# Buckets of trees of 64 KiB or more are searched by interpolation: a position guessed
# from the first and last keys of the bucket, then a gallop and a binary search around
# it (the tree_paths fixture makes every tree do so). The guess is only a starting
# point, so every distribution must give exact answers; these use full-size buckets (up
# to 4080 bytes of entries) so that most searches run inside one big bucket.

def dist_last_byte(rng, key_len, n):
    """Keys equal but for the last byte (a long shared prefix, 256 keys at most)."""
    prefix = rng.randbytes(key_len - 1)
    return [prefix + bytes([b]) for b in rng.sample(range(256), min(n, 256))]


def dist_long_prefix(rng, key_len, n):
    """A shared prefix of all but the last 3 bytes, then random low bytes."""
    prefix = rng.randbytes(key_len - 3)
    return [prefix + x.to_bytes(3, "big") for x in rng.sample(range(1 << 24), n)]


def dist_exponential(rng, key_len, n):
    """Gaps growing geometrically: the keys crowd at the low end of every bucket."""
    top = 256 ** key_len - 1
    out, x, gap = set(), rng.randrange(1 << 16), 1.0
    while len(out) < n and x <= top:
        out.add(be(x, key_len))
        gap *= 1.0 + 40.0 / n
        x += int(gap) + rng.randrange(2)
    return list(out)


def dist_skewed(rng, key_len, n):
    """Dense clusters with a few keys far away (at both ends of the key space)."""
    top = 256 ** key_len - 1
    out = {be(0, key_len), be(top, key_len), be(top // 2, key_len), be(1, key_len)}
    while len(out) < n:
        centre = rng.choice((top // 3, top // 3 + 10 ** 6, 2 * top // 3))
        out.add(be(centre + rng.randrange(-5000, 5000), key_len))
    return list(out)


def dist_random(rng, key_len, n):
    out = set()
    while len(out) < n:
        out.add(rng.randbytes(key_len))
    return list(out)


def dist_sequential_ids(rng, key_len, n):
    """Stream IDs, several per ms, with holes (the PEL's usual shape); 24-byte keys put
    one delivery time in front, so the keys first differ in the ID part."""
    ids, ms, seq = [], 1_700_000_000_000, 0
    while len(ids) < n:
        if rng.random() < 0.3:
            ms += rng.choice((1, 1, 2, 1000))
            seq = 0
        if rng.random() < 0.8:
            ids.append(struct.pack(">QQ", ms, seq))
        seq += 1
    if key_len == 24:
        return [struct.pack(">Q", 1_700_000_005_000) + k for k in ids]
    return [k[:key_len] for k in ids] if key_len < 16 else ids


def dist_time_id(rng, key_len, n):
    """24-byte pel_by_time keys: a handful of delivery times, IDs after them."""
    times = [1_700_000_005_000 + rng.randrange(3) for _ in range(n)]
    return list({struct.pack(">QQQ", t, 1_700_000_000_000 + i // 7, i % 7)[:key_len]
                 for i, t in enumerate(times)})


def neighbours(k):
    """Keys just below and above k (absent unless they are keys too)."""
    n = int.from_bytes(k, "big")
    out = []
    for d in (-1, 1, -256, 256):
        if 0 <= n + d < 256 ** len(k):
            out.append(be(n + d, len(k)))
    return out


def search_against_model(tree, model, rng, probes):
    tree.check()
    for k in probes:
        assert tree.find(k) == model.d.get(k)
    for k in rng.sample(probes, min(len(probes), 150)):
        for op in ("ge", "gt", "le", "lt", "eq"):
            assert tree.range_forward(op, k, 2) == model.walk(op, k, True, 2)
            assert tree.range_backward(op, k, 2) == model.walk(op, k, False, 2)


SEARCH_DISTS = [dist_last_byte, dist_long_prefix, dist_exponential, dist_skewed,
                dist_random, dist_sequential_ids, dist_time_id]


@pytest.mark.parametrize("dist", SEARCH_DISTS, ids=[d.__name__ for d in SEARCH_DISTS])
@pytest.mark.parametrize("key_len,value_len",
                         [(16, 16), (16, 0), (24, 0), (8, 8), (5, 0), (12, 4), (20, 0),
                          (32, 8)])
def test_bucket_search_distributions(tree_paths, dist, key_len, value_len):
    """Every key, its neighbours and random keys are found (or not) exactly, and seeks
    land where the model says, while the tree fills in random order, loses a random
    half and refills; check() after each phase."""
    if dist in (dist_time_id, dist_sequential_ids) and key_len not in (16, 24):
        key_len = 16
    rng = random.Random(hash((dist.__name__, key_len, value_len)) & 0xFFFFFFFF)
    keys = dist(rng, key_len, 3000)
    rng.shuffle(keys)
    tree = RadixTestTree(key_len, value_len)
    model = Model()
    for k in keys:
        v = rng.randbytes(value_len)
        assert tree.insert(k, v) == model.insert(k, v)
    probes = keys + [n for k in keys[:500] for n in neighbours(k)] + \
        [rng.randbytes(key_len) for _ in range(300)]
    search_against_model(tree, model, rng, probes)
    for k in keys[: len(keys) // 2]:
        assert tree.remove(k) == model.remove(k)
    search_against_model(tree, model, rng, probes)
    for k in keys[: len(keys) // 4]:
        v = rng.randbytes(value_len)
        assert tree.try_insert(k, v) == model.insert(k, v, False)
    search_against_model(tree, model, rng, probes)
    assert_same(tree, model)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from([(16, 0), (24, 0), (16, 16), (3, 0), (9, 0)]),
       st.lists(st.integers(0, 2 ** 40), min_size=9, max_size=300, unique=True),
       st.integers(0, 2 ** 40), st.integers(0, 15))
def test_one_bucket_search_uneven(tree_paths, shape, offsets, probe, shift):
    """One bucket holding keys at arbitrary (uneven) offsets from a base, shifted to
    make them differ first at various bytes: every key and probe are searched exactly
    (the guess may be anywhere)."""
    key_len, value_len = shape
    base = int.from_bytes(bytes(range(7, 7 + key_len)), "big")
    mask = 256 ** key_len - 1
    keys = [be((base + (o << shift)) & mask, key_len) for o in offsets]
    probe_key = be((base + (probe << shift)) & mask, key_len)
    tree = RadixTestTree(key_len, value_len)
    model = Model()
    for k in keys:
        v = k[-1:] * value_len
        tree.insert(k, v)
        model.insert(k, v)
    assert tree.stats()["buckets"] <= 2
    for k in keys + [probe_key] + neighbours(probe_key):
        assert tree.find(k) == model.d.get(k)
        assert tree.range_forward("ge", k, 1) == model.walk("ge", k, True, 1)
        assert tree.range_backward("le", k, 1) == model.walk("le", k, False, 1)
    for k in keys[::3]:
        assert tree.remove(k) == model.remove(k)
    for k in keys:
        assert tree.find(k) == model.d.get(k)
    assert_same(tree, model)


def test_inserts_use_the_head_gap(tree_paths):
    """A full bucket that lost its first entries (acks) takes inserts before its end in
    the gap at its head instead of bursting; an append still bursts it (the queue case,
    see test_queue_filling_its_bucket)."""
    tree = RadixTestTree(16, 8)
    model = Model()
    n = tree.bucket_max
    keys = [id_key(16, 2 * i) for i in range(n)]
    for k in keys:
        assert tree.insert(k, k[8:]) and model.insert(k, k[8:])
    assert tree.stats() == dict(tree.stats(), buckets=1, slack_entries=0)
    for k in keys[:3]:
        assert tree.remove(k) == model.remove(k)
    size = tree.bytes_used
    for i in (n - 5, n // 2):       # odd IDs between the even ones, before the end
        k = id_key(16, 2 * i + 1)
        assert tree.insert(k, k[8:]) and model.insert(k, k[8:])
        tree.check()
        assert tree.stats()["buckets"] == 1 and tree.bytes_used == size
    assert_same(tree, model)
    k = id_key(16, 2 * n + 1)       # an append with only a 1-entry gap bursts it
    assert tree.insert(k, k[8:]) and model.insert(k, k[8:])
    assert tree.stats()["buckets"] == 2
    assert_same(tree, model)


def test_prefetch_many_is_only_a_hint():
    """radix_locate_many descends side by side without changing anything: present,
    absent and out-of-range keys, small (skipped) and big trees, any batch size."""
    rng = random.Random(5)
    for key_len, value_len, n in [(16, 16, 50_000), (16, 0, 100), (24, 0, 60_000)]:
        tree = RadixTestTree(key_len, value_len)
        tree.prefetch([rng.randbytes(key_len) for _ in range(3)])     # empty tree
        model = Model()
        keys = dist_sequential_ids(rng, key_len, n)
        for k in keys:
            v = k[-1:] * value_len
            tree.insert(k, v)
            model.insert(k, v)
        size = tree.bytes_used
        for batch in (0, 1, 31, 32, 33, 1000):
            probes = rng.sample(keys, min(batch, len(keys)))
            probes += [rng.randbytes(key_len) for _ in range(batch // 10)]
            probes += [bytes(key_len), b"\xff" * key_len][: batch and 2]
            tree.prefetch(probes)
            for k in probes:
                assert tree.find(k) == model.d.get(k)
        for k in rng.sample(keys, min(200, len(keys))):
            tree.prefetch([k])
            assert tree.remove(k) == model.remove(k)
        assert size >= tree.bytes_used
        assert_same(tree, model)
    with pytest.raises(ValueError):
        RadixTestTree(16, 0).prefetch([b"short"])


# ---------------------------------------------------------------- memory

N = 200_000
T0 = 1_700_000_000_000


def id_keys(per_ms):
    return [struct.pack(">QQ", T0 + i // per_ms, i % per_ms) for i in range(N)]


def time_id_keys(per_ms):
    return [struct.pack(">QQQ", T0 + 5000 + i // per_ms, T0 + i // per_ms, i % per_ms)
            for i in range(N)]


def fill(key_len, value_len, keys):
    tree = RadixTestTree(key_len, value_len)
    v = bytes(value_len)
    for k in keys:
        tree.insert(k, v)
    tree.check()
    return tree


# (name, key_len, value_len, keys, bytes/key measured when written). The asserted
# bound is 15% above the measurement; the product target is 40/22/30 bytes.
MEMORY_CASES = [
    ("16B id + 16B value, 1 id/ms", 16, 16, lambda: id_keys(1), 32.53),
    ("16B id + 16B value, same ms", 16, 16, lambda: id_keys(N), 32.52),
    ("16B id, no value, 1 id/ms", 16, 0, lambda: id_keys(1), 16.37),
    ("16B id, no value, same ms", 16, 0, lambda: id_keys(N), 16.36),
    ("24B time+id, 1 key/ms", 24, 0, lambda: time_id_keys(1), 24.36),
    ("24B time+id, 100 keys/ms", 24, 0, lambda: time_id_keys(100), 24.25),
]


@pytest.mark.parametrize("name,key_len,value_len,make_keys,measured", MEMORY_CASES,
                         ids=[c[0] for c in MEMORY_CASES])
def test_memory_sequential(name, key_len, value_len, make_keys, measured):
    bound = measured * 1.15
    keys = make_keys()
    tree = fill(key_len, value_len, keys)
    per_key = tree.bytes_used / N
    print(f"\n{name}: {per_key:.2f} bytes/key (raw {key_len + value_len}) {tree.stats()}")
    assert per_key <= bound, f"{name}: {per_key:.2f} bytes/key > {bound}"
    # Acks in order: memory follows the live keys down to the empty tree.
    for k in keys[: N // 2]:
        tree.remove(k)
    half = tree.bytes_used / (N // 2)
    assert half <= bound, f"{name}: {half:.2f} bytes/key after removing the first half"
    for k in keys[N // 2:]:
        tree.remove(k)
    tree.check()
    assert emptied(tree)


def test_memory_random_removal_shrinks():
    keys = id_keys(1)
    tree = fill(16, 16, keys)
    full = tree.bytes_used
    rng = random.Random(7)
    rng.shuffle(keys)
    for fraction in (0.5, 0.75, 0.9):
        while tree.count > N * (1 - fraction):
            tree.remove(keys.pop())
        tree.check()
        per_key = tree.bytes_used / tree.count
        print(f"\nrandom removal of {fraction:.0%}: {per_key:.2f} bytes/live key, "
              f"{tree.bytes_used / full:.2f} of the full size")
        # measured 34.9 / 34.5 / 34.6 for 32 raw bytes
        assert per_key <= 40, f"{per_key:.2f} bytes/key after removing {fraction:.0%}"
    for k in keys:
        tree.remove(k)
    assert emptied(tree)


def test_memory_pel_triple():
    """A pending entry lives in the group PEL, its consumer's PEL and pel_by_time."""
    ids = id_keys(10)
    group = fill(16, 16, ids)
    consumer = fill(16, 0, ids)
    by_time = fill(24, 0, [struct.pack(">Q", T0 + 5000 + i // 10) + k
                           for i, k in enumerate(ids)])
    per_entry = (group.bytes_used + consumer.bytes_used + by_time.bytes_used) / N
    print(f"\nPEL triple: {per_entry:.2f} bytes/pending entry (raw 72)")
    assert per_entry <= 80  # measured 72.6, f"{per_entry:.2f} bytes per pending entry"


def test_small_trees_stay_small():
    tree = RadixTestTree(16, 0)
    for i in range(3):
        tree.insert(struct.pack(">QQ", T0, i))
    small = tree.bytes_used - tree.header_bytes
    print(f"\n3-entry consumer PEL: {small} bytes beyond the {tree.header_bytes}-byte header")
    assert small <= 56  # one bucket: 8-byte header + 3 keys
    tree.check()


def test_rejects_bad_lengths():
    with pytest.raises(ValueError):
        RadixTestTree(0, 0)
    with pytest.raises(ValueError):
        RadixTestTree(33, 0)
    with pytest.raises(ValueError):
        RadixTestTree(16, 65)
    tree = RadixTestTree(16, 8)
    with pytest.raises(ValueError):
        tree.insert(b"short", bytes(8))
    with pytest.raises(ValueError):
        tree.insert(bytes(16), b"")


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(SHAPES), st.sampled_from([0, 2, 3, 5]), st.sampled_from(PATTERNS),
       st.data())
def test_floor_with_a_carried_cursor_matches_a_sorted_list(tree_paths, shape, bucket_max,
                                                          pattern, data):
    """radix_floor (the claim path's batched lookup) over ascending probes, including
    probes below, between and above the stored keys: the largest key <= the probe, and
    the key after it when that one shares its bucket."""
    key_len, value_len = shape
    stored = sorted(set(data.draw(st.lists(pattern(key_len), min_size=0, max_size=200))))
    probes = sorted(data.draw(st.lists(pattern(key_len), min_size=1, max_size=60))
                    + data.draw(st.lists(st.sampled_from(stored), max_size=20)
                                if stored else st.just([])))
    tree = RadixTestTree(key_len, value_len, bucket_max)
    for k in stored:
        tree.insert(k, bytes(value_len))
    for probe, (floor, after) in zip(probes, tree.floor_many(probes)):
        below = [k for k in stored if k <= probe]
        assert floor == (below[-1] if below else None)
        if after is not None:
            i = stored.index(floor)
            assert i + 1 < len(stored) and after == stored[i + 1]
