"""Consumer-group lag and entries-read follow the newest Redis rules (7.4 #13338,
8.0 #13473 and #13958), which 7.0 gets wrong after deletions and trims; the
scenarios are the ones from those bug reports."""
from engine import Engine


def groups(e, key):
    reply = e.execute("XINFO", "GROUPS", key)[0]
    return {k.decode(): v for k, v in zip(reply[::2], reply[1::2])}


def test_tombstones_before_first_entry_do_not_hide_lag():
    e = Engine()
    e.execute("XGROUP", "CREATE", "planets", "processing", "$", "MKSTREAM")
    for i, name in enumerate(["Mercury", "Venus"], 1):
        e.execute("XADD", "planets", f"0-{i}", "name", name)
    e.execute("XREADGROUP", "GROUP", "processing", "alice", "STREAMS", "planets", ">")
    for i, name in enumerate(["Earth", "Jupiter"], 3):
        e.execute("XADD", "planets", f"0-{i}", "name", name)
    e.execute("XDEL", "planets", "0-1", "0-2")
    assert groups(e, "planets")["lag"] == 2
    e.execute("XDEL", "planets", "0-3")
    assert groups(e, "planets")["lag"] == 1


def stream_read_by_group(n, count):
    """An engine whose stream "s" holds entries 1-0 .. n-0 and whose group g1 (created
    at 0) has read the first `count` of them."""
    e = Engine()
    for i in range(1, n + 1):
        e.execute("XADD", "s", f"{i}-0", "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g1", "0")
    read_next(e, count)
    return e


def read_next(e, count):
    e.execute("XREADGROUP", "GROUP", "g1", "c1", "COUNT", str(count), "STREAMS", "s", ">")


def test_lag_after_trim_then_read_is_exact():
    e = stream_read_by_group(5, 1)
    e.execute("XTRIM", "s", "MAXLEN", "1")
    assert groups(e, "s")["lag"] == 1
    read_next(e, 1)
    info = groups(e, "s")
    assert (info["entries-read"], info["lag"]) == (5, 0)


def test_tombstone_after_position_makes_lag_unknown_until_read_past_it():
    e = stream_read_by_group(4, 2)
    assert groups(e, "s")["lag"] == 2
    e.execute("XDEL", "s", "3-0")
    assert groups(e, "s")["lag"] is None
    read_next(e, 2)
    info = groups(e, "s")
    assert (info["entries-read"], info["lag"]) == (4, 0)


def test_entriesread_is_capped_at_entries_added():
    e = Engine()
    for i in range(1, 4):
        e.execute("XADD", "s", f"{i}-0", "f", "v")
    e.execute("XGROUP", "CREATE", "s", "g", "0", "ENTRIESREAD", "10")
    assert groups(e, "s")["entries-read"] == 3
    e.execute("XGROUP", "SETID", "s", "g", "0", "ENTRIESREAD", "99")
    assert groups(e, "s")["entries-read"] == 3
