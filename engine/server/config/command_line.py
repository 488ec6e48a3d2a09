"""``sluice-server [config-file] [--directive value ...] [-]``: the command line taken apart the
way redis-server does it, into the config file to load, whether to read standard input and the
``--directive`` options as configuration lines, plus the usage text for --help.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from engine.resp.args import repr_arg, split_args
from engine.server.config.value_parsing import StrOrBytes, as_bytes, as_str
from engine.server.config.version import PROGRAM_NAME


@dataclass
class CommandLine:
    """``sluice-server [config-file] [--directive value ...] [-]`` taken apart like redis-server.

    action        "run", or "version" / "help" when the first argument asks for them
    config_file   the file named first (absolute path), or None
    from_stdin    "-" as the first or last argument: read configuration from standard input
    options       (config line, the argument that started it) for every --directive
    """

    action: str = "run"
    config_file: Optional[str] = None
    from_stdin: bool = False
    options: list[tuple[bytes, str]] = field(default_factory=list)


def parse_command_line(args: Sequence[StrOrBytes]) -> CommandLine:
    """Turn redis-server style arguments (without the program name) into config lines.

    ``--name`` starts a directive; the following words are its arguments (a word starting with
    ``--`` starts the next directive once the current one has at least one argument, so
    ``--requirepass --x`` sets the password "--x").  ``--save`` followed by another directive
    or nothing means ``save ""``.  ``--port 6380`` may also come as the single word
    "--port 6380".  Arguments are quoted with Redis's rules, so any byte survives.
    """
    words = [as_bytes(a) for a in args]
    shown = [a if isinstance(a, str) else as_str(a) for a in args]
    cl = CommandLine()
    if not words:
        return cl
    if words[0] in (b"-v", b"--version"):
        cl.action = "version"
        return cl
    if words[0] in (b"--help", b"-h"):
        cl.action = "help"
        return cl
    j = 0
    if not words[0].startswith(b"-"):
        cl.config_file = os.path.abspath(shown[0])
        j = 1
    n = len(words)
    current: Optional[bytearray] = None
    started_by = ""
    handled_last = True

    def finish() -> None:
        if current is not None:
            for part in bytes(current).split(b"\n"):
                cl.options.append((part, started_by))

    while j < n:
        word = words[j]
        if word == b"-" and (j == 0 or j == n - 1):
            cl.from_stdin = True
        elif handled_last and word.startswith(b"--"):
            finish()
            current = bytearray(word[2:] + b" ")
            started_by = shown[j]
            parts = split_args(word)
            if parts is not None and len(parts) == 1:
                handled_last = False
                is_save = word.lower() == b"--save"
                if is_save and j != n - 1 and words[j + 1].startswith(b"--"):
                    current += b'""'
                    handled_last = True
                elif is_save and j == n - 1:
                    current += b'""'
            else:
                handled_last = True
        else:
            if current is None:
                current = bytearray()
                started_by = shown[j]
            current += repr_arg(word) + b" "
            handled_last = True
        j += 1
    finish()
    return cl


def usage() -> str:
    p = PROGRAM_NAME
    return (f"Usage: ./{p} [/path/to/sluice.conf] [options] [-]\n"
            f"       ./{p} - (read config from stdin)\n"
            f"       ./{p} -v or --version\n"
            f"       ./{p} -h or --help\n\n"
            "Examples:\n"
            f"       ./{p} (run the server with default conf)\n"
            f"       ./{p} /etc/sluice/6379.conf\n"
            f"       ./{p} --port 7777\n"
            f"       ./{p} --save 900 1 300 10 --bind 127.0.0.1 ::1\n"
            f"       ./{p} /etc/mysluice.conf --loglevel verbose -\n"
            f"       ./{p} /etc/mysluice.conf --loglevel verbose\n")
