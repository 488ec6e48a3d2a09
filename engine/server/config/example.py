"""The example configuration file (`sluice.conf` at the repository's root), written from
the directive table so that it lists every directive with its default and cannot drift
from it: `python -m engine.server.config.example > sluice.conf`."""
from __future__ import annotations

import textwrap

from engine.server.config.directives import DIRECTIVES, Directive
from engine.server.config.version import PROGRAM_NAME

HEADER = f"""\
# {PROGRAM_NAME} configuration: every directive, set to its default.
#
# Start the server with it:   {PROGRAM_NAME} sluice.conf
# Arguments after the file override it:   {PROGRAM_NAME} sluice.conf --port 7000
# CONFIG SET changes a mutable directive at run time; CONFIG REWRITE writes the running
# values back into this file, keeping its comments.
#
# Sizes take units: 1k = 1000, 1kb = 1024, 1m, 1mb, 1g, 1gb.
"""


def directive_lines(d: Directive) -> list[str]:
    """`name value` lines that set d to its default (several for kinds such as `save`)."""
    if callable(d.default):             # dir: where the server was started
        return [f"{d.name} ./"]
    lines = [line.decode() for line, _ in d.kind.rewrite(d.name, d.default, d.default) or []]
    return lines or [f"{d.name} {d.kind.format(d.default).decode() or chr(34) * 2}"]


def example_config() -> str:
    parts = [HEADER]
    for d in DIRECTIVES:
        doc = d.doc + (f" (Also accepted as: {', '.join(d.aliases)}.)" if d.aliases else "")
        if callable(d.default):
            doc += " Default: the directory the server starts in."
        comment = textwrap.fill(doc, width=88, initial_indent="# ", subsequent_indent="# ")
        parts.append(comment + "\n" + "\n".join(directive_lines(d)) + "\n")
    return "\n".join(parts)


if __name__ == "__main__":
    print(example_config(), end="")
