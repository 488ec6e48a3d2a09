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

    def keys(self, argv: list) -> list:
        """The key arguments of argv (COMMAND GETKEYS, the AOF tool)."""
        return key_arguments(argv, self.first_key, self.last_key, self.step,
                             KEYWORD_KEYS.get(self.full_name))


COMMANDS: dict[bytes, CommandSpec] = {}

# Commands whose keys follow a keyword (movablekeys): name -> the keyword.
KEYWORD_KEYS = {"xread": "STREAMS", "xreadgroup": "STREAMS"}


def key_arguments(argv: list, first: int, last: int, step: int,
                  keyword: Optional[str] = None) -> list:
    """The keys of argv by key positions (first, last, step), or, for a `keyword`
    command, the first half of the arguments after the keyword (XREAD's keys, then
    its IDs)."""
    if keyword is not None:
        word = keyword.encode()
        for i in range(1, len(argv)):
            if argv[i].upper() == word:
                rest = argv[i + 1:]
                return rest[:len(rest) // 2]
        return []
    if not first or len(argv) <= first:
        return []
    end = last if last >= 0 else len(argv) + last
    return argv[first:end + 1:step or 1]


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
