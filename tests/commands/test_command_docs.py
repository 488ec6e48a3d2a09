"""COMMAND INFO and COMMAND DOCS against redis-server 7.0, entry by entry: for every
command and subcommand both servers have, in RESP2 and RESP3 (sets told from arrays),
everything a client or tool reads - name, arity, flags, key positions, ACL categories,
tips, key specifications, subcommands, and summary, since, group, complexity, doc
flags, history and arguments - except where the newest Redis changed the record after
7.0 (NEWER, each with its source); Sluice follows the newest there."""
from __future__ import annotations

import pytest

from raw_io import raw_socket
from test_command_table import every_record, server_in_thread

_UNSTABLE = "https://github.com/redis/redis/blob/unstable/src/commands/"
# What the newest Redis changed after 7.0 in a record Sluice has: name -> {field: source}.
# (`summary` of every record too: EVERY_RECORD_NEWER.)
NEWER: dict[str, dict[str, str]] = {
    "publish": {"flags": _UNSTABLE + "publish.json (may_replicate)"},
    **{name: {"flags": "redis/redis#11568 (7.2: no noscript; in a script they answer at once)"}
       for name in ("blpop", "brpop", "blmove", "brpoplpush", "bzpopmin", "bzpopmax")},
    # 8.2's KEEPREF / DELREF / ACKED (and 7.2's argument names in these records)
    **{name: {"history": _UNSTABLE + f"{name}.json", "arguments": _UNSTABLE + f"{name}.json"}
       for name in ("xadd", "xtrim")},
    # 8.4's CLAIM, 8.10's MAXCOUNT / MAXSIZE; the STREAMS key spec incomplete (redis/redis#15478)
    **{name: {"history": _UNSTABLE + f"{name}.json", "arguments": _UNSTABLE + f"{name}.json",
              "key_specs": _UNSTABLE + f"{name}.json (redis/redis#15478)"}
       for name in ("xread", "xreadgroup")},
    # 7.2's inactive / active-time fields (XINFO CONSUMERS, XINFO STREAM FULL)
    "xinfo|consumers": {"history": _UNSTABLE + "xinfo-consumers.json"},
    "xinfo|stream": {"history": _UNSTABLE + "xinfo-stream.json"},
    "hscan": {"arguments": _UNSTABLE + "hscan.json (7.4: NOVALUES)"},
    "client|reply": {"arguments": _UNSTABLE + "client-reply.json (7.2 names its argument)"},
    "quit": {field: _UNSTABLE + "quit.json (deprecated in 7.2)"
             for field in ("doc_flags", "deprecated_since", "replaced_by")},
    **{name: {"arity": _UNSTABLE + f"{name}.json (7.2: WITHSCORE)",
              "history": _UNSTABLE + f"{name}.json", "arguments": _UNSTABLE + f"{name}.json"}
       for name in ("zrank", "zrevrank")},
}
# Records 7.0 lacks, checked by hand against the newest json (their source); Sluice's
# summary and `since` kept where the stored json is an older development version.
NEWER_ONLY = {name: _UNSTABLE + f"{name.replace('|', '-')}.json"
              for name in ("xackdel", "xcfgset", "xdelex", "xidmprecord", "xnack", "waitaof",
                           "client|setinfo", "client|no-touch")}
# Fields the newest Redis changed in every record.
EVERY_RECORD_NEWER = {"summary": _UNSTABLE + "*.json: Redis 7.2 reworded every summary (get.json)"}
_INFO_FIELDS = ("name", "arity", "flags", "first_key", "last_key", "step", "acl_categories",
                "tips", "key_specs", "subcommands")


class _Set(tuple):
    """A RESP3 set, told apart from an array."""


def _read(f) -> object:
    line = f.readline()
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b"-"):
        return rest.decode()
    if kind == b":":
        return int(rest)
    if kind == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode()
    if kind in (b"*", b"~"):
        items = [_read(f) for _ in range(int(rest))]
        return _Set(items) if kind == b"~" else items
    if kind == b"%":
        return {_read(f): _read(f) for _ in range(int(rest))}
    if kind == b"_":
        return None
    raise AssertionError(f"unexpected reply {line!r}")


def _query(port: int, resp3: bool, *argv: str) -> object:
    with raw_socket(port) as s:
        f = s.makefile("rb")
        if resp3:
            s.sendall(b"HELLO 3\r\n")
            _read(f)
        s.sendall(b"*%d\r\n" % len(argv) + b"".join(
            b"$%d\r\n%s\r\n" % (len(a), a.encode()) for a in argv))
        return _read(f)


def _pairs(reply: object) -> dict:
    """A RESP2 flat map (or a RESP3 map) as a dict."""
    if isinstance(reply, dict):
        return reply
    return dict(zip(reply[0::2], reply[1::2]))


def _info_view(entry: list) -> dict:
    view = dict(zip(_INFO_FIELDS, entry))
    view["key_specs"] = type(entry[8])(_deep_pairs(spec) for spec in entry[8])
    del view["subcommands"]                     # (each compared alone, where both have it)
    view["subcommands_type"] = type(entry[9]).__name__
    return view


def _deep_pairs(value: object) -> object:
    """Key specs and doc arguments with their RESP2 flat maps made dicts."""
    if isinstance(value, list) and value and isinstance(value[0], str) and len(value) % 2 == 0 \
            and value[0] in ("notes", "flags", "name", "type", "spec", "summary"):
        return {k: _deep_pairs(v) for k, v in _pairs(value).items()}
    if isinstance(value, dict):
        return {k: _deep_pairs(v) for k, v in value.items()}
    if isinstance(value, (list, _Set)):
        return type(value)(_deep_pairs(v) for v in value)
    return value


def _docs_view(docs: dict) -> dict:
    return {k: _deep_pairs(v) for k, v in _pairs(docs).items() if k != "subcommands"}


def _differences(name: str, ours: dict, theirs: dict, what: str) -> list:
    skip = set(NEWER.get(name, {})) | set(EVERY_RECORD_NEWER)
    return [f"{what} {name} {field}: ours {ours.get(field)!r} / 7.0 {theirs.get(field)!r}"
            for field in sorted(set(ours) | set(theirs) - skip)
            if field not in skip and ours.get(field) != theirs.get(field)]


@pytest.mark.parametrize("resp3", [False, True], ids=["resp2", "resp3"])
def test_command_info_and_docs_match_redis(redis_server, resp3):
    """Every field of COMMAND INFO and COMMAND DOCS equals 7.0's (all differences
    listed at once), but those of NEWER; each NEWER field does differ."""
    real = redis_server[1]
    mismatches, compared = [], 0
    with server_in_thread() as server:
        ours_port = server.cfg.port
        for record in every_record():
            theirs = _query(real, resp3, "COMMAND", "INFO", record.name)[0]
            if theirs is None:                  # newer than 7.0 (checked by hand, NEWER_ONLY)
                continue
            ours = _query(ours_port, resp3, "COMMAND", "INFO", record.name)[0]
            mismatches += _differences(record.name, _info_view(ours), _info_view(theirs), "INFO")
            their_docs = _pairs(_query(real, resp3, "COMMAND", "DOCS", record.name))
            our_docs = _pairs(_query(ours_port, resp3, "COMMAND", "DOCS", record.name))
            mismatches += _differences(record.name, _docs_view(our_docs[record.name]),
                                       _docs_view(their_docs[record.name]), "DOCS")
            for field in NEWER.get(record.name, {}):
                view = _info_view(ours) if field in _INFO_FIELDS else _docs_view(
                    our_docs[record.name])
                other = _info_view(theirs) if field in _INFO_FIELDS else _docs_view(
                    their_docs[record.name])
                if view.get(field) == other.get(field):
                    mismatches.append(f"NEWER {record.name} {field}: 7.0's, not newer")
            compared += 1
    assert not mismatches, "\n".join(mismatches)
    assert compared > 150


def test_records_newer_than_redis_7_0_are_complete(redis_server):
    """The records 7.0 lacks (NEWER_ONLY) are exactly those it answers nil for, and
    carry what their json has: categories, complexity, arguments."""
    names = {record.name for record in every_record()}
    newer = {name for name in names
             if _query(redis_server[1], False, "COMMAND", "INFO", name)[0] is None}
    assert newer == set(NEWER_ONLY)
    for record in every_record():
        if record.name in NEWER_ONLY:
            assert "@slow" in record.acl_categories or "@fast" in record.acl_categories
            assert record.complexity and record.arguments, record.name
            assert all(spec.index for spec in record.key_specs), record.name
