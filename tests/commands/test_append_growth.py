"""APPEND grows the string the keyspace holds in place (Database.append): appends in a
row cost what they add, not a copy of the whole string each. Measured through the
allocator (tracemalloc's peak: a copy needs the old and the new string at once), and
checked for what must not change: a value a caller still holds, and everything that
reads strings afterwards (GET, GETRANGE, STRLEN, SETRANGE, DUMP/RESTORE, COPY, a
rewrite and a restart).
"""
from __future__ import annotations

import tracemalloc

from engine import Engine

MB = 1 << 20


def test_append_to_a_big_string_does_not_copy_it() -> None:
    """One 1 MB APPEND to a 32 MB string: the traced peak stays near the chunk (a
    copy would need 33 MB more at once)."""
    e = Engine()
    chunk = b"y" * MB
    tracemalloc.start()         # the string is traced as it grows: realloc counts the difference
    try:
        e.execute("SET", "big", b"x" * MB)
        for _ in range(31):
            e.execute("APPEND", "big", chunk)
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        assert e.execute("APPEND", "big", chunk) == 33 * MB
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak - before < 4 * MB, f"APPEND took {(peak - before) / MB:.1f} MB at its peak"
    assert e.execute("STRLEN", "big") == 33 * MB
    assert e.execute("GETRANGE", "big", MB - 2, MB + 1) == b"xxyy"


def test_a_held_value_does_not_change() -> None:
    """A reply a caller still holds is never grown under it."""
    e = Engine()
    e.execute("SET", "k", b"a" * 1000)
    held = e.execute("GET", "k")
    assert e.execute("APPEND", "k", b"b" * 1000) == 2000
    assert held == b"a" * 1000
    assert e.execute("GET", "k") == b"a" * 1000 + b"b" * 1000


def test_readers_of_an_appended_string(tmp_path) -> None:
    with Engine(dir=tmp_path, appendonly=True, appendfsync="always") as e:
        e.execute("SET", "k", b"ab")
        for i in range(200):
            e.execute("APPEND", "k", b"%04d" % i)
        e.execute("APPEND", "fresh", b"new")
        want = b"ab" + b"".join(b"%04d" % i for i in range(200))
        assert e.execute("GET", "k") == want
        assert e.execute("STRLEN", "k") == len(want)
        assert e.execute("SETRANGE", "k", 0, b"AB") == len(want)
        want = b"AB" + want[2:]
        assert e.execute("GETRANGE", "k", 0, 5) == want[:6]
        e.execute("RESTORE", "k2", 0, e.execute("DUMP", "k"))
        e.execute("COPY", "k", "k3")
        e.execute("APPEND", "k3", b"!")         # the copy grows, the original does not
        assert e.execute("MGET", "k", "k2", "k3", "fresh") == [want, want, want + b"!", b"new"]
        assert e.execute("OBJECT", "ENCODING", "k") == b"raw"
        e.execute("BGREWRITEAOF")
    with Engine(dir=tmp_path, appendonly=True) as e:
        assert e.execute("MGET", "k", "k2", "k3", "fresh") == [want, want, want + b"!", b"new"]
