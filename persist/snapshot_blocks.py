"""A snapshot read block by block, so that separate workers can each decode one
block (the Spark format `sluice-snapshot` reads one block per task).

A block alone does not say which stream its first ENTRIES records belong to, nor
which group its first PENDING records: they continue what the records of earlier
blocks opened. `snapshot_blocks` walks the whole file once, decompressing every
block and reading its records but not their chunks (the costly part), and notes for
each block the database, stream and group it starts in. `block_contents` then
decodes one block's chunks from that starting point: entries column-wise, in buffers
a columnar reader (Arrow) takes without a Python object per entry.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, Iterator, List, Optional, Tuple, Union

from persist import snapshot
from persist import snapshot_codec as codec
from persist.errors import CorruptFileError, TruncatedFileError


@dataclass(frozen=True)
class Block:
    """One block of a snapshot file and where the records before it left off."""

    path: str
    offset: int                       # of the block's header in the file
    db: int = 0
    stream: Optional[bytes] = None    # the stream whose entries or groups may go on here
    group: Optional[bytes] = None     # the group whose pending entries may go on here
    consumers: Tuple[bytes, ...] = ()  # that group's consumers (pending entries index them)


@dataclass(frozen=True)
class StreamEntries:
    """A run of one stream's entries in ID order, as column buffers ready for Arrow:
    (ms, seq, pair_ends, names, name_ends, values, value_ends), laid out as
    persist.snapshot_codec.decode_entry_columns describes."""

    db: int
    stream: bytes
    count: int
    columns: tuple


@dataclass(frozen=True)
class PendingEntries:
    """A run of one group's pending entries: (ms, seq, delivery time in ms, delivery
    count, consumer name) in ID order."""

    db: int
    stream: bytes
    group: bytes
    entries: list


class _Walk:
    """The database, stream and group that the records read so far leave open."""

    def __init__(self, block: Block) -> None:
        self.path = block.path
        self.db = block.db
        self.stream = block.stream
        self.group = block.group
        self.consumers = block.consumers

    def block(self, offset: int) -> Block:
        return Block(self.path, offset, self.db, self.stream, self.group, self.consumers)

    def step(self, offset: int, rec) -> int:
        """Follows one record; returns its type. CorruptFileError when it is out of place."""
        if type(rec) is not list or not rec or rec[0] not in _KINDS:
            raise CorruptFileError(self.path, offset, "malformed record: unknown record")
        kind = rec[0]
        try:
            if kind == codec.DB:
                self.db, self.stream, self.group, self.consumers = int(rec[1]), None, None, ()
            elif kind in (codec.STRING, codec.STREAM, codec.VALUE):
                self.stream = _name(rec[1]) if kind == codec.STREAM else None
                self.group, self.consumers = None, ()
            elif kind == codec.GROUP:
                self.group = _name(rec[1])
                self.consumers = tuple(_name(c[0]) for c in rec[5])
        except (IndexError, TypeError, ValueError) as e:
            raise CorruptFileError(self.path, offset, f"malformed record: {e}") from None
        if kind == codec.ENTRIES and (self.stream is None or self.group is not None):
            raise CorruptFileError(self.path, offset, "malformed record: entries outside a stream")
        if kind == codec.PENDING and self.group is None:
            raise CorruptFileError(self.path, offset,
                                   "malformed record: pending entries outside a group")
        return kind


def _name(value) -> bytes:
    if type(value) is not bytes:
        raise TypeError("a key, group or consumer name is not a byte string")
    return value


_KINDS = (codec.DB, codec.STRING, codec.STREAM, codec.ENTRIES, codec.GROUP, codec.PENDING,
          codec.END, codec.FUNCTIONS, codec.VALUE)


def snapshot_blocks(path: Union[str, os.PathLike]) -> List[Block]:
    """Every block of the snapshot at `path` with the state it starts in. Checks each
    block's checksum and that the file ends with its END record; CorruptFileError
    (file and offset) on damage. Chunks are left for block_contents."""
    path = os.fspath(path)
    walk = _Walk(Block(path, 0))
    blocks: List[Block] = []
    kind = None
    with open(path, "rb") as f:
        snapshot._check_header(path, f)
        size = os.fstat(f.fileno()).st_size
        for offset, raw in snapshot._blocks(path, f, None):
            if kind == codec.END:
                raise CorruptFileError(path, offset, "data after the end record")
            blocks.append(walk.block(offset))
            for rec in snapshot._unpack_block(path, offset, raw):
                if kind == codec.END:
                    raise CorruptFileError(path, offset, "data after the end record")
                kind = walk.step(offset, rec)
    if kind != codec.END:
        raise TruncatedFileError(path, size, "file ends before its end record")
    return blocks


def _every_stream(db: int, key: bytes) -> bool:
    return True


def block_contents(block: Block, *, pending: bool = False,
                   wanted: Callable[[int, bytes], bool] = _every_stream
                   ) -> Iterator[Union[StreamEntries, PendingEntries]]:
    """The stream entries (with pending=True: the groups' pending entries) stored in one
    block, a chunk at a time in file order, of the streams for which wanted(db, key) is
    true (only their chunks are decoded); CorruptFileError (file and block offset) on
    damage."""
    walk = _Walk(block)
    chosen = codec.PENDING if pending else codec.ENTRIES
    with open(block.path, "rb") as f:
        _, raw = next(snapshot._blocks(block.path, f, None, block.offset))
    for rec in snapshot._unpack_block(block.path, block.offset, raw):
        kind = walk.step(block.offset, rec)
        if kind != chosen or not wanted(walk.db, walk.stream):
            continue
        try:
            if kind == codec.ENTRIES:
                yield StreamEntries(walk.db, walk.stream, rec[1],
                                    codec.decode_entry_columns(rec[2], rec[1]))
            else:
                names = walk.consumers
                yield PendingEntries(walk.db, walk.stream, walk.group, [
                    (ms, seq, time, count, names[owner])
                    for ms, seq, time, count, owner in codec.decode_pending(rec[2], rec[1])])
        except (codec.RecordError, IndexError, TypeError, OverflowError) as e:
            raise CorruptFileError(block.path, block.offset, f"malformed record: {e}") from None


__all__ = ["Block", "StreamEntries", "PendingEntries", "snapshot_blocks", "block_contents"]
