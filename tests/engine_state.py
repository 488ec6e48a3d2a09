"""Shared by the replay and persistence tests: a mixed stream workload and the state
that logging and reloading must preserve."""
from engine.groups import pending_by_time, verify_group
from engine.stream import Stream


def state_of(engine, layout=True):
    """Everything that must survive a replay or a reload, per database and key
    (consumer seen/active times aside: the log does not keep them, as in Redis)."""
    state = {}
    for db in engine.databases:
        for key in sorted(db.data):
            value = db.data[key]
            if isinstance(value, Stream):
                engine.select(db.index)
                full = engine.execute("XINFO", "STREAM", key, "FULL", "COUNT", "0")
                engine.select(0)
                groups = {}
                for name, g in value.groups.items():
                    verify_group(g)
                    groups[name] = pending_by_time(g)
                full = strip_consumer_times(full)
                if not layout:       # node boundaries: a rewrite packs entries anew
                    for field in (b"radix-tree-keys", b"radix-tree-nodes"):
                        full[full.index(field) + 1] = None
                state[(db.index, key)] = (full, groups)
            else:
                state[(db.index, key)] = (value, db.expires.get(key))
    return state


def strip_consumer_times(full):
    """Consumer seen/active times are not part of the log (as in Redis)."""
    full = list(full)
    groups = full[full.index(b"groups") + 1]
    for g in groups:
        consumers = g[g.index(b"consumers") + 1]
        for c in consumers:
            for field in (b"seen-time", b"active-time"):
                i = c.index(field)
                c[i + 1] = None
    return full


def workload(engine, clock, rng, steps):
    """A mixed run with auto IDs, approximate trims, claims, acks and expiry."""
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
