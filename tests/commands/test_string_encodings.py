"""OBJECT ENCODING and OBJECT REFCOUNT of strings as redis-server 7.0 reports them after
the commands that make a string other than by storing it: INCRBYFLOAT (embstr, even an
integer's text), APPEND and SETRANGE (raw, an integer string included), COPY (an
integer object of its own, refcount 1), MOVE and RENAME (the object itself); a later
SET forgets it."""
from __future__ import annotations

from differential import run_both
from test_keys_strings import cmds

SEQUENCE = cmds("""
    SET a 1.5
    INCRBYFLOAT a 1
    OBJECT ENCODING a
    OBJECT REFCOUNT a
    INCRBYFLOAT b 3
    OBJECT ENCODING b
    OBJECT REFCOUNT b
    INCRBYFLOAT b 100000
    OBJECT ENCODING b
    SET i 123
    APPEND i 4
    OBJECT ENCODING i
    OBJECT REFCOUNT i
    SET j 123
    SETRANGE j 0 9
    OBJECT ENCODING j
    OBJECT REFCOUNT j
    SET j2 123
    SETRANGE j2 5 9
    OBJECT ENCODING j2
    APPEND n 5
    OBJECT ENCODING n
    OBJECT REFCOUNT n
    SETRANGE r 0 12
    OBJECT ENCODING r
    OBJECT REFCOUNT r
    SET s 5
    COPY s s2
    OBJECT ENCODING s2
    OBJECT REFCOUNT s2
    OBJECT REFCOUNT s
    SET s5 1000000
    COPY s5 s6
    OBJECT ENCODING s6
    OBJECT REFCOUNT s6
    COPY i i2
    OBJECT ENCODING i2
    COPY b b2
    OBJECT ENCODING b2
    RENAME i i3
    OBJECT ENCODING i3
    MOVE j 1
    SELECT 1
    OBJECT ENCODING j
    SELECT 0
    SET e abc
    APPEND e d
    OBJECT ENCODING e
    SET f 12
    SETRANGE f 0 ""
    OBJECT ENCODING f
    APPEND f ""
    OBJECT ENCODING f
    OBJECT REFCOUNT f
    SET f 12
    OBJECT ENCODING f
    OBJECT REFCOUNT f
    INCR i3
    OBJECT ENCODING i3
    OBJECT REFCOUNT i3
""")


def test_string_encodings_match_redis(engine, oracle):
    run_both(engine, oracle, SEQUENCE, label="string encodings")
