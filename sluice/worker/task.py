"""What a handler is given: the entry's own fields, apart from the library's."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional


def text(value: Any) -> str:
    """A reply value as str, whether the client decodes replies or not."""
    return value.decode() if isinstance(value, bytes) else str(value)


@dataclass(frozen=True)
class Task:
    id: str                      # this entry's ID
    fields: dict                 # the task's fields, as the client returned them
    retry_count: int             # how often it was requeued before (0 the first time)
    original_id: str             # the ID it was first added with
    last_error: Optional[str]    # why the last attempt did not finish, once requeued

    @classmethod
    def from_entry(cls, entry_id: Any, raw: Mapping[Any, Any], prefix: str) -> "Task":
        own: dict = {}
        library: dict[str, str] = {}
        for name, value in raw.items():
            key = text(name)
            if key.startswith(prefix) and key[len(prefix):] in ("retry_count", "original_id", "last_error"):
                library[key[len(prefix):]] = text(value)
            else:
                own[name] = value
        entry = text(entry_id)
        return cls(entry, own, int(library.get("retry_count", 0)),
                   library.get("original_id", entry), library.get("last_error"))
