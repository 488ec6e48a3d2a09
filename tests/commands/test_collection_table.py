"""The command table's records of the list, hash and set commands agree with the
7.0 oracle's COMMAND INFO (arity, flags, key positions) and COMMAND DOCS (since,
group). The summaries are the newest Redis's (rewritten in 7.2), not 7.0's, and so are
the flags listed in test_command_table.py's NEWER_FLAGS."""
from __future__ import annotations

import pytest

from engine.commands.table import COMMANDS
from test_command_table import NEWER_FLAGS

FAMILIES = ("list", "hash", "set")
RECORDS = [r for r in COMMANDS.values() if r.group in FAMILIES]


def test_every_family_is_complete():
    names = {r.name for r in RECORDS}
    assert {"lpush", "blmpop", "lpos", "hrandfield", "hscan", "sintercard", "sscan"} <= names
    assert len(RECORDS) == 22 + 16 + 17


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: r.name)
def test_record_matches_redis(record, oracle):
    info = oracle.execute("COMMAND", "INFO", record.name)[0]
    name, arity, flags, first, last, step = info[:6]
    assert name == record.name.encode() and arity == record.arity
    theirs = {f.decode() for f in flags}
    ours = set(record.flags) | ({"movablekeys"} if record.movable_keys else set())
    assert ours | NEWER_FLAGS.get(record.name, set()) == theirs
    assert (first, last, step) == ((record.first_key, record.last_key, record.step)
                                  if not record.movable_keys else (0, 0, 0))
    docs = oracle.execute("COMMAND", "DOCS", record.name)[1]
    docs = dict(zip(docs[::2], docs[1::2]))
    assert docs[b"since"].decode() == record.since
    assert docs[b"group"].decode() == record.group
