"""Consumer PELs after claims: a claim leaves the old owner's key in place (stale, see
engine/core/groups.pyx); every reader of a consumer's PEL must still see exactly what the
consumer owns, and the stale keys must go (all at once when it owns nothing, by a
sweep once they outnumber the owned ones). Checked against a model of who owns
what, with thousands of entries so that the sweeps happen."""
import random

import pytest

from engine import Engine, ManualClock
from native.groups_probe import consumer_pel_state, verify_group

T0 = 1_700_000_000_000
CONSUMERS = ["c1", "c2", "c3", "c4"]


def group(e):
    return e.databases[0].peek(b"s").groups[b"g"]


def owned_by(model, name):
    return sorted((k for k, owner in model.items() if owner == name), key=key_order)


def key_order(k):
    ms, seq = k.split(b"-")
    return int(ms), int(seq)


def check(e, model):
    verify_group(group(e))
    summary = e.execute("XPENDING", "s", "g")
    assert summary[0] == len(model)
    counts = {name.decode(): int(n) for name, n in (summary[3] or [])}
    for name in CONSUMERS:
        mine = owned_by(model, name)
        assert counts.get(name, 0) == len(mine)
        try:
            rows = e.execute("XPENDING", "s", "g", "-", "+", len(model) + 1, name)
        except Exception:
            rows = []
        assert [r[0] for r in rows] == mine
    info = e.execute("XINFO", "STREAM", "s", "FULL", "COUNT", 0)
    consumers = dict(zip(info[info.index(b"groups") + 1][0][::2],
                         info[info.index(b"groups") + 1][0][1::2]))[b"consumers"]
    for c in consumers:
        fields = dict(zip(c[::2], c[1::2]))
        mine = owned_by(model, fields[b"name"].decode())
        assert fields[b"pel-count"] == len(mine)
        assert [p[0] for p in fields[b"pending"]] == mine


@pytest.mark.parametrize("seed", range(4))
def test_readers_see_only_what_each_consumer_owns(seed):
    rng = random.Random(seed)
    clock = ManualClock(T0)
    e = Engine(clock=clock)
    n = 6000
    for i in range(1, n + 1):
        e.execute("XADD", "s", f"{i}-0", "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    model = {}                                  # pending id -> owner
    for name in CONSUMERS:
        e.execute("XGROUP", "CREATECONSUMER", "s", "g", name)
    for step in range(60):
        clock.advance(rng.choice((1, 10, 100)))
        op = rng.random()
        name = rng.choice(CONSUMERS)
        if op < 0.2:
            rep = e.execute("XREADGROUP", "GROUP", "g", name, "COUNT", rng.choice((10, 500, 2500)),
                            "STREAMS", "s", ">")
            for entry in (rep[0][1] if rep else []):
                model[entry[0]] = name
        elif op < 0.45 and model:
            ids = rng.sample(sorted(model), min(len(model), rng.choice((1, 50, 1500))))
            rep = e.execute("XCLAIM", "s", "g", name, 0, *ids, "JUSTID")
            assert sorted(rep, key=key_order) == sorted(ids, key=key_order)
            for k in ids:
                model[k] = name
        elif op < 0.6 and model:
            rep = e.execute("XREADGROUP", "GROUP", "g", name, "COUNT", rng.choice((20, 1200)),
                            "CLAIM", 0, "STREAMS", "s", ">")
            for entry in (rep[0][1] if rep else []):
                model[entry[0]] = name
        elif op < 0.7 and model:
            rep = e.execute("XAUTOCLAIM", "s", "g", name, 0, "0-0", "COUNT", 700, "JUSTID")
            for k in rep[1]:
                model[k] = name
        elif op < 0.8 and model:
            ids = rng.sample(sorted(model), min(len(model), rng.choice((1, 300))))
            assert e.execute("XACK", "s", "g", *ids) == len(ids)
            for k in ids:
                del model[k]
        elif op < 0.9:
            # history: the consumer's own entries, each delivered once more
            rep = e.execute("XREADGROUP", "GROUP", "g", name, "STREAMS", "s", "0")
            assert [entry[0] for entry in rep[0][1]] == owned_by(model, name)
        else:
            mine = owned_by(model, name)
            assert e.execute("XGROUP", "DELCONSUMER", "s", "g", name) == len(mine)
            for k in mine:
                del model[k]
            e.execute("XGROUP", "CREATECONSUMER", "s", "g", name)
        check(e, model)


def test_stale_keys_go_when_the_consumer_owns_nothing_and_when_they_outnumber():
    clock = ManualClock(T0)
    e = Engine(clock=clock)
    for i in range(1, 5001):
        e.execute("XADD", "s", f"{i}-0", "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    e.execute("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    g = group(e)
    mem = e.used_memory()
    # c2 takes 2,000 of c1's 5,000: stale keys in c1 (fewer than what it owns)
    clock.advance(1)
    e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", 2000, "CLAIM", 0, "STREAMS", "s", ">")
    verify_group(g)
    # 1,200 more: 3,200 stale against 1,800 owned: a sweep of c1's PEL is under way
    clock.advance(1)
    e.execute("XREADGROUP", "GROUP", "g", "c2", "COUNT", 1200, "CLAIM", 0, "STREAMS", "s", ">")
    verify_group(g)
    # everything else: c1 owns nothing and keeps nothing
    clock.advance(1)
    e.execute("XREADGROUP", "GROUP", "g", "c2", "CLAIM", 0, "STREAMS", "s", ">")
    verify_group(g)
    assert e.execute("XINFO", "CONSUMERS", "s", "g")[0][3] == 0
    # and back: c2's keys go as c1 takes them all
    clock.advance(1)
    e.execute("XREADGROUP", "GROUP", "g", "c1", "CLAIM", 0, "STREAMS", "s", ">")
    verify_group(g)
    assert e.used_memory() <= mem * 1.1


@pytest.mark.parametrize("order", ["newest first", "oldest first", "random"])
def test_a_sweep_bounds_the_stale_keys_and_ends(order):
    """c2 takes c1's 6,000 entries 100 at a time. verify_group checks the bounds after
    every call; a sweep must start once stale keys outnumber owned ones, end with no
    more stale than owned keys, whichever keys go stale first (newest first: the
    sweep meets them last), and c1 keeps nothing once it owns nothing."""
    e = Engine(clock=ManualClock(T0))
    ids = [f"{i}-0" for i in range(1, 6001)]
    for i in ids:
        e.execute("XADD", "s", i, "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g", "0")
    e.execute("XREADGROUP", "GROUP", "g", "c1", "STREAMS", "s", ">")
    g = group(e)
    if order == "newest first":
        ids.reverse()
    elif order == "random":
        random.Random(5).shuffle(ids)
    states = []
    for lo in range(0, 6000, 100):
        e.execute("XCLAIM", "s", "g", "c2", 0, *ids[lo:lo + 100], "JUSTID")
        verify_group(g)
        states.append(consumer_pel_state(g, b"c1"))
    sweeping = [s for _, _, s in states]
    start = sweeping.index(True)
    end = sweeping.index(False, start)
    keys, pending, _ = states[start - 1]
    assert keys - pending <= pending < keys - pending + 100
    keys, pending, _ = states[end]
    assert keys - pending <= pending or keys - pending < 1024
    assert keys < states[start][0]
    assert states[-1] == (0, 0, False)
