"""The C building blocks of compact collections (engine/core/listpack, intset,
hashtable) against Python models: random operations through the probes of
tests/native/collection_blocks_probe.pyx, with the memory they hold counted."""
import gc
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.memory import used_bytes
from native.collection_blocks_probe import HashTableProbe, IntSetProbe, ListpackProbe

INT64 = st.integers(-(1 << 63), (1 << 63) - 1)
# byte strings that exercise every entry encoding: small and big integers as text,
# non-canonical integer texts, and strings around the 63/4095 length limits
ENTRY = st.one_of(
    INT64.map(lambda n: str(n).encode()),
    st.integers(-5000, 5000).map(lambda n: str(n).encode()),
    st.sampled_from([b"", b"-0", b"007", b"+1", b" 1", b"9223372036854775808",
                     b"-9223372036854775809", b"-", b"x" * 63, b"x" * 64, b"y" * 4095,
                     b"y" * 4096]),
    st.binary(max_size=80),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("aird"), ENTRY, st.integers(0, 1 << 16)),
                max_size=60))
def test_listpack_matches_a_list(ops):
    lp, model = ListpackProbe(), []
    for op, s, where in ops:
        if op == "a":
            lp.append(s)
            model.append(s)
        elif op == "i":
            i = where % (len(model) + 1)
            lp.insert(i, s)
            model.insert(i, s)
        elif model and op == "r":
            i = where % len(model)
            lp.replace(i, s)
            model[i] = s
        elif model and op == "d":
            i, n = where % len(model), 1 + where % 3
            lp.delete(i, n)
            del model[i:i + n]
        assert len(lp) == len(model)
    assert lp.forward() == model
    assert lp.backward() == model[::-1]
    assert [lp.get(i) for i in range(len(model))] == model
    assert [lp.get(-1 - i) for i in range(len(model))] == model[::-1]
    for s in set(model):
        assert lp.find(s) == model.index(s)
        assert lp.equals(model.index(s), s)
    assert lp.copy().forward() == model


def test_listpack_packs_integers_and_finds_by_pairs():
    lp = ListpackProbe()
    empty = lp.nbytes
    for n in (0, 127, -4096, 4095, 32767, -8388608, 2147483647, -(1 << 63)):
        lp.append(str(n).encode())
    # 1+1, 2+1, 2+1, 3+1, 4+1, 5+1, 9+1 plus the two-byte 0/127 entries: all integers
    assert lp.nbytes - empty == 2 + 2 + 3 + 3 + 4 + 5 + 6 + 10
    assert lp.forward()[-1] == b"-9223372036854775808"
    pairs = ListpackProbe()
    for s in (b"f1", b"v", b"f2", b"f1"):
        pairs.append(s)
    assert pairs.find(b"v", skip=1) == -1         # only fields are looked at
    assert pairs.find(b"f1", skip=1) == 0
    assert pairs.find(b"f1", skip=1, start=1) == 3        # only values


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.one_of(
    st.integers(-40000, 40000), st.integers(-(1 << 40), 1 << 40), INT64)), max_size=200))
def test_intset_matches_a_sorted_set(ops):
    s, model = IntSetProbe(), set()
    for add, v in ops:
        if add:
            assert s.add(v) == (v not in model)
            model.add(v)
        else:
            assert s.remove(v) == (v in model)
            model.discard(v)
        assert len(s) == len(model)
    assert s.items() == sorted(model)
    for v in list(model)[:20]:
        assert v in s
    assert s.copy().items() == sorted(model)


def test_intset_widens_and_keeps_its_width():
    s = IntSetProbe()
    s.add(5)
    assert s.width == 2
    s.add(-70000)
    assert s.width == 4 and s.items() == [-70000, 5]
    s.add(1 << 40)
    assert s.width == 8 and s.items() == [-70000, 5, 1 << 40]
    s.remove(1 << 40)
    assert s.width == 8 and (1 << 40) not in s and 5 in s


KEY = st.binary(min_size=0, max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("ssd"), KEY, st.binary(max_size=20)),
                max_size=400), st.booleans())
def test_hash_table_matches_a_dict(ops, values):
    t, model = HashTableProbe(values), {}
    for op, k, v in ops:
        if op == "s":
            assert t.set(k, v) == (k not in model)
            model[k] = v if values else b""
        else:
            assert t.delete(k) == (k in model)
            model.pop(k, None)
        assert len(t) == len(model)
    assert t.items() == model
    for k, v in model.items():
        assert t.get(k) == v
    assert t.copy().items() == model
    if model:
        assert t.random_key() in model
    else:
        assert t.random_key() is None


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2000), st.lists(st.tuples(st.booleans(), st.integers(0, 4000)),
                                      max_size=60), st.integers(1, 40))
def test_scan_returns_every_element_present_for_the_whole_scan(start, changes, per_call):
    """Between calls the table grows and shrinks (through rehashes); each element that is
    there from the first call to the last is returned at least once, and nothing that
    was never there is returned."""
    t = HashTableProbe(False)
    keys = [b"k%d" % i for i in range(start)]
    for k in keys:
        t.set(k)
    present = set(keys)
    ever = set(keys)
    seen = set()
    cursor, calls = 0, 0
    changes = list(changes)
    while True:
        cursor, got = t.scan(cursor)
        seen.update(got)
        calls += 1
        if calls % per_call == 0 and changes:
            add, n = changes.pop()
            for i in range(n if add else n // 4):
                k = b"n%d" % random.randrange(8000) if add else (
                    random.choice(sorted(present)) if present else None)
                if k is None:
                    break
                if add:
                    t.set(k)
                    present.add(k)
                    ever.add(k)
                else:
                    t.delete(k)
                    present.discard(k)
        if cursor == 0:
            break
    stayed = set(keys) & present
    assert stayed <= seen
    assert seen <= ever


def test_hash_table_rehashes_incrementally_and_shrinks():
    t = HashTableProbe(False)
    for i in range(1000):
        t.set(b"%d" % i)
    assert t.buckets[0] >= 512
    grew = 0
    for i in range(1000, 1100):
        t.set(b"%d" % i)
        grew += t.rehashing
    assert grew > 0          # a rehash spanned several commands
    for i in range(1100):
        assert t.delete(b"%d" % i)
    assert len(t) == 0 and sum(t.buckets) <= 16


def test_hash_table_random_key_is_fair_enough():
    t = HashTableProbe(False)
    for i in range(50):
        t.set(b"%d" % i)
    counts = {}
    for _ in range(20000):
        k = t.random_key()
        counts[k] = counts.get(k, 0) + 1
    assert len(counts) == 50
    assert min(counts.values()) > 100        # expected 400 each


def test_memory_is_counted_and_given_back():
    gc.collect()                    # earlier tests' garbage is not freed during this one
    before = used_bytes()
    t, lp, s = HashTableProbe(True), ListpackProbe(), IntSetProbe()
    for i in range(5000):
        t.set(b"field:%d" % i, b"value:%d" % i)
        lp.append(b"member:%d" % i)
        s.add(i * 7)
    held = used_bytes() - before
    assert held >= t.nbytes + lp.nbytes + s.nbytes - 64
    # an entry of a key-only table is one 32-byte block for keys up to 12 bytes
    k = HashTableProbe(False)
    base = used_bytes()
    for i in range(1024):
        k.set(b"member:%05d" % i)
    assert used_bytes() - base <= 1024 * (32 + 8 * 2) + 256
    del t, lp, s, k
    assert used_bytes() == before
