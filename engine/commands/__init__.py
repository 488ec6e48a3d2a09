"""The command layer: one module per command family, registered in one table.

Importing this package registers every command (see table.py)."""
from engine.commands import table  # noqa: F401  (the registry itself)
from engine.commands import streams, groups, reads, xinfo, keys, strings, connection  # noqa: F401
from engine.commands import persistence  # noqa: F401
