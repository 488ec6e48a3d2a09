"""Redis 7's multi-part AOF manifest: which base and incremental files make up the
log, in order.

One line per file, `file <name> seq <n> type <b|i|h>` (base, incremental, history:
waiting to be deleted), names quoted when they hold spaces or odd bytes, `#` lines
ignored. Files are named `<appendfilename>.<seq>.base.<ext>` and
`<appendfilename>.<seq>.incr.aof`. The manifest is replaced atomically (temporary
file, fsync, rename, directory fsync), so a crash leaves either the old or the new
list, and every file the surviving one names is still on disk.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from engine.resp.args import repr_arg, split_args
from persist.errors import CorruptFileError

MAX_LINE = 1024
KINDS = ("b", "i", "h")


@dataclass
class AofFile:
    name: str
    seq: int
    kind: str          # "b" base, "i" incremental, "h" history


@dataclass
class Manifest:
    base: Optional[AofFile] = None
    incrs: list = field(default_factory=list)
    history: list = field(default_factory=list)

    @property
    def last_incr_seq(self) -> int:
        return self.incrs[-1].seq if self.incrs else 0

    def files(self) -> list:
        """Base first, then the incremental files in order: the replay order."""
        return ([self.base] if self.base else []) + list(self.incrs)

    # -- text form ---------------------------------------------------------------------

    @classmethod
    def parse(cls, data: bytes, path: str = "") -> "Manifest":
        """Reads a manifest; CorruptFileError (with the line's offset) if malformed."""
        manifest = cls()
        offset = 0
        for raw in data.splitlines(keepends=True):
            start, offset = offset, offset + len(raw)
            line = raw.rstrip(b"\r\n")
            if len(raw) > MAX_LINE:
                raise CorruptFileError(path, start, "manifest line too long")
            if not line.strip() or line.startswith(b"#"):
                continue
            words = split_args(line)
            if words is None or len(words) % 2:
                raise CorruptFileError(path, start, "invalid manifest line")
            fields = dict(zip(words[::2], words[1::2]))
            try:
                name = fields[b"file"].decode("utf-8", "surrogateescape")
                seq = int(fields[b"seq"])
                kind = fields[b"type"].decode()
            except (KeyError, ValueError):
                raise CorruptFileError(path, start, "invalid manifest line") from None
            if kind not in KINDS or seq < 0 or "/" in name or name in ("", ".", ".."):
                raise CorruptFileError(path, start, "invalid manifest line")
            entry = AofFile(name, seq, kind)
            if kind == "b":
                if manifest.base is not None:
                    raise CorruptFileError(path, start, "manifest names two base files")
                manifest.base = entry
            elif kind == "i":
                if manifest.incrs and seq <= manifest.incrs[-1].seq:
                    raise CorruptFileError(path, start,
                                           "manifest sequence numbers not increasing")
                manifest.incrs.append(entry)
            else:
                manifest.history.append(entry)
        if not data.endswith(b"\n") and data:
            raise CorruptFileError(path, offset, "manifest does not end with a newline")
        return manifest

    def render(self) -> bytes:
        lines = [b"file %s seq %d type %s\n" % (quote(f.name), f.seq, f.kind.encode())
                 for f in ([self.base] if self.base else []) + self.history + self.incrs]
        return b"".join(lines)


def quote(name: str) -> bytes:
    """The name as a manifest word: bare when plain, else sdscatrepr-quoted."""
    raw = name.encode("utf-8", "surrogateescape")
    if raw and all(0x21 <= b <= 0x7E and b not in b'"\\\'' for b in raw):
        return raw
    return repr_arg(raw)


__all__ = ["AofFile", "Manifest", "quote"]
