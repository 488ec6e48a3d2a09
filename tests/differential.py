"""Differential runner: replay one command sequence on Sluice and on a real Redis, compare replies.

Redis 7.0 (Debian's redis-server) is the oracle, but Sluice follows the newest Redis where the
two differ.  Those differences are listed in ``DELIBERATE_DIFFERENCES`` together with how the
runner absorbs each one:

* ``normalize`` - both replies are rewritten to a common shape before comparing
  (e.g. fields that only newer Redis emits are dropped, changed error texts are mapped back);
* ``emulate``   - the oracle connection is wrapped in ``NewestRedisEmulation``, which issues an
  extra command on the 7.0 server so that its *state* evolves like the newest Redis would;
* ``mask``      - values that legitimately differ are compared as "anything" (``ANY``);
* ``loose``     - clock-dependent values are compared with a tolerance;
* ``exclude``   - the feature does not exist in 7.0 at all; sequences using it are refused here
  (test it with engine-only tests instead).

Everything else must be byte-for-byte identical: replies, nil vs empty array, integer vs bulk
string, and the exact error text (including the ``ERR``/``WRONGTYPE``/``NOGROUP`` prefix).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import redis
from redis.connection import DefaultParser
from redis.exceptions import ResponseError as RedisResponseError

Arg = bytes | str | int
Command = tuple[Arg, ...]

DEFAULT_TOLERANCE_MS = 2000
HISTORY_SHOWN = 20

# --------------------------------------------------------------------------------------------
# Research notes: where the newest Redis differs from 7.0 (the oracle), and what Sluice does.
#
# Sources (all read while writing this file):
#   [XREADGROUP]   https://redis.io/docs/latest/commands/xreadgroup/  (history: CLAIM 8.4.0,
#                  MAXCOUNT/MAXSIZE 8.10.0 - src/commands/xreadgroup.json in redis/redis)
#   [XREAD]        https://redis.io/docs/latest/commands/xread/  ("starting from Redis 7.4, you
#                  can use the + sign as a special ID"); PR https://github.com/redis/redis/pull/13117
#   [XADD]         https://redis.io/docs/latest/commands/xadd/  (KEEPREF|DELREF|ACKED "Available
#                  since Redis 8.2"; history 7.0.0 added <ms>-*)
#   [XTRIM]        https://redis.io/docs/latest/commands/xtrim/  (KEEPREF|DELREF|ACKED, 8.2)
#   [8.2 notes]    https://raw.githubusercontent.com/redis/redis/8.2/00-RELEASENOTES  ("new
#                  commands: XDELEX and XACKDEL; extension to XADD and XTRIM")
#   [XNACK]        https://redis.io/docs/latest/commands/xnack/  (available since 8.8.0);
#                  redis/docs content/commands/xnack.md (behaviour: consumer = NULL, delivery
#                  time 0, XPENDING shows consumer "" and idle -1); redis/redis#14797 (the
#                  command, its "ERR mode must be SILENT, FAIL, or FATAL")
#   [MAXCOUNT]     https://github.com/redis/redis/pull/15282 (MAXCOUNT/MAXSIZE, 8.10: caps on
#                  the whole reply; stream-cgroups.tcl "MAXCOUNT must be a positive integer",
#                  a single oversized entry still returned); redis.io XREAD / XREADGROUP pages
#   [CLAIM errors] redis/redis tests/unit/type/stream-cgroups.tcl "XREADGROUP CLAIM with not
#                  integer / negative integer for min-idle-time" ("ERR min-idle-time is not an
#                  integer", "ERR min-idle-time must be a positive integer")
#   [IDMP]         https://redis.io/docs/latest/commands/xadd/ (IDMP/IDMPAUTO, 8.6),
#                  https://redis.io/docs/latest/commands/xcfgset/ (since 8.6.0; ranges 1-86400 s
#                  and 1-10000, defaults 100; new settings clear the iids),
#                  https://redis.io/docs/latest/commands/xidmprecord/ (since 8.8.0: the AOF form
#                  of an IDMP XADD), https://redis.io/docs/latest/commands/xinfo-stream/ (IDMP
#                  fields), redis/redis tests/unit/type/stream.tcl (IDMP cases, error texts),
#                  redis/redis src/streamidmp.c (IDMPAUTO = XOR of XXH3-128(field+value); iids
#                  expire by their entry ID's ms), redis-py tests (XCFGSET range error texts)
#   [XINFO CONS]   https://redis.io/docs/latest/commands/xinfo-consumers/  (history 7.2.0:
#                  "Added the inactive field, and changed the meaning of idle")
#   [XINFO STREAM] https://redis.io/docs/latest/commands/xinfo-stream/  (history 7.2.0: "Added
#                  the active-time field, and changed the meaning of seen-time"; 7.0.0 added
#                  max-deleted-entry-id, entries-added, recorded-first-entry-id, entries-read, lag)
#   [XINFO GROUPS] https://redis.io/docs/latest/commands/xinfo-groups/  (7.0.0 entries-read, lag)
#   [#11099]       https://github.com/redis/redis/pull/11099  (7.2: seen-time re-purposed,
#                  active-time added, and "XREADGROUP and X[AUTO]CLAIM create the consumer
#                  regardless of whether it was able to perform some reading/claiming")
#   [lag fixes]    https://github.com/redis/redis/pull/13338 (7.4),
#                  https://github.com/redis/redis/pull/13473 (8.0),
#                  https://github.com/redis/redis/pull/13958 (8.0.x/8.2),
#                  https://github.com/redis/redis/issues/14257 (ENTRIESREAD > entries-added
#                  gave a negative lag; newer Redis clamps it)
#   [#11444]       https://github.com/redis/redis/pull/11444 (XSETID vs current max_deleted_entry_id)
#   [XAUTOCLAIM]   https://redis.io/docs/latest/commands/xautoclaim/  (7.0.0 added the deleted-IDs
#                  element; PR https://github.com/redis/redis/pull/10227).  7.0.15 and the newest
#                  source both count deleted entries against COUNT - *no* difference there.
#   [XCLAIM]       https://redis.io/docs/latest/commands/xclaim/  (deleted entries dropped from
#                  the PEL "introduced in Redis 7.0" - same in 7.0.15 and newest)
#   [t_stream.c]   newest error strings were read from compiled/translated copies of 7.4-8.0
#                  t_stream.c found with the code search; 7.0 strings were observed on the oracle.
#   [#11012]       https://github.com/redis/redis/pull/11012 (7.2: a client blocked on keys is
#                  woken by running its command again). The newest stream-cgroups.tcl ("Blocking
#                  XREADGROUP: key deleted / key type changed with SET / flushed DB", "XGROUP
#                  DESTROY should unblock XREADGROUP with -NOGROUP", "RENAME can unblock
#                  XREADGROUP with -NOGROUP") expects that run's own NOGROUP / WRONGTYPE error, and
#                  the blocked call counted once in commandstats, as failed (calls=1 ...
#                  failed_calls=1; blocked.c updateStatsOnUnblock).
#   [dirty]        stream-cgroups.tcl "XREADGROUP of multiple entries changes dirty by one" and
#                  "XREADGROUP from PEL does not change dirty"; newest t_stream.c xreadCommand:
#                  server.dirty++ once per stream whose serving propagated anything, none for a
#                  history (PEL) read, plus one for a consumer it creates.
#   [lag empty]    newest t_stream.c streamReplyWithCGLag: "All entries deleted, the stream is
#                  empty" gives lag 0 (stream-cgroups.tcl "Consumer group lag with XTRIM").
#   [RDB]          RDB versions: 10 (7.0), 11 (7.2), 12 (7.4-8.0: src/rdb.h "#define
#                  RDB_VERSION 12", object types up to 25, 22-25 = hashes with field TTLs);
#                  stream types 15 (5.0-6.x), 19 (7.0), 21 (7.2+, consumer active-time).
#                  Newer stream types 26/27 (IDMP, XNACK; RDB 13/14) appear only in
#                  third-party RDB parsers found with the code search, not in a redis/redis
#                  rdb.c we could read: Sluice reads neither them nor types 22-25.
#                  https://github.com/redis/redis/blob/7.4.0/src/rdb.h
#   [ZRANK]        https://redis.io/docs/latest/commands/zrank/  (history 7.2.0: "Added the
#                  optional WITHSCORE argument"; src/commands/zrank.json arity -3)
#   [noscript]     redis/redis#11568 (7.2; described in redis/redis#12596 and #12977) removed
#                  NOSCRIPT from the blocking commands and kept BLOCKING: BLPOP, BRPOP, BLMOVE,
#                  BRPOPLPUSH, BZPOPMIN, BZPOPMAX run in scripts and answer at once, as in
#                  MULTI (scripting.tcl "Scripts do not block on blpop/brpop/brpoplpush/
#                  bzpopmin/bzpopmax command", cited in fppt/jedis-mock#781). BLMPOP and BZMPOP
#                  never had it. 7.0's COMMAND INFO still lists noscript for the six.
#   [doubles]      Redis 7.2 replies doubles in their shortest round-trip form (fpconv_dtoa,
#                  https://github.com/redis/redis/pull/10587); 7.0 writes %.17g.  Sluice keeps
#                  7.0's %.17g (the codec's addReplyDouble) - not a difference in the runs.
#   [RANDCOUNT]    https://github.com/redis/redis/issues/11671 (open: HRANDFIELD with a huge
#                  negative count builds the whole reply and hangs/exhausts the server; the
#                  maintainers liken it to KEYS *), https://github.com/redis/redis/pull/8429
#                  (7.0's count range for WITHSCORES/WITHVALUES), valkey-io/valkey#4160
#                  (bounds the reply in bytes instead).
#   [ZSCAN]        7.0 formats the scores of a skiplist-encoded set with ld2string (%.17Lf,
#                  trailing zeros cut); Sluice sends %.17g for every encoding (small sets, the
#                  listpack case the runs compare, are identical).
#   [SORT set]     SORT of a set BY a pattern without `*` (no sorting) and without STORE:
#                  Redis replies in its hash table's order (unspecified; sorted ALPHA under
#                  STORE or in a script, src/sort.c); Sluice always sorts ALPHA there. No run
#                  compares an unspecified order: no entry below.
#   [version]      HELLO / INFO / redis.REDIS_VERSION / `sluice-server --version` say 7.2.16,
#                  the last 7.2 patch release (Docker Hub's redis:7.2.16, 2026-08-25; none
#                  later found), where the oracle says 7.0.15: every command and argument of
#                  7.2 in Sluice's groups is here since WAITAOF
#                  (tests/commands/test_reported_version.py). CLIENT NO-TOUCH (7.2,
#                  client-no-touch.json) is here too: engine tests only
#                  (tests/api/test_client_no_touch.py), 7.0 lacks it.
#   [WAITAOF]      https://redis.io/docs/latest/commands/waitaof/ (since 7.2.0: reply
#                  [numlocal, numreplicas] fsynced; in MULTI or a script no blocking, the
#                  counts at once; timeout 0 = forever; numlocal needs appendonly);
#                  redis/redis src/commands/waitaof.json (arity 4; 7.2.x flags NOSCRIPT, the
#                  newest BLOCKING: redis/redis#12977 "Allow running WAITAOF in scripts,
#                  remove NOSCRIPT flag"; ACL CONNECTION); tests/unit/wait.tcl ("wait aof"
#                  cases: `appendfsync no` answers {0 0} at the timeout, everysec {1 0}, the
#                  AOF turned off errors a waiting client, a client with no write gets 1);
#                  error texts of getRangeLongFromObjectOrReply ("value is out of range, value
#                  must between 0 and 1"), getPositiveLongFromObjectOrReply ("value is out of
#                  range, must be positive"), getTimeoutFromObjectOrReply (as XREAD BLOCK's).
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeliberateDifference:
    """One behaviour where Sluice follows the newest Redis rather than the 7.0 oracle."""

    name: str
    redis_version: str
    redis_7_0: str
    newest: str
    treatment: str
    source: str
    uses_feature: Callable[[Command], bool] | None = None


def _upper(arg: Arg) -> str:
    """Case-insensitive view of one argument, as Redis' strcasecmp sees it."""
    return _text(arg).upper()


def _text(arg: Arg) -> str:
    """Readable text for an argument of any accepted type (bytes are decoded leniently)."""
    if isinstance(arg, bytes):
        return arg.decode("utf-8", "replace")
    return str(arg)


def command_name(cmd: Command) -> str:
    """Upper-case command name; commands are dispatched case-insensitively."""
    return _upper(cmd[0]) if cmd else ""


def subcommand_name(cmd: Command) -> str | None:
    """Upper-case subcommand for container commands (XINFO, XGROUP), else None."""
    if command_name(cmd) in ("XINFO", "XGROUP") and len(cmd) > 1:
        return _upper(cmd[1])
    return None


_XREAD_VALUED_OPTIONS = ("COUNT", "BLOCK", "CLAIM", "MAXCOUNT", "MAXSIZE")


@dataclass(frozen=True)
class XReadCall:
    """An XREAD/XREADGROUP call split the way Redis parses it (options up to STREAMS, then keys/IDs)."""

    options: tuple[str, ...]
    group: Arg | None
    consumer: Arg | None
    keys: tuple[Arg, ...]
    ids: tuple[Arg, ...]


def parse_xread(cmd: Command) -> XReadCall:
    """Split an XREAD/XREADGROUP; keys and ids are empty when the STREAMS part is malformed."""
    options: list[str] = []
    group = consumer = None
    i = 1
    while i < len(cmd) and _upper(cmd[i]) != "STREAMS":
        token = _upper(cmd[i])
        options.append(token)
        if token == "GROUP" and i + 2 < len(cmd):
            group, consumer = cmd[i + 1], cmd[i + 2]
            i += 3
        else:
            i += 2 if token in _XREAD_VALUED_OPTIONS else 1
    rest = cmd[i + 1:]
    half = len(rest) // 2 if rest and len(rest) % 2 == 0 else 0
    return XReadCall(tuple(options), group, consumer, tuple(rest[:half]), tuple(rest[half:2 * half]))


def _xadd_option_tokens(cmd: Command) -> list[str]:
    """Upper-cased option tokens of XADD/XTRIM that precede the ID (XADD) or end (XTRIM)."""
    tokens: list[str] = []
    i = 2
    while i < len(cmd):
        token = _upper(cmd[i])
        if token in ("MAXLEN", "MINID"):
            tokens.append(token)
            i += 1
            if i < len(cmd) and _text(cmd[i]) in ("=", "~"):
                i += 1
            i += 1
        elif token == "LIMIT":
            tokens.append(token)
            i += 2
        elif token in ("NOMKSTREAM", "KEEPREF", "DELREF", "ACKED", "IDMPAUTO", "IDMP"):
            tokens.append(token)
            i += 1
        else:
            break
    return tokens


def _uses_xread_plus(cmd: Command) -> bool:
    return command_name(cmd) == "XREAD" and any(_text(i) == "+" for i in parse_xread(cmd).ids)


def _uses_xreadgroup_option(*options: str) -> Callable[[Command], bool]:
    def detect(cmd: Command) -> bool:
        if command_name(cmd) not in ("XREAD", "XREADGROUP"):
            return False
        return any(token in options for token in parse_xread(cmd).options)
    return detect


def _uses_trim_policy(cmd: Command) -> bool:
    if command_name(cmd) == "XADD":
        return any(t in ("KEEPREF", "DELREF", "ACKED") for t in _xadd_option_tokens(cmd))
    if command_name(cmd) == "XTRIM":
        return any(_upper(a) in ("KEEPREF", "DELREF", "ACKED") for a in cmd[2:])
    return False


def _uses_idmp(cmd: Command) -> bool:
    return command_name(cmd) == "XADD" and any(t in ("IDMP", "IDMPAUTO") for t in _xadd_option_tokens(cmd))


def _is_command(*names: str) -> Callable[[Command], bool]:
    return lambda cmd: command_name(cmd) in names


def _uses_rank_withscore(cmd: Command) -> bool:
    return command_name(cmd) in ("ZRANK", "ZREVRANK") and len(cmd) > 3


DELIBERATE_DIFFERENCES: tuple[DeliberateDifference, ...] = (
    DeliberateDifference(
        name="DUMP payload version and stream type",
        redis_version="7.2 / 7.4",
        redis_7_0="payloads stamped RDB 10, streams as type 19",
        newest="payloads stamped RDB 12, streams as type 21 (consumer active-time); 7.0's RESTORE "
               "refuses them with 'ERR DUMP payload version or checksum are wrong'",
        treatment="exclude: tests/commands/test_dump_restore.py compares restored values, not "
                  "payload bytes; a stream moves to 7.0 as type 19 / RDB 10 "
                  "(engine.formats.rdb_value.dump_value(value, 10)) or through the AOF's commands",
        source="[RDB]",
        uses_feature=_is_command("DUMP"),
    ),
    DeliberateDifference(
        name="RESTORE of a small hash that repeats a field",
        redis_version="7.0 (sanitize-dump-payload no)",
        redis_7_0="restored as given (the listpack keeps both fields)",
        newest="same as 7.0 unless sanitize-dump-payload is yes",
        treatment="exclude: Sluice cannot hold such a hash and answers 'ERR Bad data format' "
                  "(tests/commands/test_dump_restore.py::test_bad_collection_payloads)",
        source="[RDB] rdb.c: duplicate checks of listpack-sized hashes only under deep "
               "sanitization",
    ),
    DeliberateDifference(
        name="RESTORE of a payload stamped RDB 11 or 12",
        redis_version="7.2 / 7.4",
        redis_7_0="'ERR DUMP payload version or checksum are wrong'",
        newest="restored (types 0, 15, 19, 21)",
        treatment="exclude: engine-only round-trip tests",
        source="[RDB]",
    ),
    DeliberateDifference(
        name="XREADGROUP CLAIM min-idle-time option",
        redis_version="8.4",
        redis_7_0="'ERR syntax error' (unknown option)",
        newest="claims idle pending entries first; claimed entries carry idle-ms and delivery count",
        treatment="exclude: time-based and absent from 7.0; cover with engine-only tests. "
                  "Argument errors: 'ERR min-idle-time is not an integer or out of range' "
                  "(Redis's tests match its prefix), 'ERR min-idle-time must be a positive "
                  "integer'",
        source="[XREADGROUP] redis.io xreadgroup page, xreadgroup.json history; [CLAIM errors]",
        uses_feature=_uses_xreadgroup_option("CLAIM"),
    ),
    DeliberateDifference(
        name="XREAD/XREADGROUP MAXCOUNT and MAXSIZE options",
        redis_version="8.10",
        redis_7_0="'ERR syntax error'",
        newest="caps the total entries / bytes returned across all streams",
        treatment="exclude: absent from 7.0; engine-only and redis-py tests, and XREAD "
                  "compared with 7.0's XREAD cut by the rule (tests/commands/test_read_limits.py). Sluice's MAXSIZE counts each entry's "
                  "RESP2 bytes ([id, [field, value...]]) and serves entries while the sum so far is "
                  "below it (a soft cap, the first entry always); 'COUNT above MAXCOUNT' answers "
                  "'ERR MAXCOUNT must be greater than or equal to COUNT' (Redis's exact text "
                  "for that case was not found)",
        source="[XREADGROUP] xreadgroup.json history; redis.io XREAD page; [MAXCOUNT]",
        uses_feature=_uses_xreadgroup_option("MAXCOUNT", "MAXSIZE"),
    ),
    DeliberateDifference(
        name="XREAD with '+' as the ID (last entry)",
        redis_version="7.4",
        redis_7_0="'ERR Invalid stream ID specified as stream command argument'",
        newest="returns the last entry of the stream (COUNT ignored for that stream)",
        treatment="exclude: cover with engine-only tests",
        source="[XREAD] redis.io XREAD page; redis/redis#13117",
        uses_feature=_uses_xread_plus,
    ),
    DeliberateDifference(
        name="XREADGROUP with '+' as the ID: error text",
        redis_version="7.4",
        redis_7_0="'ERR Invalid stream ID specified as stream command argument'",
        newest="'ERR The + ID is meaningless in the context of XREADGROUP: ...'",
        treatment="normalize: Sluice's newer text is mapped back to the 7.0 text (ERROR_REWRITES)",
        source="[t_stream.c] newest error strings",
    ),
    DeliberateDifference(
        name="Unbalanced XREAD/XREADGROUP stream list: error text",
        redis_version="7.2 / 7.4",
        redis_7_0="'ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.' "
                  "(also for XREADGROUP)",
        newest="\"ERR Unbalanced 'xread' list of streams: for each stream key an ID, '+', or '$' must be "
               "specified.\" / \"ERR Unbalanced 'xreadgroup' list of streams: ... an ID or '>' must be specified.\"",
        treatment="normalize via ERROR_REWRITES",
        source="[t_stream.c] newest error strings; 7.0 text observed on the oracle",
    ),
    DeliberateDifference(
        name="XINFO STREAM 'radix-tree-nodes'",
        redis_version="all",
        redis_7_0="the number of nodes of Redis's rax holding the stream's listpacks",
        newest="the same rax statistic",
        treatment="normalize: compared as ANY; Sluice reports the node count of its own radix "
                  "tree, a different data structure (radix-tree-keys, the node count, matches)",
        source="design: engine/core/radix.pyx is a bucketed radix tree, not rax",
    ),
    DeliberateDifference(
        name="XINFO CONSUMERS 'inactive' field",
        redis_version="7.2",
        redis_7_0="fields: name, pending, idle",
        newest="fields: name, pending, idle, inactive (-1 when the consumer never read/claimed anything)",
        treatment="normalize: 'inactive' is dropped from both replies (clock-dependent anyway)",
        source="[XINFO CONS], [#11099]",
    ),
    DeliberateDifference(
        name="XINFO STREAM FULL consumer 'active-time' field",
        redis_version="7.2",
        redis_7_0="consumer fields: name, seen-time, pel-count, pending",
        newest="consumer fields: name, seen-time, active-time, pel-count, pending",
        treatment="normalize: 'active-time' is dropped from both replies",
        source="[XINFO STREAM], [#11099]",
    ),
    DeliberateDifference(
        name="Meaning of idle / seen-time (last attempted vs last successful interaction)",
        redis_version="7.2",
        redis_7_0="updated when the consumer is looked up by a successful read/claim path",
        newest="updated on every XREADGROUP/XCLAIM/XAUTOCLAIM attempt",
        treatment="emulate + loose: NewestRedisEmulation refreshes seen-time after every "
                  "XREADGROUP/XCLAIM/XAUTOCLAIM (see the next row); the values are compared within the tolerance",
        source="[XINFO CONS], [XINFO STREAM], [#11099]",
    ),
    DeliberateDifference(
        name="XREADGROUP / XCLAIM / XAUTOCLAIM create the consumer even when nothing is read or claimed",
        redis_version="7.2",
        redis_7_0="consumer created only when an entry is delivered/claimed (or for a history read)",
        newest="consumer always created once the command passes argument and NOGROUP checks",
        treatment="emulate: after a successful call NewestRedisEmulation runs, on the 7.0 oracle, "
                  "XREADGROUP GROUP <group> <consumer> STREAMS <key> <max-id minus one> for every (key, group, consumer) "
                  "the command named - a history read that only creates the consumer and sets its seen-time",
        source="[#11099] (\"create the consumer regardless of whether it was able to perform some "
               "reading/claiming\"); behaviour confirmed on the oracle",
    ),
    DeliberateDifference(
        name="XSETID below the current max-deleted-entry-id",
        redis_version="7.2",
        redis_7_0="accepted (observed: XDEL 2-0 then XSETID s 1-5 -> OK, last-generated-id below "
                  "max-deleted-entry-id)",
        newest="'ERR The ID specified in XSETID is smaller than current max_deleted_entry_id', checked "
               "after the key lookup and before the top-item / entries-added checks",
        treatment="emulate: NewestRedisEmulation snapshots XINFO STREAM, undoes a 7.0 success with a "
                  "restoring XSETID, and reports the newer error (also in place of the later 7.0 errors)",
        source="https://github.com/redis/redis/pull/11444; behaviour confirmed on the oracle",
    ),
    DeliberateDifference(
        name="Consumer-group lag / entries-read with tombstones, trimming, XSETID or ENTRIESREAD",
        redis_version="7.4, 8.0, 8.0.x/8.2 (+ later ENTRIESREAD clamp)",
        redis_7_0="lag can be null or stale after XDEL/XTRIM; ENTRIESREAD above entries-added gives a "
                  "negative lag (observed: lag -98)",
        newest="lag/entries-read recomputed when the group is behind the first entry or a tombstone "
               "follows it; ENTRIESREAD clamped",
        treatment="mask: for a key whose history contains XDEL/XTRIM removals, XADD trimming, XSETID or "
                  "ENTRIESREAD, 'lag' and 'entries-read' in XINFO GROUPS / XINFO STREAM FULL compare as ANY",
        source="[lag fixes]",
    ),
    DeliberateDifference(
        name="Blocked XREADGROUP whose stream or group goes away: the error and its stats",
        redis_version="7.2",
        redis_7_0="'UNBLOCKED the stream key no longer exists' (key deleted, flushed, renamed away "
                  "or of another type) / 'NOGROUP the consumer group this client was blocked on no "
                  "longer exists' (group destroyed)",
        newest="the command runs again and replies its own error: 'NOGROUP No such key ... in "
               "XREADGROUP with GROUP option' or 'WRONGTYPE ...'; commandstats count the call once, "
               "as failed",
        treatment="normalize: tests map the 7.0 text to the newest one by cause "
                  "(newest_unblocked_error)",
        source="[#11012]; stream-cgroups.tcl",
    ),
    DeliberateDifference(
        name="XREADGROUP and INFO rdb_changes_since_last_save (dirty)",
        redis_version="7.2",
        redis_7_0="one change per stream served, also for a PEL re-read that returned entries "
                  "(observed on the oracle)",
        newest="one change per stream served with new (or claimed) entries, none for a PEL "
               "re-read, one per consumer created",
        treatment="mask: INFO is not compared differentially; "
                  "tests/commands/test_redis8_stream_cgroups.py checks the newest counts",
        source="[dirty]",
    ),
    DeliberateDifference(
        name="A served blocked command and the change counter (INFO rdb_changes_since_last_save)",
        redis_version="7.2",
        redis_7_0="a BLPOP, BRPOP, BLMOVE, BRPOPLPUSH or XREADGROUP served by another client's "
                  "write counts no change (observed on the oracle; BLMPOP, BZPOPMIN & co. count "
                  "their pops)",
        newest="the served client's command runs again as a call and counts as it would unblocked",
        treatment="mask: INFO is not compared differentially; tests/server/test_dirty_counts.py "
                  "compares a served command with the oracle running it after its server",
        source="[#11012]",
    ),
    DeliberateDifference(
        name="Consumer-group lag of a stream emptied by XTRIM/XDEL",
        redis_version="8.0",
        redis_7_0="entries-added minus the group's entries-read (e.g. 1)",
        newest="0: nothing is left to read",
        treatment="mask (the lag row above)",
        source="[lag empty]",
    ),
    DeliberateDifference(
        name="XADD/XTRIM KEEPREF | DELREF | ACKED",
        redis_version="8.2",
        redis_7_0="XADD: 'ERR Invalid stream ID ...' (token taken as the ID); XTRIM: 'ERR syntax error'",
        newest="controls whether trimmed entries are also removed from consumer-group PELs "
               "(DELREF) or only trimmed once no group needs them (ACKED); no effect without groups",
        treatment="exclude: absent from 7.0; engine-only tests in tests/commands/test_reference_policies.py "
                  "(an ACKED trim is logged as XDEL of the entries it removed, which also moves "
                  "max-deleted-entry-id)",
        source="[XADD], [XTRIM], [8.2 notes]; https://github.com/redis/redis/pull/14623 (approximate "
               "trimming with DELREF/ACKED)",
        uses_feature=_uses_trim_policy,
    ),
    DeliberateDifference(
        name="XDELEX and XACKDEL commands",
        redis_version="8.2",
        redis_7_0="'ERR unknown command ...'",
        newest="delete / ack-and-delete with KEEPREF|DELREF|ACKED reference policies; a code per ID "
               "(-1 no such entry / not pending in the group, 1 deleted, 2 still referenced)",
        treatment="exclude: absent from 7.0; engine-only tests in tests/commands/test_reference_policies.py "
                  "(ports of stream-cgroups.tcl's XDELEX/XACKDEL cases, and a model test)",
        source="[8.2 notes]; https://redis.io/commands/xackdel; https://redis.io/commands/xdelex; "
               "redis/redis tests/unit/type/stream-cgroups.tcl",
        uses_feature=_is_command("XDELEX", "XACKDEL"),
    ),
    DeliberateDifference(
        name="XADD IDMP/IDMPAUTO, XCFGSET and XIDMPRECORD (idempotent producers)",
        redis_version="8.6 (XIDMPRECORD 8.8)",
        redis_7_0="XADD: 'ERR Invalid stream ID ...'; XCFGSET, XIDMPRECORD: unknown command",
        newest="at-most-once XADD keyed by producer/idempotent IDs (a duplicate replies the "
               "original entry's ID); XCFGSET sets IDMP-DURATION/IDMP-MAXSIZE; an IDMP XADD is "
               "logged as XADD + XIDMPRECORD (+ XCFGSET when the stream's state is created), "
               "so such an AOF does not load into redis-server 7.0",
        treatment="exclude: cover with engine-only tests (tests/commands/test_xadd_idmp.py, "
                  "tests/persist/test_idmp_persistence.py)",
        source="[IDMP]",
        uses_feature=lambda cmd: _uses_idmp(cmd) or command_name(cmd) in ("XCFGSET", "XIDMPRECORD"),
    ),
    DeliberateDifference(
        name="XINFO STREAM IDMP fields",
        redis_version="8.6",
        redis_7_0="no such fields",
        newest="idmp-duration, idmp-maxsize, pids-tracked, iids-tracked, iids-added, "
               "iids-duplicates after recorded-first-entry-id (summary and FULL)",
        treatment="normalize: the six fields are dropped from both replies",
        source="[IDMP]",
    ),
    DeliberateDifference(
        name="XNACK command",
        redis_version="8.8",
        redis_7_0="'ERR unknown command ...'",
        newest="releases pending entries back to the group (SILENT|FAIL|FATAL)",
        treatment="exclude: absent from 7.0; engine-only tests (tests/commands/test_xnack.py). "
                  "Sluice keeps a released entry owned by the consumer named '' (Redis: no "
                  "consumer) at delivery time 0, logged as XCLAIM key group '' 0 id TIME 0 "
                  "RETRYCOUNT n FORCE JUSTID, which 7.0 loads; so '' shows in XINFO CONSUMERS "
                  "and XINFO GROUPS' consumer count, and XINFO STREAM FULL has no nacked-count. "
                  "FATAL's LLONG_MAX is stored as 2^47-1 (the PEL's 48-bit count). IDs whose "
                  "entry is gone from the stream are skipped (a claim of them would drop them)",
        source="[XNACK]",
        uses_feature=_is_command("XNACK"),
    ),
    DeliberateDifference(
        name="WAITAOF command",
        redis_version="7.2",
        redis_7_0="'ERR unknown command ...'",
        newest="[1 if the AOF has fsynced the client's writes else 0, replicas that did]; "
               "blocks until numlocal/numreplicas or the timeout",
        treatment="exclude: absent from 7.0; engine, embedded and server tests "
                  "(tests/commands/test_waitaof.py, tests/server/test_waitaof_server.py: wait.tcl's "
                  "standalone cases) and a power cut (tests/persist/test_power_loss.py). "
                  "Sluice has no replicas: the second count is always 0 and numreplicas > 0 "
                  "waits for the whole timeout (a Redis master without replicas); flags "
                  "'blocking' (the newest; 7.2.x had 'noscript')",
        source="[WAITAOF]",
        uses_feature=_is_command("WAITAOF"),
    ),
    DeliberateDifference(
        name="Reported server version",
        redis_version="7.2",
        redis_7_0="HELLO / INFO redis_version / redis.REDIS_VERSION: 7.0.15",
        newest="7.2.16 (REDIS_VERSION_NUM 0x070210)",
        treatment="mask: tests/server/test_server_differential.py masks HELLO's version; "
                  "tests/scripting/test_functions.py leaves the snippet printing "
                  "redis.REDIS_VERSION out; INFO is not compared",
        source="[version]",
    ),
    DeliberateDifference(
        name="PUBLISH's may_replicate command flag",
        redis_version="newer than 7.0",
        redis_7_0="COMMAND INFO publish: pubsub loading stale fast",
        newest="pubsub loading stale fast may_replicate",
        treatment="mask: in COMMAND INFO comparisons with 7.0, test_command_table.py's "
                  "NEWER_FLAGS leaves the flag out",
        source="https://github.com/redis/redis/blob/unstable/src/commands/publish.json",
    ),
    DeliberateDifference(
        name="COMMAND INFO / COMMAND DOCS records changed after 7.0",
        redis_version="7.2 - 8.10",
        redis_7_0="7.0's summaries; XADD/XTRIM/XREAD/XREADGROUP/HSCAN/ZRANK/ZREVRANK without "
                  "their newer arguments and history; XINFO CONSUMERS/STREAM without 7.2's "
                  "history; QUIT not deprecated; XREAD/XREADGROUP's key spec complete",
        newest="the newest json's records for these (tests/commands/test_command_docs.py "
               "NEWER lists each field and its source); every summary as Redis 7.2 reworded it",
        treatment="mask: test_command_docs.py leaves each NEWER field (and summaries) out of "
                  "its comparison with 7.0 and checks that the field does differ",
        source="https://github.com/redis/redis/tree/unstable/src/commands",
    ),
    DeliberateDifference(
        name="BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BZPOPMIN, BZPOPMAX in scripts (no noscript)",
        redis_version="7.2",
        redis_7_0="flag noscript: a script's call fails with 'This Redis command is not "
                  "allowed from script'",
        newest="no noscript flag: in a script they pop at once or answer nil (never block)",
        treatment="mask: test_command_table.py's NEWER_FLAGS leaves noscript out of COMMAND "
                  "INFO comparisons (also test_collection_table.py, test_sorted_sets.py); "
                  "scripts calling them are engine-only tests (tests/commands/test_lists.py, "
                  "tests/commands/test_sorted_set_blocking.py)",
        source="[noscript]",
    ),
    DeliberateDifference(
        name="ZRANK/ZREVRANK WITHSCORE",
        redis_version="7.2",
        redis_7_0="'ERR wrong number of arguments for 'zrank' command' (arity 3)",
        newest="[rank, score] (a null array for a missing member); a 4th argument other than "
               "WITHSCORE is 'ERR syntax error'",
        treatment="exclude: engine-only tests (tests/commands/test_sorted_sets.py)",
        source="[ZRANK]",
        uses_feature=_uses_rank_withscore,
    ),
    DeliberateDifference(
        name="HSCAN ... NOVALUES",
        redis_version="7.4",
        redis_7_0="'ERR syntax error'",
        newest="HSCAN returns the fields only",
        treatment="exclude: covered by engine-only tests (tests/commands/test_hashes.py)",
        source="https://redis.io/docs/latest/commands/hscan/ (history: 7.4.0 added NOVALUES)",
        uses_feature=lambda cmd: command_name(cmd) == "HSCAN"
        and any(_upper(arg) == "NOVALUES" for arg in cmd[3:]),
    ),
    DeliberateDifference(
        name="LPOS RANK -9223372036854775808",
        redis_version="7.2",
        redis_7_0="accepted; negating it overflows (observed: behaves as RANK -1)",
        newest="'ERR value is out of range, value must between -9223372036854775807 and "
               "9223372036854775807' (RANK parsed within -LONG_MAX..LONG_MAX)",
        treatment="exclude: covered by engine-only tests (tests/commands/test_lists.py)",
        source="src/t_list.c lposCommand in redis/redis (getRangeLongFromObjectOrReply with "
               "-LONG_MAX)",
        uses_feature=lambda cmd: command_name(cmd) == "LPOS" and any(
            _upper(cmd[i]) == "RANK" and _text(cmd[i + 1]) == "-9223372036854775808"
            for i in range(3, len(cmd) - 1)),
    ),
    DeliberateDifference(
        name="HRANDFIELD/SRANDMEMBER/ZRANDMEMBER with a huge negative count",
        redis_version="all",
        redis_7_0="builds a reply of |count| picks (repeats allowed) until memory runs out",
        newest="same as 7.0 (redis/redis#11671 is open)",
        treatment="exclude: never compared (the oracle would exhaust its memory); Sluice "
                  "refuses a count whose reply it estimates (mean item size + 16 bytes per "
                  "pick) beyond 512 MB with 'ERR value is out of range', Redis's error for "
                  "the WITHSCORES/WITHVALUES range; engine-only tests "
                  "(tests/commands/test_random_counts.py)",
        source="[RANDCOUNT]",
    ),
    DeliberateDifference(
        name="OBJECT ENCODING of a small set that is not all integers",
        redis_version="7.2",
        redis_7_0="hashtable (7.0 has intset and hashtable sets only)",
        newest="listpack while it has at most set-max-listpack-entries members of at most "
               "set-max-listpack-value bytes",
        treatment="exclude: tests/commands/test_sets.py::test_encodings_follow_redis_7_2 "
                  "checks the newest encodings engine-only; sequences compare replies only",
        source="https://redis.io/docs/latest/commands/object-encoding/",
    ),
    DeliberateDifference(
        name="OBJECT ENCODING of a list",
        redis_version="7.2",
        redis_7_0="quicklist for every list (7.0 keeps even one element in a quicklist node)",
        newest="listpack while the list fits one node of list-max-listpack-size; quicklist "
               "after; listpack again when a single node is left at half the limit",
        treatment="exclude: tests/server/test_list_encodings.py and "
                  "tests/core/test_quicklist.py check the newest encodings (Redis 7.2's "
                  "listTypeTryConvertListpack/listTypeTryConvertQuicklist) engine-only; "
                  "sequences compare replies only",
        source="https://redis.io/docs/latest/commands/object-encoding/ and src/t_list.c of "
               "redis/redis 7.2",
    ),
    DeliberateDifference(
        name="HSCAN/SSCAN/ZSCAN cursor on large (hashtable, skiplist) collections",
        redis_version="all",
        redis_7_0="a hashtable-encoded hash/set or skiplist-encoded sorted set is scanned in "
                  "COUNT-sized steps (cursor != 0); 7.0 writes a skiplist's scores with "
                  "ld2string (Sluice: %.17g, as for a listpack)",
        newest="same as 7.0",
        treatment="exclude: compared only on small collections; Sluice returns every matching "
                  "item with cursor 0 at once (allowed: COUNT is a hint, and Redis does so for "
                  "small encodings)",
        source="https://redis.io/docs/latest/commands/scan/ (COUNT is a hint; small encodings "
               "return everything)",
    ),
)


def excluded_difference(cmd: Command) -> DeliberateDifference | None:
    """The deliberate difference that makes ``cmd`` incomparable with Redis 7.0, if any."""
    for difference in DELIBERATE_DIFFERENCES:
        if difference.uses_feature is not None and difference.uses_feature(cmd):
            return difference
    return None


# Newest-Redis error texts that Sluice emits, mapped back to the 7.0 text the oracle emits.
_UNBALANCED_7_0 = "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
ERROR_REWRITES: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = {
    "XREAD": (
        (re.compile(r"^ERR Unbalanced 'xread' list of streams: for each stream key an "
                    r"(ID, '\+', or '\$'|ID or '\$') must be specified\.$"), _UNBALANCED_7_0),
    ),
    "XREADGROUP": (
        (re.compile(r"^ERR Unbalanced 'xreadgroup' list of streams: for each stream key an "
                    r"ID or '>' must be specified\.$"), _UNBALANCED_7_0),
        (re.compile(r"^ERR The \+ ID is meaningless in the context of XREADGROUP"),
         "ERR Invalid stream ID specified as stream command argument"),
    ),
}


UNBLOCKED_NO_KEY_7_0 = "UNBLOCKED the stream key no longer exists"
UNBLOCKED_NO_GROUP_7_0 = "NOGROUP the consumer group this client was blocked on no longer exists"
WRONGTYPE = "WRONGTYPE Operation against a key holding the wrong kind of value"


def newest_unblocked_error(text: str, key: str, group: str, *, wrong_type: bool = False) -> str:
    """What the newest Redis replies to a blocked XREADGROUP (GROUP `group`, blocked on
    `key`) where Redis 7.0 replied `text`; other texts are returned as they are.
    `wrong_type`: the key now holds another type (else it is gone, or the group is)."""
    if text == UNBLOCKED_NO_KEY_7_0 and wrong_type:
        return WRONGTYPE
    if text in (UNBLOCKED_NO_KEY_7_0, UNBLOCKED_NO_GROUP_7_0):
        return (f"NOGROUP No such key '{key}' or consumer group '{group}' in XREADGROUP with "
                "GROUP option")
    return text


# --------------------------------------------------------------------------------------------
# Executors and captured replies
# --------------------------------------------------------------------------------------------


class Executor(Protocol):
    """Anything that runs one command and returns its reply (Engine, RedisOracle, wrappers)."""

    def execute(self, *args: Arg) -> Any: ...


@dataclass(frozen=True)
class ErrorReply:
    """An error reply, carrying Redis' full error text (prefix included)."""

    text: str


@dataclass(frozen=True)
class CrashReply:
    """A Python exception that is not a protocol error: always a mismatch, never a crash of the run."""

    text: str


class _FullErrorParser(DefaultParser):  # type: ignore[misc, valid-type]
    """redis-py strips the 'ERR ' prefix from error texts; keep Redis' text verbatim instead."""

    @classmethod
    def parse_error(cls, response: str) -> RedisResponseError:
        return RedisResponseError(response)


class RedisOracle:
    """A raw RESP2 connection to a real redis-server: no redis-py reply callbacks, full error texts."""

    def __init__(self, host: str, port: int, socket_timeout: float | None = None) -> None:
        self._connection = redis.Connection(host=host, port=port, protocol=2,
                                            parser_class=_FullErrorParser,
                                            socket_timeout=socket_timeout)

    def execute(self, *args: Arg) -> Any:
        self.send(*args)
        return self.read()

    def send(self, *args: Arg) -> None:
        """Sends a command without waiting (a blocking read answers later)."""
        self._connection.send_command(*args)

    def read(self) -> Any:
        """The next reply (an error reply raises)."""
        return self._connection.read_response()

    def close(self) -> None:
        self._connection.disconnect()


def _xreadgroup_consumers(cmd: Command) -> list[tuple[Arg, Arg, Arg]]:
    """(key, group, consumer) for every stream an XREADGROUP named."""
    call = parse_xread(cmd)
    if call.group is None or call.consumer is None:
        return []
    return [(key, call.group, call.consumer) for key in call.keys]


def _claim_consumers(cmd: Command) -> list[tuple[Arg, Arg, Arg]]:
    """(key, group, consumer) for XCLAIM / XAUTOCLAIM."""
    return [(cmd[1], cmd[2], cmd[3])] if len(cmd) > 3 else []


# The ID just below the largest one: the largest is Redis' internal spelling of ">" and would
# deliver new entries.  (Only a pending entry with exactly the largest ID would be re-read.)
BELOW_MAX_STREAM_ID = "18446744073709551615-18446744073709551614"


def _creating_consumers(consumers_of: Callable[[Command], list[tuple[Arg, Arg, Arg]]]) -> Emulation:
    """Newest Redis creates the named consumers and refreshes their seen-time on every attempt (7.2).

    On 7.0 a history read past the largest possible ID has exactly those two effects (create
    the consumer, set its seen-time) and nothing else.  Only successful commands are followed
    up: on an error 7.2+ has not touched the consumers either.
    """
    def run(inner: Executor, cmd: Command) -> Any:
        reply = inner.execute(*cmd)
        for key, group, consumer in consumers_of(cmd):
            inner.execute("XREADGROUP", "GROUP", group, consumer, "STREAMS", key, BELOW_MAX_STREAM_ID)
        return reply
    return run


def parse_valid_id(arg: Arg, missing_seq: int = 0) -> tuple[int, int]:
    """Parse an ID that Redis already accepted (strtoull semantics: wraps modulo 2**64)."""
    ms, _, seq = _text(arg).partition("-")
    return int(ms) % 2**64, (int(seq) % 2**64) if seq else missing_seq


def _stream_info(inner: Executor, key: Arg) -> dict[bytes, Any] | None:
    """XINFO STREAM of ``key`` as a dict, or None when it is missing or not a stream."""
    try:
        info = inner.execute("XINFO", "STREAM", key)
    except RedisResponseError:
        return None
    return dict(zip(info[::2], info[1::2]))


XSETID_BELOW_MAX_DELETED = "ERR The ID specified in XSETID is smaller than current max_deleted_entry_id"
_XSETID_LATER_CHECKS = ("ERR The ID specified in XSETID is smaller than the target stream top item",
                        "ERR The entries_added specified in XSETID is smaller than the target stream length")


def _xsetid_checking_max_deleted(inner: Executor, cmd: Command) -> Any:
    """Redis >= 7.2 (#11444) refuses an XSETID below the current max-deleted-entry-id; 7.0 accepts it.

    The check sits after argument parsing and the key lookup but before the top-item and
    entries-added checks, so: a 7.0 success is undone (state restored) and turned into the
    newer error, and a 7.0 error from one of the later checks is replaced by the newer error.
    """
    before = _stream_info(inner, cmd[1]) if len(cmd) > 2 else None
    try:
        reply = inner.execute(*cmd)
    except RedisResponseError as error:
        if before is not None and str(error) in _XSETID_LATER_CHECKS and _below_max_deleted(cmd, before):
            raise RedisResponseError(XSETID_BELOW_MAX_DELETED) from None
        raise
    if before is not None and _below_max_deleted(cmd, before):
        inner.execute("XSETID", cmd[1], before[b"last-generated-id"], "ENTRIESADDED", before[b"entries-added"],
                      "MAXDELETEDID", before[b"max-deleted-entry-id"])
        raise RedisResponseError(XSETID_BELOW_MAX_DELETED)
    return reply


def _below_max_deleted(cmd: Command, info: dict[bytes, Any]) -> bool:
    return parse_valid_id(cmd[2]) < parse_valid_id(info[b"max-deleted-entry-id"])


Emulation = Callable[[Executor, Command], Any]

# How the oracle runs commands whose newest-Redis behaviour differs (DELIBERATE_DIFFERENCES, "emulate").
EMULATIONS: dict[str, Emulation] = {
    "XREADGROUP": _creating_consumers(_xreadgroup_consumers),
    "XCLAIM": _creating_consumers(_claim_consumers),
    "XAUTOCLAIM": _creating_consumers(_claim_consumers),
    "XSETID": _xsetid_checking_max_deleted,
}


def _plain(inner: Executor, cmd: Command) -> Any:
    return inner.execute(*cmd)


class NewestRedisEmulation:
    """Wraps a Redis 7.0 executor so its replies and state evolve like the newest Redis.

    Each entry of EMULATIONS issues extra commands on the 7.0 server around the real one; see
    the "emulate" rows of DELIBERATE_DIFFERENCES.
    """

    def __init__(self, inner: Executor) -> None:
        self.inner = inner

    def execute(self, *args: Arg) -> Any:
        return EMULATIONS.get(command_name(args), _plain)(self.inner, args)


def _reply_error_types() -> tuple[type[BaseException], ...]:
    """Exception types that stand for a Redis error reply: redis-py's, and Sluice's if loaded.

    The engine is only looked up if something (the ``engine`` fixture) already imported it, so
    oracle-only runs never import a half-built engine.
    """
    types: list[type[BaseException]] = [RedisResponseError]
    engine_error = getattr(sys.modules.get("engine"), "ResponseError", None)
    if isinstance(engine_error, type) and issubclass(engine_error, BaseException):
        types.append(engine_error)
    return tuple(types)


def capture(executor: Executor, cmd: Command, error_types: tuple[type[BaseException], ...]) -> Any:
    """Run one command, turning error replies and unexpected exceptions into comparable values."""
    try:
        return executor.execute(*cmd)
    except error_types as exc:
        return ErrorReply(str(exc))
    except Exception as exc:  # noqa: BLE001 - an engine crash must show up as a readable mismatch
        return CrashReply(f"{type(exc).__name__}: {exc}")


# --------------------------------------------------------------------------------------------
# Normalization
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Loose:
    """A clock-dependent integer (milliseconds or unix-ms), compared within a tolerance."""

    value: Any


class _AnyValue:
    """A masked value that matches anything (see the lag/entries-read deliberate difference)."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _AnyValue()
_DROP = object()


def canonical(value: Any) -> Any:
    """Tuples become lists so that container type never matters (RESP only has arrays)."""
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    return value


def _pairs(flat: Any) -> list[list[Any]]:
    """A RESP2 flat map ``[k1, v1, k2, v2, ...]`` as ``[[k1, v1], ...]`` (order preserved)."""
    if not isinstance(flat, list) or len(flat) % 2:
        raise ValueError("not a flat map")
    return [[flat[i], flat[i + 1]] for i in range(0, len(flat), 2)]


FieldRule = Callable[[Any], Any]


def _apply_rules(flat: Any, rules: dict[bytes, FieldRule | object]) -> list[list[Any]]:
    """Rewrite a flat map field by field; a rule of _DROP removes the field."""
    out = []
    for key, value in _pairs(flat):
        rule = rules.get(key)
        if rule is _DROP:
            continue
        out.append([key, rule(value) if callable(rule) else value])
    return out


def _each(item_rule: FieldRule) -> FieldRule:
    """Apply a rule to every element of a list value."""
    def apply(value: Any) -> Any:
        return [item_rule(item) for item in value] if isinstance(value, list) else value
    return apply


def _loose_at(*positions: int) -> FieldRule:
    """Mark the given positions of a fixed-shape entry (e.g. a PEL row) as clock-dependent."""
    def apply(entry: Any) -> Any:
        if not isinstance(entry, list):
            return entry
        return [Loose(v) if i in positions else v for i, v in enumerate(entry)]
    return apply


def _masked(value: Any) -> Any:
    return ANY


@dataclass
class NormalizeContext:
    """What a normalizer may know beyond the reply: the command and whether lag is masked."""

    cmd: Command
    lag_masked: bool


def _group_rules(ctx: NormalizeContext) -> dict[bytes, FieldRule | object]:
    """Lag fields are masked only for keys whose history makes 7.0 and newest legitimately differ."""
    if not ctx.lag_masked:
        return {}
    return {b"lag": _masked, b"entries-read": _masked}


def _normalize_xpending(reply: Any, ctx: NormalizeContext) -> Any:
    """Extended XPENDING rows are [id, consumer, idle-ms, deliveries]; idle is clock-dependent."""
    if len(ctx.cmd) <= 3:
        return reply
    return _each(_loose_at(2))(reply)


def _normalize_xinfo_consumers(reply: Any, ctx: NormalizeContext) -> Any:
    """idle is clock-dependent; inactive exists only in Redis >= 7.2."""
    rules: dict[bytes, FieldRule | object] = {b"idle": Loose, b"inactive": _DROP}
    return [_apply_rules(consumer, rules) for consumer in reply]


def _normalize_xinfo_groups(reply: Any, ctx: NormalizeContext) -> Any:
    rules = _group_rules(ctx)
    return [_apply_rules(group, rules) for group in reply]


def _full_consumer(consumer: Any) -> Any:
    """XINFO STREAM FULL consumer: times are unix-ms; active-time exists only in Redis >= 7.2."""
    return _apply_rules(consumer, {
        b"seen-time": Loose,
        b"active-time": _DROP,
        b"pending": _each(_loose_at(1)),
    })


# XINFO STREAM fields of Redis 8.6 (idempotent production) that 7.0 lacks.
_IDMP_FIELDS: dict[bytes, FieldRule | object] = {
    name: _DROP for name in (b"idmp-duration", b"idmp-maxsize", b"pids-tracked", b"iids-tracked",
                             b"iids-added", b"iids-duplicates")}


def _normalize_xinfo_stream(reply: Any, ctx: NormalizeContext) -> Any:
    """Only the FULL form carries groups/consumers with delivery times and lag."""
    full = any(_upper(arg) == "FULL" for arg in ctx.cmd[3:])
    if not full:
        return _apply_rules(reply, {b"radix-tree-nodes": _masked, **_IDMP_FIELDS})
    group_rules: dict[bytes, FieldRule | object] = {
        **_group_rules(ctx),
        b"pending": _each(_loose_at(2)),
        b"consumers": _each(_full_consumer),
    }
    return _apply_rules(reply, {b"radix-tree-nodes": _masked, **_IDMP_FIELDS,
                                b"groups": _each(lambda group: _apply_rules(group, group_rules))})


def _sorted(reply: Any, ctx: NormalizeContext) -> Any:
    """Members of a set (SMEMBERS, SINTER...): their order is the encoding's."""
    return sorted(reply)


def _sorted_pairs(reply: Any, ctx: NormalizeContext) -> Any:
    """A hash's field-value pairs: hashtable order differs; small hashes keep insertion order."""
    return sorted(_pairs(reply))


def _sorted_scan(reply: Any, ctx: NormalizeContext) -> Any:
    """[cursor, items] of SSCAN/HSCAN, items (pairs for HSCAN) in a canonical order."""
    items = reply[1]
    if command_name(ctx.cmd) == "HSCAN":
        return [reply[0], sorted(_pairs(items))]
    return [reply[0], sorted(items)]


def _random_pick(reply: Any, ctx: NormalizeContext) -> Any:
    """SRANDMEMBER/HRANDFIELD/SPOP with a count: which members is random, how many is not."""
    if isinstance(reply, list):
        return ["picked", len(reply)]
    return "picked"


Normalizer = Callable[[Any, NormalizeContext], Any]

NORMALIZERS: dict[tuple[str, str | None], Normalizer] = {
    ("XPENDING", None): _normalize_xpending,
    ("XINFO", "CONSUMERS"): _normalize_xinfo_consumers,
    ("XINFO", "GROUPS"): _normalize_xinfo_groups,
    ("XINFO", "STREAM"): _normalize_xinfo_stream,
    **{(name, None): _sorted for name in ("SMEMBERS", "SINTER", "SUNION", "SDIFF", "HKEYS",
                                          "HVALS")},
    ("HGETALL", None): _sorted_pairs,
    ("HSCAN", None): _sorted_scan,
    ("SSCAN", None): _sorted_scan,
    **{(name, None): _random_pick for name in ("SRANDMEMBER", "HRANDFIELD", "SPOP")},
}


def rewrite_error(cmd: Command, reply: Any) -> Any:
    """Map a newest-Redis error text to the 7.0 text for the same situation (ERROR_REWRITES)."""
    if not isinstance(reply, ErrorReply):
        return reply
    for pattern, replacement in ERROR_REWRITES.get(command_name(cmd), ()):
        if pattern.search(reply.text):
            return ErrorReply(replacement)
    return reply


def normalize(cmd: Command, reply: Any, ctx: NormalizeContext) -> Any:
    """Comparable form of a reply; shapes a normalizer cannot handle are left as they are."""
    reply = canonical(reply)
    if isinstance(reply, (ErrorReply, CrashReply)) or reply is None:
        return reply
    normalizer = NORMALIZERS.get((command_name(cmd), subcommand_name(cmd)))
    if normalizer is None:
        return reply
    try:
        return normalizer(reply, ctx)
    except (ValueError, TypeError, IndexError, KeyError, AttributeError):
        return reply


def _child_path(path: str, index: int, a: Any, b: Any) -> str:
    """Name normalized map fields ([key, value] pairs) by their key, other items by index."""
    if (isinstance(a, list) and isinstance(b, list) and len(a) == len(b) == 2
            and isinstance(a[0], bytes) and a[0] == b[0]):
        return f"{path}.{a[0].decode('utf-8', 'replace')}"
    return f"{path}[{index}]"


def first_difference(a: Any, b: Any, tolerance_ms: int, path: str = "reply") -> str | None:
    """Path and values of the first place where two normalized replies disagree, or None."""
    if a is ANY or b is ANY:
        return None
    if isinstance(a, Loose) or isinstance(b, Loose):
        if (isinstance(a, Loose) and isinstance(b, Loose) and isinstance(a.value, int)
                and isinstance(b.value, int) and abs(a.value - b.value) <= tolerance_ms):
            return None
        return f"{path}: {a!r} vs {b!r} (clock-dependent, tolerance {tolerance_ms} ms)"
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: lengths {len(a)} vs {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            found = first_difference(x, y, tolerance_ms, _child_path(path, i, x, y))
            if found:
                return found
        return None
    if type(a) is not type(b) and not (isinstance(a, bytes) and isinstance(b, bytes)):
        return f"{path}: {a!r} ({type(a).__name__}) vs {b!r} ({type(b).__name__})"
    return None if a == b else f"{path}: {a!r} vs {b!r}"


# --------------------------------------------------------------------------------------------
# Lag masking: which keys have a history where 7.0 and newest compute lag differently
# --------------------------------------------------------------------------------------------


def _int_reply(reply: Any) -> int:
    return reply if isinstance(reply, int) else 0


def _xadd_trims(cmd: Command, reply: Any) -> bool:
    return any(t in ("MAXLEN", "MINID") for t in _xadd_option_tokens(cmd))


def _uses_entriesread(cmd: Command, reply: Any) -> bool:
    return subcommand_name(cmd) in ("CREATE", "SETID") and any(_upper(a) == "ENTRIESREAD" for a in cmd[5:])


# command -> predicate(cmd, oracle reply) telling whether cmd[1] (or cmd[2] for XGROUP) gets tainted
_TAINTERS: dict[str, Callable[[Command, Any], bool]] = {
    "XDEL": lambda cmd, reply: _int_reply(reply) > 0,
    "XTRIM": lambda cmd, reply: _int_reply(reply) > 0,
    "XADD": _xadd_trims,
    "XSETID": lambda cmd, reply: True,
    "XGROUP": _uses_entriesread,
}


class LagTracker:
    """Remembers keys whose consumer-group lag is a deliberate difference (see DELIBERATE_DIFFERENCES)."""

    def __init__(self) -> None:
        self._tainted: set[str] = set()

    def observe(self, cmd: Command, oracle_reply: Any) -> None:
        """Update the taint set from a command and the oracle's (successful) reply."""
        if isinstance(oracle_reply, (ErrorReply, CrashReply)):
            return
        name = command_name(cmd)
        if name in ("FLUSHALL", "FLUSHDB"):
            self._tainted.clear()
        elif name in ("DEL", "UNLINK", "SET"):
            self._tainted.difference_update(_text(k) for k in (cmd[1:] if name != "SET" else cmd[1:2]))
        elif name in _TAINTERS and _TAINTERS[name](cmd, oracle_reply):
            key = cmd[2] if name == "XGROUP" else cmd[1]
            self._tainted.add(_text(key))

    def masked_for(self, cmd: Command) -> bool:
        """Whether the key an XINFO command inspects has a tainted history."""
        return len(cmd) > 2 and _text(cmd[2]) in self._tainted


# --------------------------------------------------------------------------------------------
# The runner
# --------------------------------------------------------------------------------------------


@dataclass
class Step:
    """One executed command with both raw replies."""

    index: int
    cmd: Command
    engine: Any
    oracle: Any


@dataclass
class RunResult:
    """Everything that happened in one differential run (for statistics and debugging)."""

    steps: list[Step] = field(default_factory=list)

    @property
    def error_share(self) -> float:
        """Share of commands the oracle answered with an error."""
        if not self.steps:
            return 0.0
        return sum(isinstance(s.oracle, ErrorReply) for s in self.steps) / len(self.steps)


def format_command(cmd: Command) -> str:
    """A copy-pasteable Python tuple for one command."""
    return repr(tuple(_text(a) if isinstance(a, bytes) and a.isascii() else a for a in cmd))


def _mismatch_report(steps: Sequence[Step], step: Step, difference: str, normalized: tuple[Any, Any],
                     label: str) -> str:
    """Everything needed to reproduce a mismatch: position, command, replies, recent history."""
    recent = steps[max(0, len(steps) - HISTORY_SHOWN):]
    history = "\n".join(
        f"  #{s.index:<4} {format_command(s.cmd)}" + ("   <-- mismatch" if s is step else "")
        for s in recent
    )
    return (
        f"differential mismatch{f' [{label}]' if label else ''} at command #{step.index}: "
        f"{format_command(step.cmd)}\n"
        f"  first difference: {difference}\n"
        f"  sluice: {step.engine!r}\n"
        f"  redis : {step.oracle!r}\n"
        f"  sluice (normalized): {normalized[0]!r}\n"
        f"  redis  (normalized): {normalized[1]!r}\n"
        f"last {len(recent)} commands (a FLUSHALL precedes #0; replay them to reproduce):\n{history}"
    )


def run_both(engine: Executor, oracle: Executor, commands: Iterable[Command], *,
             tolerance_ms: int = DEFAULT_TOLERANCE_MS, emulate_newest: bool = True,
             label: str = "") -> RunResult:
    """Execute each command on Sluice and on the oracle and assert the replies match.

    The oracle is wrapped in NewestRedisEmulation unless ``emulate_newest`` is false (pass an
    already-wrapped executor, or compare two identical servers).  Raises AssertionError on the
    first mismatch, ValueError if a command uses a feature that cannot be compared with 7.0.
    """
    oracle_side = NewestRedisEmulation(oracle) if emulate_newest else oracle
    error_types = _reply_error_types()
    lag = LagTracker()
    result = RunResult()
    for index, raw_cmd in enumerate(commands):
        cmd = tuple(raw_cmd)
        excluded = excluded_difference(cmd)
        if excluded is not None:
            raise ValueError(f"command #{index} {format_command(cmd)} uses '{excluded.name}' "
                             f"(Redis {excluded.redis_version}); it cannot be compared with Redis 7.0")
        step = Step(index, cmd, capture(engine, cmd, error_types), capture(oracle_side, cmd, error_types))
        result.steps.append(step)
        ctx = NormalizeContext(cmd, lag.masked_for(cmd))
        pair = (normalize(cmd, rewrite_error(cmd, step.engine), ctx), normalize(cmd, step.oracle, ctx))
        difference = first_difference(pair[0], pair[1], tolerance_ms)
        if difference is not None:
            raise AssertionError(_mismatch_report(result.steps, step, difference, pair, label))
        lag.observe(cmd, step.oracle)
    return result
