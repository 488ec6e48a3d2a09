"""Differential tests: Sluice must answer exactly like Redis (the 7.0 oracle), modulo DELIBERATE_DIFFERENCES.

Layout:
* hand-written sequences per command family (happy paths and error paths), compared on both;
* random sequences from ``command_generator`` (8 seeds x 500 commands by default;
  ``SLUICE_DIFF_SEEDS=N`` runs seeds 0..N-1, ``SLUICE_DIFF_SEEDS=3,17`` runs those seeds,
  ``SLUICE_DIFF_LENGTH`` changes the length);
* runner self-checks that need no engine: the same sequences replayed on two independent
  redis-servers must compare equal (this validates the normalizers and the generator),
  pinned Redis 7.0 error texts, and unit tests of the normalization tables;
* a few engine-only checks of newest-Redis behaviour that 7.0 cannot judge.
"""

from __future__ import annotations

import os
import shlex

import pytest

from command_generator import DEFAULT_INVALID_SHARE, generate
from differential import (
    ANY,
    DELIBERATE_DIFFERENCES,
    Command,
    CrashReply,
    ErrorReply,
    LagTracker,
    Loose,
    NewestRedisEmulation,
    NormalizeContext,
    RedisOracle,
    capture,
    excluded_difference,
    first_difference,
    normalize,
    rewrite_error,
    run_both,
)


def script(text: str) -> list[Command]:
    """Commands written one per line, redis-cli style (shell quoting, '#' comments)."""
    return [tuple(shlex.split(line)) for line in text.strip().splitlines()
            if line.strip() and not line.strip().startswith("#")]


def _seeds() -> list[int]:
    """SLUICE_DIFF_SEEDS: a count (seeds 0..N-1) or a comma-separated list of seeds."""
    raw = os.environ.get("SLUICE_DIFF_SEEDS", "8").strip()
    if "," in raw:
        return [int(part) for part in raw.split(",") if part.strip()]
    return list(range(int(raw)))


SEEDS = _seeds()
SEQUENCE_LENGTH = int(os.environ.get("SLUICE_DIFF_LENGTH", "500"))
VALIDATION_SEEDS = SEEDS[:4]

# ---------------------------------------------------------------------------------------------
# Hand-written sequences, one per command family; each includes the family's error paths.
# ---------------------------------------------------------------------------------------------

XADD_BASICS = script("""
SET str v
xadd s1
XADD s1 1-0
XADD s1 1-0 f
XADD s1 1-0 f v g
XADD s1 1-0 f v
XADD s1 1-0 f v
XADD s1 0-5 f v
XADD s1 1-1 f v g w h x
XADD s1 2 f v
XADD s1 2-* f v
XADD s1 2-* f v
XADD s1 1-* f v
XADD s1 0-0 f v
XADD fresh 0-0 f v
XADD fresh 0 f v
XADD s1 abc f v
XADD s1 1-x f v
XADD s1 -1 f v
XADD s1 18446744073709551616 f v
XADD s1 3-18446744073709551616 f v
XADD s1 FOO 9-0 f v
XADD s1 * f v extra
XADD s1 +3-0 g v
XADD s1 " 4-0" g v
XADD s1 05-000 g v
XADD s1 6-+1 g v
XADD s1 "7- -5" g v
XADD s1 "8-* " f v
XADD s1 9-** f v
XADD s1 NOMKSTREAM 10-0 f v
XADD s1 nomkstream NOMKSTREAM 11-0 f v
XADD nostream NOMKSTREAM 1-0 f v
EXISTS nostream
XADD str 5-0 f v
XADD str NOMKSTREAM 5-0 f v
XADD s1 12-0 f ""
XADD s1 13-0 "" ""
XRANGE s1 - +
XLEN s1
XLEN str
XLEN nokey
XLEN s1 extra
XLEN
XADD big 18446744073709551615-18446744073709551614 f v
XADD big 18446744073709551615-* f v
XADD big 18446744073709551615-* f v
XADD big 18446744073709551615-18446744073709551615 f v
XADD big2 18446744073709551615-* f v
XINFO STREAM big
""") + [("XADD", "bin", "1-0", b"\xff\x00field", b"\x00\xfevalue"), ("XRANGE", "bin", "-", "+")]

XADD_TRIM_OPTIONS = script("""
XADD s1 MAXLEN -1 1-0 f v
XADD s1 MAXLEN abc 1-0 f v
XADD s1 MAXLEN 9223372036854775808 1-0 f v
XADD s1 MAXLEN ~ 5 LIMIT -1 1-0 f v
XADD s1 MAXLEN ~ 5 LIMIT abc 1-0 f v
XADD s1 MAXLEN = 5 LIMIT 5 1-0 f v
XADD s1 MAXLEN 5 LIMIT 5 1-0 f v
XADD s1 LIMIT 5 1-0 f v
XADD s1 MAXLEN 1 MAXLEN 2 1-0 f v
XADD s1 MAXLEN 1 MINID 2 1-0 f v
XADD s1 MINID abc 1-0 f v
XADD s1 MINID - 1-0 f v
XADD s1 MINID + 1-0 f v
XADD s1 MINID ~ (5 1-0 f v
XADD s1 MAXLEN
XADD s1 MAXLEN 5
XADD s1 MAXLEN 5 1-0
XADD s1 MAXLEN 2 1-0 f v
XADD s1 MAXLEN 2 2-0 f v
XADD s1 MAXLEN 2 3-0 f v
XADD s1 maxlen = 2 4-0 f v
XRANGE s1 - +
XADD s1 MINID 4 5-0 f v
XRANGE s1 - +
XADD s1 MINID = 5-0 6-0 f v
XADD s1 MAXLEN ~ 1 7-0 f v
XADD s1 MAXLEN ~ 1 LIMIT 5 LIMIT 6 8-0 f v
XADD s1 MAXLEN ~ 0 9-0 f v
XLEN s1
XINFO STREAM s1
XADD s1 NOMKSTREAM MAXLEN 0 10-0 f v
XINFO STREAM s1
""")


def _node_boundary_sequence() -> list[Command]:
    """250 small entries (3 nodes of 100 with default limits), then approximate trimming."""
    adds = [("XADD", "nodes", f"{i}-0", "f", "v") for i in range(1, 251)]
    return adds + script("""
XINFO STREAM nodes
XTRIM nodes MAXLEN ~ 240
XTRIM nodes MAXLEN ~ 120
XINFO STREAM nodes
XTRIM nodes MAXLEN ~ 10 LIMIT 20
XTRIM nodes MAXLEN ~ 10 LIMIT 100
XTRIM nodes MAXLEN ~ 10
XLEN nodes
XTRIM nodes MAXLEN ~ 0 LIMIT 100
XTRIM nodes MAXLEN ~ 0
XINFO STREAM nodes
XADD nodes MINID ~ 260 300-0 f v
XINFO STREAM nodes
""")


def _node_bytes_sequence() -> list[Command]:
    """Large values: nodes split on stream-node-max-bytes (4096) long before 100 entries."""
    adds = [("XADD", "fat", f"{i}-0", "payload", "x" * 300, "other", str(i)) for i in range(1, 61)]
    mixed = [("XADD", "fat", f"{i}-0", f"field{i % 3}", "y" * (i % 50)) for i in range(61, 140)]
    return adds + script("""
XINFO STREAM fat
XTRIM fat MAXLEN ~ 30
XINFO STREAM fat
""") + mixed + script("""
XINFO STREAM fat
XTRIM fat MINID ~ 100
XINFO STREAM fat
XINFO STREAM fat FULL COUNT 3
""")


XRANGE_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 2-5 g w
XADD s1 3-0 f v
XRANGE s1 - +
XRANGE s1 - + COUNT 2
XRANGE s1 - + COUNT 0
XRANGE s1 - + COUNT -1
XRANGE s1 - + COUNT 1 COUNT 3
XRANGE s1 (1 +
XRANGE s1 (1-0 (3-0
XRANGE s1 2 2
XRANGE s1 2-5 2-5
XRANGE s1 3 1
XRANGE s1 - (0
XRANGE s1 +1 +
XRANGE s1 " 2-5" +
XRANGE s1 2-05 +
XREVRANGE s1 + -
XREVRANGE s1 + - COUNT 2
XREVRANGE s1 (3 (1
XREVRANGE s1 - +
XREVRANGE s1 + - COUNT 0
XRANGE nokey - +
XRANGE s1 - + COUNT
XRANGE s1 - + COUNT abc
XRANGE s1 - + FOO 1
XRANGE s1 (- +
XRANGE s1 - (+
XRANGE s1 ( +
XRANGE s1 (abc +
XRANGE s1 (18446744073709551615-18446744073709551615 +
XRANGE s1 - (0-0
XREVRANGE s1 (0-0 -
XREVRANGE s1 + (18446744073709551615-18446744073709551615
XRANGE s1 -5 +
XRANGE s1 1-5-5 +
XRANGE s1 "2 " +
XRANGE s1 -0 +
XRANGE s1 0x1 +
XRANGE s1 1e0 +
XRANGE s1 "" +
XRANGE s1 1- +
XRANGE nokey abc +
XRANGE str - +
XRANGE s1 -
xrange s1 - + count 1
""")

XDEL_XTRIM_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XADD s1 4-0 f v
XDEL s1 2-0 2-0 9-0
XINFO STREAM s1
XDEL s1 1-0
XINFO STREAM s1
XDEL s1
XDEL s1 abc
XDEL s1 3-0 abc
XDEL s1 -
XDEL s1 +
XDEL nokey 1-0
XDEL str 1-0
XLEN s1
XTRIM s1
XTRIM s1 MAXLEN
XTRIM s1 FOO 1
XTRIM s1 MAXLEN 1 FOO
XTRIM s1 MAXLEN 1 LIMIT
XTRIM s1 MAXLEN 1 LIMIT 10
XTRIM s1 LIMIT 10
XTRIM s1 NOMKSTREAM MAXLEN 1
XTRIM s1 = 1
XTRIM s1 MAXLEN =
XTRIM s1 MAXLEN ~
XTRIM s1 MAXLEN -1
XTRIM s1 MINID abc
XTRIM s1 LIMIT 10 MAXLEN ~ 1
XTRIM nokey MAXLEN 1
XTRIM str MAXLEN 1
XADD s1 5-0 f v
XADD s1 6-0 f v
XTRIM s1 MINID 5
XINFO STREAM s1
XTRIM s1 MAXLEN = 1
XTRIM s1 MAXLEN ~ 1 LIMIT 0
XTRIM s1 MAXLEN 0
XINFO STREAM s1
XDEL s1 6-0
XINFO STREAM s1
XADD s1 7-0 f v
XINFO STREAM s1
""")

XSETID_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XSETID
XSETID s1
XSETID s1 abc
XSETID s1 +
XSETID s1 -
XSETID s1 5-0 ENTRIESADDED
XSETID s1 5-0 ENTRIESADDED abc
XSETID s1 5-0 ENTRIESADDED -1
XSETID s1 5-0 MAXDELETEDID abc
XSETID s1 5-0 MAXDELETEDID 6-0
XSETID s1 5-0 FOO
XSETID s1 0-5
XSETID s1 5-0 ENTRIESADDED 0
XSETID nokey 5-0
XSETID nokey abc
XSETID str 5-0
XSETID s1 5-0 ENTRIESADDED 10 MAXDELETEDID 3-0
XINFO STREAM s1
XSETID s1 2-0
XSETID s1 4-0
XSETID s1 5-0 MAXDELETEDID 2-0
XINFO STREAM s1
XSETID s1 5
XADD s1 5-0 f v
XADD s1 5-* f v
XSETID s1 18446744073709551615-18446744073709551615
XADD s1 18446744073709551615-* f v
XDEL s1 1-0 5-1
XSETID s1 18446744073709551615-18446744073709551615 ENTRIESADDED 0
XINFO STREAM s1
""")

XREAD_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s2 1-0 f v
XREAD STREAMS s1 0
XREAD COUNT 1 STREAMS s1 s2 0 0
XREAD COUNT -5 STREAMS s1 0
XREAD COUNT 0 STREAMS s1 0
XREAD COUNT 1 COUNT 2 STREAMS s1 0
XREAD STREAMS s1 s1 0 1
XREAD STREAMS s1 1
XREAD STREAMS s1 1-0
XREAD STREAMS s1 2-0
XREAD STREAMS s1 $
XREAD STREAMS nokey $
XREAD STREAMS nokey 0
XREAD STREAMS s1 nokey 0 0
XREAD STREAMS s1 18446744073709551615-18446744073709551615
XREAD STREAMS s1 " 1"
XREAD STREAMS s1
XREAD STREAMS s1 s2 0
XREAD STREAMS
XREAD COUNT
XREAD COUNT abc STREAMS s1 0
XREAD s1 0
XREAD FOO STREAMS s1 0
XREAD STREAMS s1 >
XREAD GROUP g c STREAMS s1 0
XREAD NOACK STREAMS s1 0
XREAD STREAMS s1 abc
XREAD STREAMS s1 (1
XREAD STREAMS s1 -
XREAD STREAMS str 0
XREAD STREAMS s1 s2 str 0 0 0
XREAD STREAMS s1 s2 nokey abc 0 0
xread count 1 streams s1 0
""")

XGROUP_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XGROUP
XGROUP CREATE
XGROUP CREATE s1
XGROUP CREATE s1 g
XGROUP CREATE s1 g 0
XGROUP CREATE s1 g 0
XGROUP CREATE s1 g2 abc
XGROUP CREATE s1 g2 0 FOO
XGROUP create s1 g2 0 foo
XGROUP CREATE s1 g2 0 MKSTREAM ENTRIESREAD 1 EXTRA
XGROUP CREATE s1 g2 0 ENTRIESREAD
XGROUP CREATE s1 g2 0 ENTRIESREAD -5
XGROUP CREATE s1 g2 0 ENTRIESREAD abc
XGROUP CREATE s1 g2 0 ENTRIESREAD 18446744073709551615
XGROUP CREATE s1 g3 0 ENTRIESREAD 1 ENTRIESREAD 2
XGROUP CREATE nokey g 0
XGROUP CREATE str g 0
XGROUP CREATE str g 0 MKSTREAM
XGROUP CREATE s1 g3 -
XGROUP CREATE s1 g3 +
XGROUP CREATE s1 g4 99
XGROUP CREATE s1 g5 1-0 MKSTREAM MKSTREAM MKSTREAM
XGROUP CREATE s1 g6 $
xgroup create mk g 0 mkstream
XINFO STREAM mk
XGROUP SETID s1 g 0
XGROUP SETID s1 g $
XGROUP SETID s1 g -
XGROUP SETID s1 g +
XINFO GROUPS s1
XGROUP SETID s1 g 5 ENTRIESREAD
XGROUP SETID s1 g 5 MKSTREAM
XGROUP SETID s1 g 5 ENTRIESREAD -2
XGROUP SETID s1 nog 0
XGROUP SETID nokey g 0
XGROUP SETID s1 g
XGROUP DESTROY s1 g4
XGROUP DESTROY s1 g4
XGROUP DESTROY nokey g
XGROUP DESTROY s1
XGROUP DESTROY s1 g4 extra
XGROUP DESTROY str g
XGROUP CREATECONSUMER s1 g c1
XGROUP CREATECONSUMER s1 g c1
XGROUP CREATECONSUMER s1 nog c1
XGROUP CREATECONSUMER nokey g c1
XGROUP CREATECONSUMER s1 g
XINFO CONSUMERS s1 g
XGROUP DELCONSUMER s1 g c1
XGROUP DELCONSUMER s1 g c1
XGROUP DELCONSUMER s1 nog c1
XGROUP FOO s1 g
XGROUP FOO
XGROUP HELP extra
XINFO GROUPS s1
""")

XREADGROUP_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XADD s2 1-0 f v
XREADGROUP GROUP g c STREAMS s1 >
XGROUP CREATE s1 g 0
XGROUP CREATE s2 g $
XREADGROUP GROUP g c1 COUNT 1 STREAMS s1 >
XREADGROUP GROUP g c1 STREAMS s1 >
XREADGROUP GROUP g c1 STREAMS s1 >
XREADGROUP GROUP g c2 STREAMS s1 s2 > >
XINFO CONSUMERS s1 g
XINFO CONSUMERS s2 g
XREADGROUP GROUP g c1 STREAMS s1 0
XREADGROUP GROUP g c1 COUNT 1 STREAMS s1 1-0
XREADGROUP GROUP g c2 STREAMS s1 0
XREADGROUP GROUP g c9 STREAMS s1 99-0
XPENDING s1 g - + 10
XDEL s1 2-0
XREADGROUP GROUP g c1 STREAMS s1 0
XADD s1 4-0 f v
XADD s1 5-0 f v
XREADGROUP GROUP g c3 NOACK STREAMS s1 >
XPENDING s1 g
XINFO GROUPS s1
XREADGROUP GROUP g c1 STREAMS s1 s1 > >
XREADGROUP GROUP g c1 STREAMS s1 s1 0 0
XREADGROUP GROUP g c1 BLOCK 0 STREAMS s1 0
XREADGROUP GROUP g c STREAMS s1 s2 >
XREADGROUP GROUP nog c STREAMS s1 >
XREADGROUP GROUP g c STREAMS nokey >
XREADGROUP GROUP g c STREAMS s1 s2 s1 0 0
XREADGROUP STREAMS s1 >
XREADGROUP GROUP g STREAMS s1 >
XREADGROUP GROUP g c s1 >
XREADGROUP COUNT 1 NOACK STREAMS s1 >
XREADGROUP GROUP g c COUNT abc STREAMS s1 >
XREADGROUP GROUP g c FOO STREAMS s1 >
XREADGROUP GROUP g c STREAMS str >
XREADGROUP GROUP g c STREAMS s1 abc
XREADGROUP GROUP g c STREAMS s1 -
XREADGROUP GROUP g c STREAMS s1 $
XREADGROUP GROUP g c GROUP g2 c3 STREAMS s1 0
xreadgroup group g c4 count 1 streams s1 0
XINFO STREAM s1 FULL
""")

XACK_XPENDING_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XGROUP CREATE s1 g 0
XREADGROUP GROUP g c1 COUNT 2 STREAMS s1 >
XREADGROUP GROUP g c2 STREAMS s1 >
XPENDING s1 g
XPENDING s1 g - + 10
XPENDING s1 g - + 10 c1
XPENDING s1 g - + 10 nocons
XPENDING s1 g - + 1
XPENDING s1 g (1 + 10
XPENDING s1 g - (3 10
XPENDING s1 g - + 0
XPENDING s1 g - + -5
XPENDING s1 g IDLE 0 - + 10
XPENDING s1 g idle 0 - + 10 c2
XPENDING s1 g IDLE -5 - + 10
XPENDING s1 g IDLE 1000000000000 - + 10
XPENDING s1 g - + 10 c1 extra
XACK s1 g
XACK s1 g 1-0 1-0 9-0
XACK s1 g abc
XACK s1 g 2-0 abc
XACK s1 nog 2-0
XACK s1 nog abc
XACK nokey g 2-0
XACK str g 2-0
XACK s1 g -
XPENDING s1 g
XPENDING s1 nog
XPENDING nokey g
XPENDING str g
XPENDING s1
XPENDING s1 g -
XPENDING s1 g - +
XPENDING s1 g - + abc
XPENDING s1 g IDLE abc - + 10
XPENDING s1 g IDLE 0 - +
XPENDING s1 g IDLE 0 - + 10 c1 extra
XPENDING s1 g abc + 10
XPENDING s1 g - (0-0 10
XPENDING nokey g - + 10
XACK s1 g 2-0 3-0
XPENDING s1 g
XPENDING s1 g - + 10
""")

XCLAIM_FAMILY = script("""
SET str v
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XADD s1 4-0 f v
XGROUP CREATE s1 g 0
XREADGROUP GROUP g c1 COUNT 3 STREAMS s1 >
XCLAIM s1 g c2 0 1-0
XCLAIM s1 g c2 -5 1-0
XCLAIM s1 g c2 0 1-0 2-0 JUSTID
XPENDING s1 g - + 10
XCLAIM s1 g c3 0 1-0 RETRYCOUNT 7 JUSTID
XCLAIM s1 g c3 0 4-0
XCLAIM s1 g c3 0 4-0 FORCE JUSTID
XCLAIM s1 g c3 0 9-0 FORCE
XCLAIM s1 g c3 0 1-0 LASTID 99-0
XINFO GROUPS s1
XCLAIM s1 g c3 0 1-0 TIME 1 RETRYCOUNT 2
XPENDING s1 g - + 10
XCLAIM s1 g c4 1000000000000 1-0 2-0 3-0 JUSTID
XCLAIM s1 g c3 0 2-0 IDLE 1000000000007
XCLAIM s1 g c4 1000000000000 2-0 3-0
XCLAIM s1 g c3 0 1-0 IDLE 3000000000000
XCLAIM s1 g c3 0 1-0 IDLE -5
XCLAIM s1 g c3 0 1-0 TIME 99999999999999
XCLAIM s1 g c3 0 1-0 TIME -1
XPENDING s1 g - + 10
XCLAIM s1 g c3 0 1-0 RETRYCOUNT -1
XCLAIM s1 g c3 0 1-0 justid force
XCLAIM s1 g c5 0 3-0 1-0
XINFO CONSUMERS s1 g
XCLAIM s1 g c6 0 77-0
XINFO CONSUMERS s1 g
XDEL s1 2-0
XCLAIM s1 g c3 0 2-0 3-0
XPENDING s1 g
XCLAIM s1 g c2 0
XCLAIM s1 g c2 abc 1-0
XCLAIM s1 nog c2 0 1-0
XCLAIM nokey g c2 0 1-0
XCLAIM nokey g c abc 1-0
XCLAIM str g c2 0 1-0
XCLAIM str g c abc 1-0
XCLAIM s1 g c2 0 1-0 FOO
XCLAIM s1 g c2 0 1-0 IDLE
XCLAIM s1 g c2 0 1-0 IDLE abc
XCLAIM s1 g c2 0 1-0 TIME abc
XCLAIM s1 g c2 0 1-0 RETRYCOUNT abc
XCLAIM s1 g c2 0 1-0 LASTID abc
XCLAIM s1 g c2 0 1-0 LASTID -
XCLAIM s1 g c3 0 abc 4-0
XCLAIM s1 g c3 0 1-0 abc
XCLAIM s1 g c3 0 -
XINFO STREAM s1 FULL
""")

XAUTOCLAIM_FAMILY = script("""
SET str v
XAUTOCLAIM nokey g c abc 0
XAUTOCLAIM str g c abc 0
XAUTOCLAIM str g c 0 0
XAUTOCLAIM nokey g c 0 0 COUNT 0
XAUTOCLAIM nokey g c 0 0
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XADD s1 4-0 f v
XGROUP CREATE s1 g 0
XREADGROUP GROUP g c1 STREAMS s1 >
XAUTOCLAIM s1 g c2 0
XAUTOCLAIM s1 g c2 0 0
XAUTOCLAIM s1 g c2 0 0 COUNT 1
XAUTOCLAIM s1 g c2 0 2-0 COUNT 1 JUSTID
XAUTOCLAIM s1 g c2 0 (2-0 COUNT 5
XAUTOCLAIM s1 g c2 0 - COUNT 5
XAUTOCLAIM s1 g c2 0 + COUNT 5
XAUTOCLAIM s1 g c2 0 0 JUSTID JUSTID
XAUTOCLAIM s1 g c2 -100 0
XAUTOCLAIM s1 g c3 1000000000000 0
XINFO CONSUMERS s1 g
XCLAIM s1 g c2 0 3-0 TIME 1
XAUTOCLAIM s1 g c3 1000000000000 0
XPENDING s1 g - + 10
XDEL s1 1-0
XAUTOCLAIM s1 g c4 0 0 COUNT 2
XPENDING s1 g - + 10
XDEL s1 2-0 3-0
XAUTOCLAIM s1 g c4 0 0 COUNT 1
XAUTOCLAIM s1 g c4 0 0 COUNT 1 JUSTID
XAUTOCLAIM s1 g c4 0 0
XPENDING s1 g
XAUTOCLAIM s1 g c2 0 (18446744073709551615-18446744073709551615
XAUTOCLAIM s1 g c2 0 abc
XAUTOCLAIM s1 g c2 0 0 COUNT
XAUTOCLAIM s1 g c2 0 0 COUNT abc
XAUTOCLAIM s1 g c2 0 0 COUNT -1
XAUTOCLAIM s1 g c2 0 0 COUNT 576460752303423488
XAUTOCLAIM s1 g c2 0 0 FOO
XAUTOCLAIM s1 nog c2 0 0
XINFO STREAM s1 FULL
""")

XINFO_FAMILY = script("""
SET str v
XINFO
XINFO STREAM
XINFO STREAM nokey
XINFO STREAM str
XINFO GROUPS nokey
XINFO GROUPS
XINFO CONSUMERS s1
XINFO FOO s1
XINFO FOO
XADD s1 1-0 f v
XADD s1 2-0 a b c d
XINFO STREAM s1
XINFO STREAM s1 FULL
XINFO STREAM s1 full COUNT 1
XINFO STREAM s1 FULL COUNT 0
XINFO STREAM s1 FULL COUNT -1
XINFO GROUPS s1
XINFO GROUPS s1 extra
XINFO CONSUMERS s1 nog
XINFO CONSUMERS nokey nog
XINFO CONSUMERS s1 nog extra
xinfo stream s1 full count abc
XINFO STREAM s1 FULL COUNT
XINFO stream s1 FULL count 1 extra
XINFO STREAM s1 BLAH
XINFO STREAM s1 FULL BLAH 0
XGROUP CREATE s1 g 0
XGROUP CREATE s1 h $
XREADGROUP GROUP g alice COUNT 1 STREAMS s1 >
XGROUP CREATECONSUMER s1 g bob
XINFO STREAM s1
XINFO STREAM s1 FULL
XINFO GROUPS s1
XINFO CONSUMERS s1 g
XINFO CONSUMERS s1 h
XDEL s1 1-0 2-0
XINFO STREAM s1
XINFO STREAM s1 FULL
XGROUP CREATE empty g $ MKSTREAM
XINFO STREAM empty
XINFO STREAM empty FULL
XINFO GROUPS empty
""")

# Lag and entries-read on streams without tombstones or trimming: compared exactly.
LAG_CLEAN = script("""
XGROUP CREATE s1 early 0 MKSTREAM
XINFO GROUPS s1
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XADD s1 4-0 f v
XGROUP CREATE s1 zero 0
XGROUP CREATE s1 dollar $
XGROUP CREATE s1 first 1-0
XGROUP CREATE s1 mid 2-0
XGROUP CREATE s1 future 9-0
XINFO GROUPS s1
XREADGROUP GROUP zero c COUNT 1 STREAMS s1 >
XREADGROUP GROUP mid c COUNT 1 STREAMS s1 >
XREADGROUP GROUP first c STREAMS s1 >
XINFO GROUPS s1
XADD s1 5-0 f v
XINFO GROUPS s1
XREADGROUP GROUP zero c NOACK STREAMS s1 >
XREADGROUP GROUP early c STREAMS s1 >
XREADGROUP GROUP dollar c STREAMS s1 >
XGROUP SETID s1 mid 3-0
XINFO GROUPS s1
XGROUP SETID s1 mid $
XINFO GROUPS s1
XGROUP SETID s1 mid 0
XREADGROUP GROUP mid c COUNT 2 STREAMS s1 >
XINFO GROUPS s1
XINFO STREAM s1 FULL
""")

# The same history with tombstones/trimming/ENTRIESREAD: lag fields are masked (see the
# "Consumer-group lag" deliberate difference), everything else is still compared exactly.
LAG_FRAGMENTED = script("""
XADD s1 1-0 f v
XADD s1 2-0 f v
XADD s1 3-0 f v
XADD s1 4-0 f v
XADD s1 5-0 f v
XGROUP CREATE s1 g 0
XGROUP CREATE s1 h 0 ENTRIESREAD 100
XREADGROUP GROUP g c COUNT 2 STREAMS s1 >
XDEL s1 3-0
XINFO GROUPS s1
XREADGROUP GROUP g c COUNT 2 STREAMS s1 >
XINFO GROUPS s1
XTRIM s1 MAXLEN 1
XINFO GROUPS s1
XINFO STREAM s1 FULL
""")

KEYSPACE_FAMILY = script("""
XADD s1 1-0 f v
SET str v
TYPE s1
TYPE str
TYPE nokey
EXISTS s1 str nokey s1
GET s1
GET str
SET s1 v
TYPE s1
XLEN s1
XADD s1 2-0 f v
DEL s1 str nokey
XADD s1 1-0 f v
XINFO STREAM s1
TYPE
EXISTS
SET str
""")

CASE_INSENSITIVITY = script("""
xadd s1 maxlen ~ 10 1-0 f v
XaDd s1 NoMkStReAm 2-0 f v
xgroup CREATE s1 g 0
XGROUP create s1 g2 0 mkstream
xgroup Create s1 g3 0 BadOption
xgroup setid s1 g 0 entriesread 1
xreadgroup group g c count 1 noack streams s1 >
xpending s1 g idle 0 - + 10
xclaim s1 g c 0 1-0 force justid
xautoclaim s1 g c 0 0 count 1 justid
xinfo stream s1 full count 1
xinfo consumers s1 g
xtrim s1 minid ~ 1 limit 10
xadd
xgroup foo
xinfo foo
XINFO stream s1 FULL count 1 extra
""")

# Which check wins when a command is wrong in two ways (argument parsing vs key type vs group).
ERROR_PRECEDENCE = script("""
SET str v
XADD str 0-0 f v
XADD nokey NOMKSTREAM 0-0 f v
XADD str abc f v
XADD str MAXLEN -1 1-0 f v
XADD str 1-0 f
XTRIM str MAXLEN abc
XDEL str abc
XRANGE str abc +
XREAD STREAMS str abc
XREAD STREAMS str nokey 0 abc
XGROUP CREATE str g abc
XGROUP SETID str g abc
XGROUP CREATE nokey g abc
XACK str g abc
XACK nokey g abc
XPENDING str g abc + 10
XPENDING nokey g abc + 10
XCLAIM str g c abc 1-0
XCLAIM nokey g c abc 1-0
XAUTOCLAIM str g c abc 0
XAUTOCLAIM nokey g c 0 abc
XSETID str abc
XSETID nokey abc
XINFO STREAM str FULL COUNT abc
XINFO CONSUMERS nokey g
XADD s 1-0 f v
XADD s 2-0 f v
XADD s 3-0 f v
XDEL s 3-0
XSETID s 1-0
XSETID s 2-5 ENTRIESADDED 0
XSETID s 2-5 MAXDELETEDID 2-9
XINFO STREAM s
XSETID s 2-5
XINFO STREAM s
XSETID s 3-0
XINFO STREAM s
""")

SEQUENCES: dict[str, list[Command]] = {
    "xadd_basics": XADD_BASICS,
    "xadd_trim_options": XADD_TRIM_OPTIONS,
    "node_boundaries": _node_boundary_sequence(),
    "node_bytes": _node_bytes_sequence(),
    "xrange_xrevrange": XRANGE_FAMILY,
    "xdel_xtrim": XDEL_XTRIM_FAMILY,
    "xsetid": XSETID_FAMILY,
    "xread": XREAD_FAMILY,
    "xgroup": XGROUP_FAMILY,
    "xreadgroup": XREADGROUP_FAMILY,
    "xack_xpending": XACK_XPENDING_FAMILY,
    "xclaim": XCLAIM_FAMILY,
    "xautoclaim": XAUTOCLAIM_FAMILY,
    "xinfo": XINFO_FAMILY,
    "lag_clean": LAG_CLEAN,
    "lag_fragmented": LAG_FRAGMENTED,
    "keyspace": KEYSPACE_FAMILY,
    "case_insensitivity": CASE_INSENSITIVITY,
    "error_precedence": ERROR_PRECEDENCE,
}

# ---------------------------------------------------------------------------------------------
# Exact Redis 7.0 error texts, pinned on the oracle (a reference for implementers as well).
# (setup commands, failing command, expected error text)
# ---------------------------------------------------------------------------------------------

_STREAM = script("XADD s 1-0 f v\nXGROUP CREATE s g 0\nSET str v")
KNOWN_ERRORS: list[tuple[list[Command], str, str]] = [
    ([], "XADD s 1-0", "ERR wrong number of arguments for 'xadd' command"),
    ([], "xadd s 1-0 f v g", "ERR wrong number of arguments for 'xadd' command"),
    (_STREAM, "XADD s 1-0 f v", "ERR The ID specified in XADD is equal or smaller than the target stream top item"),
    ([], "XADD s 0-0 f v", "ERR The ID specified in XADD must be greater than 0-0"),
    ([], "XADD s abc f v", "ERR Invalid stream ID specified as stream command argument"),
    (script("XADD s 18446744073709551615-18446744073709551615 f v"), "XADD s 18446744073709551615-* f v",
     "ERR The stream has exhausted the last possible ID, unable to add more items"),
    ([], "XADD s MAXLEN -1 1-0 f v", "ERR The MAXLEN argument must be >= 0."),
    ([], "XADD s MAXLEN ~ 1 LIMIT -1 1-0 f v", "ERR The LIMIT argument must be >= 0."),
    ([], "XADD s MAXLEN 1 LIMIT 1 1-0 f v", "ERR syntax error, LIMIT cannot be used without the special ~ option"),
    ([], "XADD s LIMIT 1 1-0 f v", "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"),
    ([], "XADD s MAXLEN 1 MINID 1 1-0 f v",
     "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"),
    ([], "XADD s MAXLEN abc 1-0 f v", "ERR value is not an integer or out of range"),
    (_STREAM, "XADD str 2-0 f v", "WRONGTYPE Operation against a key holding the wrong kind of value"),
    ([], "XRANGE s (18446744073709551615-18446744073709551615 +", "ERR invalid start ID for the interval"),
    ([], "XRANGE s - (0-0", "ERR invalid end ID for the interval"),
    ([], "XRANGE s - + COUNT", "ERR syntax error"),
    ([], "XTRIM s FOO 1", "ERR syntax error"),
    ([], "XREAD STREAMS s s2 0",
     "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."),
    ([], "XREADGROUP GROUP g c STREAMS s s2 >",
     "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."),
    ([], "XREAD STREAMS s >",
     "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option."),
    ([], "XREAD GROUP g c STREAMS s 0", "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."),
    ([], "XREAD NOACK STREAMS s 0", "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."),
    ([], "XREAD STREAMS s +", "ERR Invalid stream ID specified as stream command argument"),
    ([], "XREAD BLOCK -1 STREAMS s 0", "ERR timeout is negative"),
    ([], "XREAD BLOCK abc STREAMS s 0", "ERR timeout is not an integer or out of range"),
    ([], "XREADGROUP COUNT 1 NOACK STREAMS s >", "ERR Missing GROUP option for XREADGROUP"),
    (_STREAM, "XREADGROUP GROUP g c STREAMS s $",
     "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer "
     "by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set."),
    (_STREAM, "XREADGROUP GROUP g c STREAMS s +", "ERR Invalid stream ID specified as stream command argument"),
    (_STREAM, "XREADGROUP GROUP nog c STREAMS s >",
     "NOGROUP No such key 's' or consumer group 'nog' in XREADGROUP with GROUP option"),
    (_STREAM, "XGROUP CREATE s g 0", "BUSYGROUP Consumer Group name already exists"),
    ([], "XGROUP CREATE s g 0",
     "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM "
     "option to create an empty stream automatically."),
    (_STREAM, "XGROUP SETID s nog 0", "NOGROUP No such consumer group 'nog' for key name 's'"),
    (_STREAM, "XGROUP create s g2 0 foo",
     "ERR unknown subcommand or wrong number of arguments for 'create'. Try XGROUP HELP."),
    (_STREAM, "XGROUP FOO s g", "ERR unknown subcommand 'FOO'. Try XGROUP HELP."),
    (_STREAM, "XGROUP CREATE s g2", "ERR wrong number of arguments for 'xgroup|create' command"),
    (_STREAM, "XGROUP CREATE s g2 0 ENTRIESREAD -2", "ERR value for ENTRIESREAD must be positive or -1"),
    (_STREAM, "XPENDING s nog", "NOGROUP No such key 's' or consumer group 'nog'"),
    (_STREAM, "XPENDING s g -", "ERR syntax error"),
    (_STREAM, "XCLAIM s g c abc 1-0", "ERR Invalid min-idle-time argument for XCLAIM"),
    (_STREAM, "XCLAIM s g c 0 1-0 FOO", "ERR Unrecognized XCLAIM option 'FOO'"),
    (_STREAM, "XCLAIM s g c 0 1-0 IDLE abc", "ERR Invalid IDLE option argument for XCLAIM"),
    (_STREAM, "XCLAIM s g c 0 1-0 TIME abc", "ERR Invalid TIME option argument for XCLAIM"),
    (_STREAM, "XCLAIM s g c 0 1-0 RETRYCOUNT abc", "ERR Invalid RETRYCOUNT option argument for XCLAIM"),
    ([], "XAUTOCLAIM s g c abc 0", "ERR Invalid min-idle-time argument for XAUTOCLAIM"),
    ([], "XAUTOCLAIM s g c 0 0 COUNT 0", "ERR COUNT must be > 0"),
    (_STREAM, "XAUTOCLAIM s g c 0 0 FOO", "ERR syntax error"),
    ([], "XINFO STREAM s", "ERR no such key"),
    (_STREAM, "XINFO CONSUMERS s nog", "NOGROUP No such consumer group 'nog' for key name 's'"),
    (_STREAM, "XINFO FOO s", "ERR unknown subcommand 'FOO'. Try XINFO HELP."),
    (_STREAM, "XINFO STREAM s FULL COUNT",
     "ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP."),
    (_STREAM, "XINFO CONSUMERS s", "ERR wrong number of arguments for 'xinfo|consumers' command"),
    (_STREAM, "XSETID s 0-5", "ERR The ID specified in XSETID is smaller than the target stream top item"),
    (_STREAM, "XSETID s 5-0 MAXDELETEDID 6-0",
     "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id"),
    (_STREAM + script("XSETID s 5-0 MAXDELETEDID 4-0"), "XSETID s 3-0",
     "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"),
    (_STREAM, "XSETID s 5-0 ENTRIESADDED 0",
     "ERR The entries_added specified in XSETID is smaller than the target stream length"),
    (_STREAM, "XSETID s 5-0 ENTRIESADDED -1", "ERR entries_added must be positive"),
    ([], "XSETID s 5-0", "ERR no such key"),
]


def _run_setup(executor: NewestRedisEmulation, setup: list[Command]) -> None:
    for cmd in setup:
        executor.execute(*cmd)


# ---------------------------------------------------------------------------------------------
# Differential tests against the engine (need Sluice's engine and the oracle)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_handwritten_sequence(name: str, engine, oracle: RedisOracle) -> None:  # noqa: ANN001
    """Each command family, valid and invalid calls, replies identical to Redis."""
    run_both(engine, oracle, SEQUENCES[name], label=name)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_sequence(seed: int, engine, oracle: RedisOracle) -> None:  # noqa: ANN001
    """A seeded random sequence; on failure the report lists the command index and history."""
    run_both(engine, oracle, generate(seed, SEQUENCE_LENGTH), label=f"seed={seed}")


# Cases whose command uses a feature Sluice implements the newest way (e.g. XREAD +) are 7.0-only pins.
ENGINE_KNOWN_ERRORS = [case for case in KNOWN_ERRORS
                       if excluded_difference(tuple(shlex.split(case[1]))) is None]


@pytest.mark.parametrize(("setup", "command", "expected"), ENGINE_KNOWN_ERRORS,
                         ids=[case[1] for case in ENGINE_KNOWN_ERRORS])
def test_engine_error_text(setup: list[Command], command: str, expected: str, engine) -> None:  # noqa: ANN001
    """The engine's exact error texts for the pinned cases (newest texts mapped to 7.0's)."""
    for cmd in setup:
        engine.execute(*cmd)
    cmd = tuple(shlex.split(command))
    reply = rewrite_error(cmd, capture(engine, cmd, _engine_error_types()))
    assert reply == ErrorReply(expected)


def _engine_error_types() -> tuple[type[BaseException], ...]:
    from engine import ResponseError  # noqa: PLC0415

    return (ResponseError,)


# ---------------------------------------------------------------------------------------------
# Newest-Redis behaviour that 7.0 cannot judge (engine only)
# ---------------------------------------------------------------------------------------------


def test_engine_xread_plus_returns_last_entry(engine) -> None:  # noqa: ANN001
    """Redis 7.4: '+' as the XREAD ID reads the last entry, COUNT ignored; empty/missing -> nil."""
    for cmd in script("XADD s 1-0 f a\nXADD s 2-0 f b"):
        engine.execute(*cmd)
    assert canonical_reply(engine.execute("XREAD", "COUNT", "5", "STREAMS", "s", "+")) == [
        [b"s", [[b"2-0", [b"f", b"b"]]]]]
    assert engine.execute("XREAD", "STREAMS", "missing", "+") is None


def test_engine_xinfo_reports_newest_fields(engine) -> None:  # noqa: ANN001
    """Redis 7.2: XINFO CONSUMERS has 'inactive' (-1 if never active); FULL has 'active-time'."""
    for cmd in script("XGROUP CREATE s g $ MKSTREAM\nXGROUP CREATECONSUMER s g c"):
        engine.execute(*cmd)
    consumer = canonical_reply(engine.execute("XINFO", "CONSUMERS", "s", "g"))[0]
    fields = dict(zip(consumer[::2], consumer[1::2]))
    assert fields[b"inactive"] == -1
    full = canonical_reply(engine.execute("XINFO", "STREAM", "s", "FULL"))
    group = dict(zip(full[::2], full[1::2]))[b"groups"][0]
    full_consumer = dict(zip(group[::2], group[1::2]))[b"consumers"][0]
    assert b"active-time" in full_consumer[::2]


def test_engine_claim_creates_consumer_without_claiming(engine) -> None:  # noqa: ANN001
    """Redis 7.2 (#11099): X[AUTO]CLAIM and XREADGROUP create the consumer even if nothing moved."""
    for cmd in script("XADD s 1-0 f v\nXGROUP CREATE s g $\nXCLAIM s g a 0 1-0\n"
                      "XAUTOCLAIM s g b 0 0\nXREADGROUP GROUP g c STREAMS s >"):
        engine.execute(*cmd)
    names = [c[1] for c in canonical_reply(engine.execute("XINFO", "CONSUMERS", "s", "g"))]
    assert names == [b"a", b"b", b"c"]


def canonical_reply(reply: object) -> object:
    """Tuples as lists, so engine replies compare with literal lists."""
    if isinstance(reply, (list, tuple)):
        return [canonical_reply(item) for item in reply]
    return reply


# ---------------------------------------------------------------------------------------------
# Runner self-checks: no engine needed (these validate the harness itself)
# ---------------------------------------------------------------------------------------------


def test_generator_is_deterministic_and_replays_identically_on_redis(
        oracle: RedisOracle, second_oracle: RedisOracle) -> None:
    """Same seed -> same commands; two independent servers agree through the runner's normalizers.

    Also keeps the generator's error share near its target (~10-15%): too few errors means the
    error paths are not exercised, too many means the sequences mostly test NOGROUP.
    """
    steps = errors = 0
    for seed in VALIDATION_SEEDS:
        sequence = generate(seed, SEQUENCE_LENGTH)
        assert sequence == generate(seed, SEQUENCE_LENGTH), f"seed {seed} is not deterministic"
        oracle.execute("FLUSHALL")
        second_oracle.execute("FLUSHALL")
        result = run_both(NewestRedisEmulation(second_oracle), oracle, sequence, label=f"seed={seed}")
        steps += len(result.steps)
        errors += round(result.error_share * len(result.steps))
    share = errors / steps
    print(f"generator error share over seeds {VALIDATION_SEEDS}: {share:.1%} "
          f"(deliberately invalid: {DEFAULT_INVALID_SHARE:.0%} of picks)")
    assert 0.08 <= share <= 0.18, f"error share {share:.1%} drifted from the ~10-15% target"


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_handwritten_sequence_replays_on_redis(name: str, oracle: RedisOracle,
                                               second_oracle: RedisOracle) -> None:
    """The hand-written sequences compare equal between two servers (normalizers are sound)."""
    run_both(NewestRedisEmulation(second_oracle), oracle, SEQUENCES[name], label=name)


@pytest.mark.parametrize(("setup", "command", "expected"), KNOWN_ERRORS,
                         ids=[case[1] for case in KNOWN_ERRORS])
def test_oracle_error_text(setup: list[Command], command: str, expected: str, oracle: RedisOracle) -> None:
    """Pins the exact error texts Sluice must reproduce (Redis 7.0 through NewestRedisEmulation)."""
    executor = NewestRedisEmulation(oracle)
    _run_setup(executor, setup)
    cmd = tuple(shlex.split(command))
    assert capture(executor, cmd, (Exception,)) == ErrorReply(expected)


def test_oracle_emulates_newest_consumer_creation(oracle: RedisOracle) -> None:
    """Without emulation 7.0 creates no consumer here; with it, state matches the newest Redis.

    The emulation must not touch anything else (delivery counts, last-delivered-id).
    """
    for cmd in script("XADD s 1-0 f v\nXGROUP CREATE s g 0\nXREADGROUP GROUP g owner STREAMS s >\n"
                      "XADD s 2-0 f v"):
        oracle.execute(*cmd)
    oracle.execute("XCLAIM", "s", "g", "a", "0", "9-0")
    assert [c[1] for c in oracle.execute("XINFO", "CONSUMERS", "s", "g")] == [b"owner"]
    emulated = NewestRedisEmulation(oracle)
    emulated.execute("XCLAIM", "s", "g", "a", "0", "9-0")
    emulated.execute("XAUTOCLAIM", "s", "g", "b", "1000000000000", "0")
    assert [c[1] for c in oracle.execute("XINFO", "CONSUMERS", "s", "g")] == [b"a", b"b", b"owner"]
    assert [row[3] for row in oracle.execute("XPENDING", "s", "g", "-", "+", "10")] == [1]
    assert oracle.execute("XINFO", "GROUPS", "s")[0][7] == b"1-0"


def test_oracle_emulates_newest_xsetid_check(oracle: RedisOracle) -> None:
    """A refused XSETID leaves the stream exactly as it was (7.0 had already applied it)."""
    for cmd in script("XADD s 1-0 f v\nXADD s 2-0 f v\nXDEL s 2-0"):
        oracle.execute(*cmd)
    before = oracle.execute("XINFO", "STREAM", "s")
    reply = capture(NewestRedisEmulation(oracle), ("XSETID", "s", "1-5", "ENTRIESADDED", "7"), (Exception,))
    assert reply == ErrorReply("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id")
    assert oracle.execute("XINFO", "STREAM", "s") == before


# ---------------------------------------------------------------------------------------------
# Unit tests of the normalization tables (no server needed)
# ---------------------------------------------------------------------------------------------


class _Scripted:
    """A fake executor that replays canned replies (for runner unit tests)."""

    def __init__(self, *replies: object) -> None:
        self.replies = list(replies)

    def execute(self, *args: object) -> object:
        reply = self.replies.pop(0)
        if isinstance(reply, BaseException):
            raise reply
        return reply


def _compare(command: str, engine_reply: object, oracle_reply: object, lag_masked: bool = False) -> str | None:
    cmd = tuple(shlex.split(command))
    ctx = NormalizeContext(cmd, lag_masked)
    return first_difference(normalize(cmd, rewrite_error(cmd, engine_reply), ctx),
                            normalize(cmd, oracle_reply, ctx), 2000)


def test_xpending_idle_is_loose_but_counts_are_exact() -> None:
    assert _compare("XPENDING s g - + 10", [[b"1-0", b"c", 10, 1]], [[b"1-0", b"c", 1500, 1]]) is None
    assert _compare("XPENDING s g - + 10", [[b"1-0", b"c", 10, 1]], [[b"1-0", b"c", 5000, 1]]) is not None
    assert _compare("XPENDING s g - + 10", [[b"1-0", b"c", 10, 2]], [[b"1-0", b"c", 10, 1]]) is not None
    assert _compare("XPENDING s g", [1, b"1-0", b"1-0", [[b"c", b"1"]]],
                    [1, b"1-0", b"1-0", [[b"c", 1]]]) is not None


def test_xinfo_consumers_drops_inactive_and_loosens_idle() -> None:
    newest = [[b"name", b"c", b"pending", 0, b"idle", 3, b"inactive", -1]]
    old = [[b"name", b"c", b"pending", 0, b"idle", 40]]
    assert _compare("XINFO CONSUMERS s g", newest, old) is None
    assert _compare("XINFO CONSUMERS s g", [[b"name", b"c", b"pending", 1, b"idle", 3]], old) is not None


def test_xinfo_stream_full_drops_active_time_and_loosens_times() -> None:
    def full(seen: int, active: bool, lag: object) -> list[object]:
        consumer = [b"name", b"c", b"seen-time", seen] + ([b"active-time", seen] if active else []) + [
            b"pel-count", 1, b"pending", [[b"1-0", seen, 1]]]
        group = [b"name", b"g", b"last-delivered-id", b"1-0", b"entries-read", 1, b"lag", lag,
                 b"pel-count", 1, b"pending", [[b"1-0", b"c", seen, 1]], b"consumers", [consumer]]
        return [b"length", 1, b"entries", [], b"groups", [group]]

    assert _compare("XINFO STREAM s FULL", full(1000, True, 0), full(1500, False, 0)) is None
    assert _compare("XINFO STREAM s FULL", full(1000, True, 0), full(9000, False, 0)) is not None
    assert _compare("XINFO STREAM s FULL", full(1000, True, 0), full(1000, False, None)) is not None
    assert _compare("XINFO STREAM s FULL", full(1000, True, 0), full(1000, False, None), lag_masked=True) is None


def test_lag_tracker_taints_only_fragmenting_histories() -> None:
    tracker = LagTracker()
    info = tuple(shlex.split("XINFO GROUPS s"))
    tracker.observe(tuple(shlex.split("XADD s 1-0 f v")), b"1-0")
    tracker.observe(tuple(shlex.split("XDEL s 9-0")), 0)
    assert not tracker.masked_for(info)
    tracker.observe(tuple(shlex.split("XDEL s 1-0")), 1)
    assert tracker.masked_for(info)
    tracker.observe(tuple(shlex.split("DEL s")), 1)
    assert not tracker.masked_for(info)
    tracker.observe(tuple(shlex.split("XADD s MAXLEN ~ 5 2-0 f v")), b"2-0")
    assert tracker.masked_for(info)
    tracker.observe(tuple(shlex.split("FLUSHALL")), b"OK")
    tracker.observe(tuple(shlex.split("XGROUP CREATE s g 0 ENTRIESREAD 5")), b"OK")
    assert tracker.masked_for(info)


def test_newest_error_texts_are_mapped_to_7_0() -> None:
    unbalanced = ErrorReply("ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' "
                            "must be specified.")
    assert _compare("XREAD STREAMS a b 0", unbalanced,
                    ErrorReply("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be "
                               "specified.")) is None
    plus = ErrorReply("ERR The + ID is meaningless in the context of XREADGROUP: you want to read ...")
    assert _compare("XREADGROUP GROUP g c STREAMS s +", plus,
                    ErrorReply("ERR Invalid stream ID specified as stream command argument")) is None
    assert _compare("XADD s", ErrorReply("ERR wrong number of arguments for 'XADD' command"),
                    ErrorReply("ERR wrong number of arguments for 'xadd' command")) is not None


def test_nil_empty_and_types_are_distinguished() -> None:
    assert _compare("XRANGE s - + COUNT 0", [], None) is not None
    assert _compare("XLEN s", b"1", 1) is not None
    assert _compare("XADD s 1-0 f v", (b"1-0",), [b"1-0"]) is None


def test_engine_crash_is_a_readable_mismatch() -> None:
    engine = _Scripted(b"1-0", TypeError("boom"))
    oracle = _Scripted(b"1-0", b"OK")
    with pytest.raises(AssertionError) as failure:
        run_both(engine, oracle, script("XADD s 1-0 f v\nXLEN s"), emulate_newest=False, label="unit")
    report = str(failure.value)
    assert "command #1" in report and "TypeError: boom" in report and "('XADD', 's', '1-0', 'f', 'v')" in report
    assert isinstance(capture(_Scripted(KeyError("x")), ("XLEN", "s"), ()), CrashReply)


def test_mismatch_report_lists_recent_history() -> None:
    sequence = [("XADD", "s", f"{i}-0", "f", "v") for i in range(1, 30)]
    engine = _Scripted(*[f"{i}-0".encode() for i in range(1, 29)], b"wrong")
    oracle = _Scripted(*[f"{i}-0".encode() for i in range(1, 30)])
    with pytest.raises(AssertionError) as failure:
        run_both(engine, oracle, sequence, emulate_newest=False)
    report = str(failure.value)
    assert "#28" in report and "<-- mismatch" in report and "#8 " not in report and "#9 " in report


def test_newer_features_are_refused_not_compared() -> None:
    refused = ["XREAD STREAMS s +", "XREADGROUP GROUP g c CLAIM 100 STREAMS s >",
               "XREADGROUP GROUP g c MAXCOUNT 5 STREAMS s >", "XADD s KEEPREF 1-0 f v",
               "XTRIM s MAXLEN 1 ACKED", "XDELEX s IDS 1 1-0", "XACKDEL s g IDS 1 1-0",
               "XNACK s g FAIL IDS 1 1-0", "XADD s IDMPAUTO p 1-0 f v", "XADD s IDMP p i * f v",
               "XCFGSET s IDMP-DURATION 5", "XIDMPRECORD s p i 1-0"]
    for command in refused:
        assert excluded_difference(tuple(shlex.split(command))) is not None, command
    allowed = ["XREAD STREAMS s 0", "XREADGROUP GROUP CLAIM c STREAMS s >", "XADD s 1-0 KEEPREF v",
               "XREADGROUP GROUP g c STREAMS s +"]
    for command in allowed:
        assert excluded_difference(tuple(shlex.split(command))) is None, command
    with pytest.raises(ValueError, match="7.4"):
        run_both(_Scripted(), _Scripted(), script("XREAD STREAMS s +"))


def test_deliberate_differences_are_documented() -> None:
    for difference in DELIBERATE_DIFFERENCES:
        assert difference.redis_version and difference.redis_7_0 and difference.newest
        assert difference.treatment.split(":")[0].split(" ")[0] in {"exclude", "normalize", "emulate",
                                                                     "mask", "loose"}
        assert difference.source
    assert ANY is not None and Loose(1) == Loose(1)


def test_generator_is_stable_across_processes() -> None:
    """Hash randomization must not leak into sequences (a failing seed must replay anywhere)."""
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    code = ("import hashlib, command_generator as g; "
            "print(hashlib.sha256(repr([g.generate(s, 300) for s in range(3)]).encode()).hexdigest())")
    digests = {
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                       cwd=os.path.dirname(os.path.dirname(__file__)),     # tests/: the generator
                       env={**os.environ, "PYTHONHASHSEED": seed}).stdout
        for seed in ("1", "2")
    }
    assert len(digests) == 1
