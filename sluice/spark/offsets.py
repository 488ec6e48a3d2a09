"""Entry IDs and the offset options of the `sluice` format.

Conventions (those of XREAD and XRANGE, which a Redis user already knows):
- a streaming offset is the last ID read per stream, with the stream's entries-added count
  at that entry: `{"events": {"id": "1700000000000-3", "added": 42}}`;
- `startingOffsets` is exclusive like XREAD's ID: reading starts after it (`"0-0"` or
  `"earliest"` reads from the first entry);
- `endingOffsets` is inclusive like XRANGE's end: the entry with that ID is read.
So a range ending at X and the next one starting at X neither overlap nor leave a gap.
Per stream, the JSON accepts an ID, the words "earliest"/"latest", or Kafka's -2/-1."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import Dict, Iterable, Mapping, Optional, Union

from sluice.spark.options import OptionError

MAX_PART = 2 ** 64 - 1
_ID_PATTERN = re.compile(r"([0-9]+)(?:-([0-9]+))?")


@dataclass(frozen=True, order=True)
class EntryId:
    """A stream entry ID: milliseconds and a sequence number, both unsigned 64-bit."""

    ms: int
    seq: int

    @classmethod
    def parse(cls, text: Union[str, bytes], where: str) -> "EntryId":
        """`ms-seq` or `ms` (sequence 0); `where` names the option or key for the error."""
        if isinstance(text, bytes):
            text = text.decode("ascii", "replace")
        match = _ID_PATTERN.fullmatch(text)
        ms, seq = (int(match[1]), int(match[2] or 0)) if match else (-1, -1)
        if not (0 <= ms <= MAX_PART and 0 <= seq <= MAX_PART):
            raise OptionError(f"{where} is not a valid stream entry ID (ms-seq, e.g. 1700000000000-0): {text!r}")
        return cls(ms, seq)

    def __str__(self) -> str:
        return f"{self.ms}-{self.seq}"

    def following(self) -> Optional["EntryId"]:
        """The smallest ID after this one, None after the largest possible ID."""
        if self.seq < MAX_PART:
            return EntryId(self.ms, self.seq + 1)
        if self.ms < MAX_PART:
            return EntryId(self.ms + 1, 0)
        return None


ZERO_ID = EntryId(0, 0)
EARLIEST = "earliest"
LATEST = "latest"
# A position is a word (earliest, latest) or the ID the position stands on.
Position = Union[str, EntryId]
_KAFKA_WORDS = {-2: EARLIEST, -1: LATEST}


def _position(value: object, where: str, words: Iterable[str]) -> Position:
    """One stream's position from JSON: an ID string, one of `words`, or Kafka's -2/-1."""
    allowed = tuple(words)
    word = _KAFKA_WORDS.get(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(word, str) and word.lower() in allowed:
        return word.lower()
    if isinstance(word, str) and word.lower() not in (EARLIEST, LATEST):
        return EntryId.parse(word, where)
    accepted = " or ".join([f'"{w}"' for w in allowed] + ["an ID string"])
    raise OptionError(f"{where} must be {accepted}, not {json.dumps(value)}")


@dataclass(frozen=True)
class OffsetSpec:
    """A parsed startingOffsets/endingOffsets: a word for every stream, or per stream."""

    default: Position
    per_stream: Mapping[str, Position]

    def position(self, stream: str) -> Position:
        return self.per_stream.get(stream, self.default)

    def check_streams(self, option: str, streams: Optional[Iterable[str]], pattern: Optional[str]) -> None:
        """Refuses offsets for streams the query does not read."""
        listed = set(streams) if streams is not None else None
        for stream in self.per_stream:
            if listed is not None and stream not in listed:
                raise OptionError(f"option {option} names stream {stream!r}, which is not in option streams")
            if pattern is not None and not fnmatchcase(stream, pattern):
                raise OptionError(f"option {option} names stream {stream!r}, which does not match "
                                  f"option streamPattern {pattern!r}")


def offset_spec(option: str, text: Optional[str], default: str, words: Iterable[str]) -> OffsetSpec:
    """Parses an offsets option: one of `words`, or a JSON object of stream -> position.
    Streams the JSON leaves out take `default` (needed with streamPattern, whose streams
    appear over time)."""
    allowed = tuple(words)
    if text is None:
        return OffsetSpec(default, {})
    if text.lower() in allowed:
        return OffsetSpec(text.lower(), {})
    try:
        parsed = json.loads(text)
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        shown = " or ".join(f'"{w}"' for w in allowed)
        raise OptionError(f'option {option} must be {shown} or a JSON object like {{"stream": "0-0"}}, '
                          f"not {text!r}")
    per_stream = {str(stream): _position(value, f"option {option} for stream {stream!r}", allowed)
                  for stream, value in parsed.items()}
    return OffsetSpec(default, per_stream)


@dataclass(frozen=True)
class StreamOffset:
    """Where a streaming query stands in one stream: the last ID read and, when known, the
    stream's entries-added count at that entry (how many entries it had received up to
    it). The count is what tells entries trimmed before they were read apart from IDs
    that were simply never used, and it is the ENTRIESREAD of the commit group."""

    last: EntryId
    added: Optional[int] = None


def offsets_json(offsets: Mapping[str, StreamOffset]) -> Dict[str, Dict[str, object]]:
    """A streaming offset as Spark stores it: {stream: {"id": last ID read, "added": n}}."""
    return {stream: {"id": str(offset.last), **({"added": offset.added} if offset.added is not None else {})}
            for stream, offset in sorted(offsets.items())}


def parse_offsets(offset: Mapping[str, object], where: str) -> Dict[str, StreamOffset]:
    """A streaming offset back from Spark (e.g. from a checkpoint); a bare ID string per
    stream is taken too."""
    if not isinstance(offset, Mapping):
        raise OptionError(f"{where} must be a JSON object of stream -> offset, not {offset!r}")
    parsed: Dict[str, StreamOffset] = {}
    for stream, value in offset.items():
        here = f"{where} for stream {stream!r}"
        if isinstance(value, Mapping):
            added = value.get("added")
            if added is not None and (not isinstance(added, int) or isinstance(added, bool) or added < 0):
                raise OptionError(f"{here} has an invalid entries-added count: {added!r}")
            parsed[str(stream)] = StreamOffset(EntryId.parse(str(value.get("id")), here), added)
        else:
            parsed[str(stream)] = StreamOffset(EntryId.parse(str(value), here))
    return parsed
