"""How a configuration value or line is refused: the reason for CONFIG SET, the fatal start-up
report (where the line came from, Redis's shape) and a listener's veto.  Shared by every part of
the configuration, so it sits apart from all of them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from engine.server.config.version import PROGRAM_NAME, VERSION


class ConfigValueError(ValueError):
    """A directive's value was refused; str() is Redis's reason text (no prefix)."""


class ConfigApplyError(Exception):
    """Raised by a change listener to veto a CONFIG SET; str() becomes the reason text."""


@dataclass(frozen=True)
class Origin:
    """Where a configuration line came from."""

    kind: str                 # "file", "stdin", "args" or "string"
    name: Optional[str]       # the file path, or the command-line argument that started the line
    line: int = 0             # 1-based line number inside the file / stdin / string

    def describe(self) -> str:
        if self.kind == "file":
            return f"Reading the configuration file '{self.name}', at line {self.line}"
        if self.kind == "stdin":
            return f"Reading the configuration from stdin, at line {self.line}"
        if self.kind == "args":
            return f"Reading the command line, at argument '{self.name}'"
        return f"Reading the configuration, at line {self.line}"


class ConfigError(Exception):
    """A fatal start-up configuration error.

    ``report()`` is the text to print on stderr before exiting with status 1; it has the shape of
    redis-server's report (blank line, ``*** FATAL CONFIG FILE ERROR (...) ***``, where, ``>>>
    'line'``, reason).  ``reason`` is Redis's reason text, ``origin``/``text`` say where.
    """

    def __init__(self, reason: str, origin: Optional[Origin] = None,
                 text: Optional[bytes] = None, *, fatal_header: bool = True) -> None:
        self.reason = reason
        self.origin = origin
        self.text = text
        self.fatal_header = fatal_header
        super().__init__(self._one_line())

    def _one_line(self) -> str:
        where = ""
        if self.origin is not None:
            if self.origin.kind == "args":
                where = f"command line ({self.origin.name}): "
            else:
                where = f"{self.origin.name or self.origin.kind}:{self.origin.line}: "
        shown = f" >>> '{_show(self.text)}'" if self.text is not None else ""
        return f"{where}{self.reason}{shown}"

    def report(self) -> str:
        if not self.fatal_header:
            return self.reason + "\n"
        out = ["", f"*** FATAL CONFIG FILE ERROR ({PROGRAM_NAME} {VERSION}) ***"]
        if self.origin is not None:
            out.append(self.origin.describe())
            out.append(f">>> '{_show(self.text or b'')}'")
        out.append(self.reason)
        return "\n".join(out) + "\n"


def _show(b: Optional[bytes]) -> str:
    return (b or b"").decode("utf-8", "backslashreplace")

