"""Test helpers for the Spark readers: a Sluice server, fill streams with known entries through redis-py
pipelines, and turn what Spark read back into comparable values."""
from __future__ import annotations

from collections.abc import Iterator
from typing import Dict, Iterable, List, Tuple

import pytest
import redis

from servers import SluiceServer

Fields = List[Tuple[str, bytes]]
Written = Dict[str, List[Tuple[str, Fields]]]
CHUNK = 2000


@pytest.fixture(scope="session")
def sluice_server() -> Iterator[SluiceServer]:
    """One Sluice server (no snapshots) for the Spark reader tests."""
    with SluiceServer(["--save", ""], loglevel="warning") as server:
        yield server


@pytest.fixture
def sluice_client(sluice_server: SluiceServer) -> Iterator[redis.Redis]:
    """A client of that server, emptied (FLUSHALL) for the test."""
    client = redis.Redis(port=sluice_server.port)
    client.flushall()
    yield client
    client.close()


def entry_fields(stream: str, number: int) -> Fields:
    """Known fields per entry: text, bytes that are not UTF-8, and now and then a field
    repeated within the entry (streams allow it; redis-py's dicts would hide it)."""
    fields = [("n", str(number).encode()), ("stream", stream.encode()), ("raw", bytes([number % 256, 0xFF]))]
    if number % 997 == 0:
        fields.append(("n", b"again"))
    return fields


def fill_streams(client, names: Iterable[str], per_stream: int, first: int = 0,  # noqa: ANN001 - Redis or RedisCluster
                 spaced: bool = False) -> Written:
    """Adds `per_stream` entries (numbered from `first`) to each stream with XADD *,
    in pipelined chunks; returns what each stream received, ID by ID. spaced: entry n
    gets ID (n+1)-1 instead, one millisecond apart, for tests of where planning cuts
    ranges of IDs (with *, the cuts depend on how many entries the server wrote in each
    millisecond: a fast one writes a hundred in one)."""
    written: Written = {}
    for name in names:
        numbers = list(range(first, first + per_stream))
        entries: List[Tuple[str, Fields]] = []
        for start in range(0, len(numbers), CHUNK):
            pipe = client.pipeline(transaction=False)
            chunk = [(number, entry_fields(name, number)) for number in numbers[start:start + CHUNK]]
            for number, fields in chunk:
                entry_id = f"{number + 1}-1" if spaced else "*"
                pipe.execute_command("XADD", name, entry_id, *[part for pair in fields for part in pair])
            ids = pipe.execute()
            entries.extend((entry_id.decode(), fields) for entry_id, (_, fields) in zip(ids, chunk))
        written[name] = entries
    return written


def read_back(table) -> Dict[Tuple[str, str], Fields]:  # noqa: ANN001 - a pyarrow.Table from df.toArrow()
    """(stream, id) -> fields of every row Spark returned; fails on a row read twice."""
    seen: Dict[Tuple[str, str], Fields] = {}
    for row in table.select(["stream", "id", "fields"]).to_pylist():
        key = (row["stream"], row["id"])
        assert key not in seen, f"entry {key} was read twice"
        seen[key] = list(row["fields"])
    return seen


def expected_rows(written: Written) -> Dict[Tuple[str, str], Fields]:
    return {(stream, entry_id): fields for stream, entries in written.items() for entry_id, fields in entries}


def entry_ids(rows: Iterable[Tuple[str, str]]) -> Dict[str, List[str]]:
    """IDs per stream, in the order given."""
    result: Dict[str, List[str]] = {}
    for stream, entry_id in rows:
        result.setdefault(stream, []).append(entry_id)
    return result
