"""Key names, hash-tagged so a stream, its locks, error notes and DLQ share one cluster
slot: the requeue script touches them together, and a script's keys must be in one slot."""
from __future__ import annotations

import re

_STREAM_ID = re.compile(r"\d+-\d+\Z")


def hash_tag(key: str) -> str:
    """The part of `key` Redis Cluster hashes: the text between the first '{' and the
    next '}' when that is non-empty, else the whole key."""
    start = key.find("{")
    if start >= 0:
        end = key.find("}", start + 1)
        if end > start + 1:
            return key[start + 1:end]
    return key


def same_slot(a: str, b: str) -> bool:
    """True when the two keys always land in the same cluster slot."""
    return hash_tag(a) == hash_tag(b)


def _tagged(stream: str) -> str:
    """The stream's name with a hash tag that hashes like the stream itself."""
    return stream if hash_tag(stream) != stream else "{" + stream + "}"


def lock_prefix(stream: str) -> str:
    """What every lock key of `stream` starts with (the listener's filter)."""
    return f"lock:{_tagged(stream)}:"


def lock_key(stream: str, entry_id: str) -> str:
    """`lock:{stream}:<id>`: held by the worker running the entry."""
    return lock_prefix(stream) + entry_id


def error_key(stream: str, entry_id: str) -> str:
    """Where a failed handler leaves its error, for the requeue that carries it along."""
    return f"{_tagged(stream)}:error:{entry_id}"


def dlq_key(stream: str) -> str:
    """The default dead-letter stream: `{stream}:dlq`."""
    return f"{_tagged(stream)}:dlq"


def entry_of_lock(stream: str, key: str) -> str | None:
    """The entry ID a lock key of `stream` names, or None for any other key."""
    prefix = lock_prefix(stream)
    if key.startswith(prefix) and _STREAM_ID.match(key[len(prefix):]):
        return key[len(prefix):]
    return None
