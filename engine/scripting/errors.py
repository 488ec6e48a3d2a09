"""Redis's texts for errors raised while a script runs."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.core.errors import ArityError, ResponseError

class LuaRaise(Exception):
    """Raised by a Python function a script called: the sandbox turns it into the Lua error
    `value` (a message string as C libraries raise, or the {err=...} table of redis.call)."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.value = value


UNKNOWN_COMMAND = "ERR Unknown Redis command called from script"
WRONG_ARITY = "ERR Wrong number of args calling Redis command from script"


@dataclass(frozen=True)
class ScriptFailure:
    """What the sandbox's error handler found: the message and where the script stopped."""

    message: str
    source: str | None = None
    line: int | None = None

    @classmethod
    def from_lua(cls, err: Any) -> "ScriptFailure":
        def text(value: Any) -> str | None:
            return value.decode("utf-8", "surrogateescape") if type(value) is bytes else None
        if type(err) is bytes:         # a handler never run ("not enough memory")
            return cls("ERR " + text(err))
        line = err[b"line"]
        return cls(text(err[b"err"]) or "ERR unknown error", text(err[b"source"]),
                   int(line) if line is not None else None)


def script_error_text(failure: ScriptFailure, name: str) -> str:
    """The error reply of a script that failed: the message, then which script and where
    (`name` is the script's sha, or the function's name for FCALL)."""
    if failure.source is not None and failure.line is not None:
        return f"{failure.message} script: {name}, on {failure.source}:{failure.line}."
    return f"{failure.message} script: {name}"


def call_error_text(err: ResponseError) -> str:
    """A command's error as redis.call reports it: Redis checks the command's existence and
    arity itself before running it from a script, in words of its own (a command that
    counts its own arguments, as HSET its pairs, keeps its text)."""
    text = str(err)
    if text.startswith(("ERR unknown command '", "ERR unknown subcommand '")):
        return UNKNOWN_COMMAND
    if isinstance(err, ArityError):
        return WRONG_ARITY
    return text
