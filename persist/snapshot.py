"""The snapshot file: the engine's whole state, compressed and checksummed block by
block, written atomically and loaded all-or-nothing. It is not Redis's RDB, so it
has its own name (`dump.sluice` by default; any `dbfilename` is written in this
format) and magic; an RDB file handed to it is named as such (persist/redis_rdb.py).

Layout (integers little-endian):

    header   MAGIC (8 bytes: "\\x89SLUICE\\n"; the high first byte and the newline
             catch a transfer that strips bit 8 or translates line ends, as PNG's
             do), format version (u32)
    block    compressed size (u32), raw size (u32), CRC-32 (u32) of the two sizes
             and the payload; payload: one lz4 frame holding whole msgpack records
    ...      more blocks; the last record of the last block is the END record

The records are described in persist/snapshot_codec.pyx. Every byte is covered:
the header must match exactly, the sizes and payload by the checksum, and a cut
at a block boundary by the END record that must close the file.
"""
from __future__ import annotations

import os
import re
import struct
import time
import zlib
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Optional

import lz4.frame
import msgpack

from persist import snapshot_codec as codec
from persist.errors import CorruptFileError, TruncatedFileError
from persist.files import fsync_dir, remove_file
from persist.redis_rdb import rdb_error, rdb_version

MAGIC = b"\x89SLUICE\n"
FORMAT_VERSION = 1
EXTENSION = "sluice"            # of the snapshot file and of an AOF base in this format
DEFAULT_FILENAME = f"dump.{EXTENSION}"
HEADER = struct.Struct("<8sI")
BLOCK = struct.Struct("<III")
BLOCK_BYTES = 1 << 20           # raw bytes per block (a block ends after the record crossing it)

Progress = Optional[Callable[[int, Optional[int]], None]]

__all__ = ["write_snapshot", "write_snapshot_file", "load_snapshot", "is_snapshot",
           "snapshot_info", "iter_records", "verify_snapshot", "MAGIC", "FORMAT_VERSION",
           "EXTENSION", "DEFAULT_FILENAME", "temp_path", "remove_leftover_temps"]


# -- writing ----------------------------------------------------------------------

def write_snapshot_file(engine, fileobj: BinaryIO, *, progress: Progress = None) -> dict:
    """Writes the engine's state onto an open binary file (no fsync, no rename).
    progress(bytes_written, None) is called after each block."""
    started = time.perf_counter()
    written = fileobj.write(HEADER.pack(MAGIC, FORMAT_VERSION))
    pack = msgpack.Packer(use_bin_type=True).pack
    parts: list[bytes] = []
    raw = 0
    record: list = []
    for record in codec.state_records(engine):
        data = pack(record)
        parts.append(data)
        raw += len(data)
        if raw >= BLOCK_BYTES:
            written += _write_block(fileobj, b"".join(parts))
            parts.clear()
            raw = 0
            if progress:
                progress(written, None)
    written += _write_block(fileobj, b"".join(parts))     # holds at least END
    if progress:
        progress(written, written)
    _, keys, streams, entries, groups, pending = record
    return {"keys": keys, "streams": streams, "entries": entries, "groups": groups,
            "pending": pending, "bytes": written,
            "seconds": time.perf_counter() - started}


def _write_block(fileobj: BinaryIO, raw: bytes) -> int:
    payload = lz4.frame.compress(raw, content_checksum=False, store_size=False)
    sizes = struct.pack("<II", len(payload), len(raw))
    crc = zlib.crc32(payload, zlib.crc32(sizes))
    fileobj.write(sizes + struct.pack("<I", crc))
    fileobj.write(payload)
    return BLOCK.size + len(payload)


def write_snapshot(engine, path: str | os.PathLike, *, progress: Progress = None) -> dict:
    """Writes the snapshot to a temporary file beside `path`, fsyncs it, renames it
    over `path` and fsyncs the directory: `path` is always a whole snapshot."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path))
    tmp = temp_path(path, os.getpid())
    try:
        with open(tmp, "wb") as f:
            info = write_snapshot_file(engine, f, progress=progress)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(directory)
    return info


def temp_path(path: str | os.PathLike, pid: int) -> str:
    """Where process `pid` writes the snapshot for `path` before renaming it."""
    path = os.path.abspath(path)
    return os.path.join(os.path.dirname(path), f"temp-{pid}-{os.path.basename(path)}")


def remove_leftover_temps(directory: str, filenames: Iterable[str]) -> list[str]:
    """Removes the temporary files of snapshots named `filenames` that a crash or a
    power cut left in `directory` before their rename; the names removed. Only for
    the directory's owner at start: no other process can be writing one then (the
    lock keeps other owners out, and an owner's children die with it)."""
    pattern = re.compile("temp-[0-9]+-(%s)" % "|".join(map(re.escape, filenames)))
    return [name for name in sorted(os.listdir(directory))
            if pattern.fullmatch(name) and remove_file(os.path.join(directory, name))]


# -- reading ----------------------------------------------------------------------

def _check_header(path: str, f: BinaryIO) -> None:
    head = f.read(HEADER.size)
    if len(head) < HEADER.size or head[:len(MAGIC)] != MAGIC:
        version = rdb_version(head)
        if version is not None:
            raise rdb_error(path, version, "a Sluice snapshot")
        if MAGIC.startswith(head[:len(MAGIC)]) and len(head) < HEADER.size:
            raise TruncatedFileError(path, 0, "file ends inside the snapshot header")
        raise CorruptFileError(path, 0, "not a Sluice snapshot (bad magic)")
    _, version = HEADER.unpack(head)
    if version != FORMAT_VERSION:
        raise CorruptFileError(path, len(MAGIC),
                               f"unsupported snapshot format version {version}")


def _block_heads(path: str, f: BinaryIO, offset: int,
                 size: int) -> Iterator[tuple[int, int, int, bytes]]:
    """(offset, compressed size, raw size, header bytes) of each block from `offset`
    on, with f just past that block's header at each step."""
    while offset < size:
        f.seek(offset)
        head = f.read(BLOCK.size)
        if len(head) < BLOCK.size:
            raise TruncatedFileError(path, offset, "file ends inside a block header")
        clen, rlen, _ = BLOCK.unpack(head)
        if clen > size - offset - BLOCK.size:
            raise TruncatedFileError(path, offset, "block runs past the end of the file")
        yield offset, clen, rlen, head
        offset += BLOCK.size + clen


def _blocks(path: str, f: BinaryIO, progress: Progress,
            offset: int = HEADER.size) -> Iterator[tuple[int, bytes]]:
    """(offset, raw bytes) of every block from `offset` on, each checked."""
    size = os.fstat(f.fileno()).st_size
    for offset, clen, rlen, head in _block_heads(path, f, offset, size):
        payload = f.read(clen)
        if zlib.crc32(payload, zlib.crc32(head[:8])) != BLOCK.unpack(head)[2]:
            raise CorruptFileError(path, offset, "block checksum mismatch")
        try:
            raw = lz4.frame.decompress(payload)
        except RuntimeError as e:
            raise CorruptFileError(path, offset, f"block does not decompress: {e}") from None
        if len(raw) != rlen or not raw:
            raise CorruptFileError(path, offset, "block size differs from its header")
        yield offset, raw
        if progress:
            progress(offset + BLOCK.size + clen, size)


def _unpack_block(path: str, offset: int, raw: bytes) -> list:
    """The msgpack records of one block; the block must end with a whole record."""
    unpacker = msgpack.Unpacker(raw=False, use_list=True, strict_map_key=True,
                                max_buffer_size=len(raw))
    unpacker.feed(raw)
    records, end = [], 0
    try:
        for record in unpacker:
            records.append(record)
            end = unpacker.tell()   # (after a partial object tell() counts it too)
    except (ValueError, TypeError) as e:
        raise CorruptFileError(path, offset, f"undecodable record: {e}") from None
    if end != len(raw):
        raise CorruptFileError(path, offset, "block ends inside a record")
    return records


def _raw_records(path: str, f: BinaryIO, progress: Progress) -> Iterator[tuple[int, Any]]:
    """(block offset, record) for every record of the file, as stored."""
    _check_header(path, f)
    for offset, raw in _blocks(path, f, progress):
        for record in _unpack_block(path, offset, raw):
            yield offset, record


def _feed_all(path: str, loader, progress: Progress) -> int:
    """Feeds every record to a StateLoader; returns the file's size."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        for offset, record in _raw_records(path, f, progress):
            try:
                loader.feed(record)
            except codec.RecordError as e:
                raise CorruptFileError(path, offset, f"malformed record: {e}") from None
    if not loader.ended:
        raise TruncatedFileError(path, size, "file ends before its end record")
    return size


def _totals(loader) -> dict:
    return {"keys": loader.keys, "streams": loader.streams, "entries": loader.entries,
            "groups": loader.groups, "pending": loader.pending}


def load_snapshot(engine, path: str | os.PathLike, *, progress: Progress = None) -> dict:
    """Replaces the engine's data with the snapshot at `path`. Raises
    CorruptFileError (naming the offset of the bad block) on any damage; the engine
    is then left as it was. progress(bytes_read, file_size) after each block."""
    path = os.fspath(path)
    started = time.perf_counter()
    loader = codec.StateLoader(len(engine.databases), engine.stream_node_max_bytes,
                               engine.stream_node_max_entries, limits=engine.encoding_limits)
    previous = engine.memory.enter()        # what loading allocates is the engine's
    try:
        size = _feed_all(path, loader, progress)
        loader.install(engine)
    finally:
        engine.memory.leave(previous)
    return {**_totals(loader), "bytes": size, "seconds": time.perf_counter() - started}


def verify_snapshot(path: str | os.PathLike, *, progress: Progress = None) -> dict:
    """Checks every checksum and every record as loading would (holding one key in
    memory at a time); raises CorruptFileError on damage, else returns the totals."""
    path = os.fspath(path)
    loader = codec.StateLoader(1 << 31, 0, 100, keep=False)
    size = _feed_all(path, loader, progress)
    return {**_totals(loader), "bytes": size, "format_version": FORMAT_VERSION}


def is_snapshot(path: str | os.PathLike) -> bool:
    """Whether the file starts with the snapshot magic (nothing else is checked)."""
    try:
        with open(path, "rb") as f:
            return f.read(len(MAGIC)) == MAGIC
    except OSError:
        return False


def snapshot_info(path: str | os.PathLike) -> dict:
    """Format version, sizes and the END record's totals, reading the block headers
    and only the last block (verify_snapshot checks the rest)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        _check_header(path, f)
        size = os.fstat(f.fileno()).st_size
        heads = list(_block_heads(path, f, HEADER.size, size))
        if not heads:
            raise TruncatedFileError(path, size, "file ends before its first block")
        records = [r for o, raw in _blocks(path, f, None, heads[-1][0])
                   for r in _unpack_block(path, o, raw)]
    end = records[-1]
    if not (type(end) is list and len(end) == 6 and end[0] == codec.END):
        raise TruncatedFileError(path, size, "file ends before its end record")
    keys, streams, entries, groups, pending = end[1:]
    return {"path": path, "format_version": FORMAT_VERSION, "file_bytes": size,
            "blocks": len(heads), "raw_bytes": sum(h[2] for h in heads), "keys": keys,
            "streams": streams, "entries": entries, "groups": groups, "pending": pending}


def iter_records(path: str | os.PathLike, *, progress: Progress = None) -> Iterator[dict]:
    """Every record as a dict with a "type" ("functions", "db", "string", "stream",
    "entries", "idmp", "group", "pending", "end"), chunks decoded; IDs as "ms-seq" strings, keys,
    names and values as bytes. Checksums are checked as the blocks are read."""
    path = os.fspath(path)
    consumers: list = []
    with open(path, "rb") as f:
        for offset, rec in _raw_records(path, f, progress):
            try:
                yield _describe(rec, consumers)
            except (codec.RecordError, ValueError, TypeError, IndexError) as e:
                raise CorruptFileError(path, offset, f"malformed record: {e}") from None


def _id(ms: int, seq: int) -> str:
    return f"{ms}-{seq}"


def _describe(rec: list, consumers: list) -> dict:
    """A stored record as a dict (see iter_records). `consumers` carries the
    current group's consumer names to PENDING records."""
    kind = rec[0]
    if kind == codec.DB:
        return {"type": "db", "index": rec[1]}
    if kind == codec.STRING:
        return {"type": "string", "key": rec[1], "value": rec[2], "expire_ms": rec[3]}
    if kind == codec.VALUE:
        return {"type": rec[2].decode(), "key": rec[1], "items": rec[3], "expire_ms": rec[4]}
    if kind == codec.STREAM:
        return {"type": "stream", "key": rec[1], "expire_ms": rec[2], "length": rec[3],
                "last_id": _id(rec[4], rec[5]), "first_id": _id(rec[6], rec[7]),
                "max_deleted_id": _id(rec[8], rec[9]), "entries_added": rec[10],
                "groups": rec[11]}
    if kind == codec.ENTRIES:
        return {"type": "entries", "entries": [
            [_id(ms, seq), fields] for ms, seq, fields in codec.decode_entries(rec[2], rec[1])]}
    if kind == codec.GROUP:
        consumers[:] = [c[0] for c in rec[5]]
        return {"type": "group", "name": rec[1], "last_delivered_id": _id(rec[2], rec[3]),
                "entries_read": None if rec[4] == -1 else rec[4],
                "consumers": [{"name": n, "seen_time": s, "active_time": a}
                              for n, s, a in rec[5]],
                "pending": rec[6]}
    if kind == codec.PENDING:
        return {"type": "pending", "entries": [
            {"id": _id(ms, seq), "consumer": consumers[owner], "delivery_time": t,
             "delivery_count": n}
            for ms, seq, t, n, owner in codec.decode_pending(rec[2], rec[1])]}
    if kind == codec.FUNCTIONS:
        return {"type": "functions", "libraries": rec[1]}
    if kind == codec.IDMP:
        return {"type": "idmp", "duration": rec[1], "maxsize": rec[2], "iids_added": rec[3],
                "iids_duplicates": rec[4],
                "producers": {pid: [[flat[j], _id(flat[j + 1], flat[j + 2])]
                                    for j in range(0, len(flat), 3)]
                              for pid, flat in rec[5]}}
    if kind == codec.END:
        return {"type": "end", "keys": rec[1], "streams": rec[2], "entries": rec[3],
                "groups": rec[4], "pending": rec[5]}
    raise ValueError(f"unknown record type {kind}")
