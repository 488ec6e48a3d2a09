"""The command table: name, arity, flags and key positions of every command.

Arity follows Redis: positive = exact argument count (command name included),
negative = at least that many. Key positions (first, last, step) are as in
Redis's command JSON files (last -1 = the last argument); COMMAND INFO, WATCH and
the blocking machinery read them from here.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Optional


@dataclass(slots=True)
class CommandSpec:
    name: str
    handler: Optional[Callable]
    arity: int
    flags: frozenset
    first_key: int = 0
    last_key: int = 0
    step: int = 0
    subcommands: Optional[dict] = field(default=None)
    container: Optional[str] = None

    @property
    def full_name(self) -> str:
        """The name error messages use: 'xgroup|create' for subcommands."""
        return f"{self.container}|{self.name}" if self.container else self.name


COMMANDS: dict[bytes, CommandSpec] = {}


def command(name: str, arity: int, flags: str = "", first_key: int = 0,
            last_key: int = 0, step: int = 0, container: Optional[str] = None):
    """Registers the decorated handler(ctx, argv) -> reply under `name`."""
    def register(handler: Callable) -> Callable:
        spec = CommandSpec(name, handler, arity, frozenset(flags.split()), first_key,
                           last_key, step, container=container)
        if container is None:
            COMMANDS[name.encode()] = spec
        else:
            parent = COMMANDS[container.encode()]
            parent.subcommands[name.encode()] = spec
        return handler
    return register


def container(name: str, flags: str = "") -> None:
    """Declares a command with subcommands (XGROUP, XINFO, CONFIG...)."""
    COMMANDS[name.encode()] = CommandSpec(name, None, -2, frozenset(flags.split()),
                                          subcommands={})
