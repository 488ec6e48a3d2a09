"""Errors of the persistence layer; each names the file and byte offset at fault."""
from __future__ import annotations

import os


class PersistError(Exception):
    """Base class: something on disk cannot be used as it is."""


class CorruptFileError(PersistError):
    """A file is damaged (bad checksum, malformed record, garbage, a cut in the
    middle). Loading refuses it rather than load something else."""

    def __init__(self, path: str | os.PathLike, offset: int, reason: str,
                 hint: str = "") -> None:
        self.path = os.fspath(path)
        self.offset = offset
        self.reason = reason
        self.hint = hint
        text = f"{self.path}: {reason} at offset {offset}"
        super().__init__(f"{text}. {hint}" if hint else text)


class TruncatedFileError(CorruptFileError):
    """The file ends in the middle of a record or command: the tail of a write cut
    short by a crash. `offset` is where the last complete one ends."""


class ForeignFileError(PersistError):
    """The file is of a known format that is not ours (a Redis RDB file): it is named
    for what it is rather than reported as damage, and nothing reads it."""

    def __init__(self, path: str | os.PathLike, message: str) -> None:
        self.path = os.fspath(path)
        super().__init__(message)


__all__ = ["PersistError", "CorruptFileError", "TruncatedFileError", "ForeignFileError"]
