"""The command layer: one module per command family, their records in one table.

Importing this package binds the engine's handlers to their records (see table/);
SAVE & co. are bound by engine/api/persistence_commands.py."""
from engine.commands import table  # noqa: F401  (the registry itself)
from engine.commands import streams, groups, reads, xinfo, keys, key_copy, strings, string_edits, connection, idmp, dump  # noqa: F401
from engine.commands import references  # noqa: F401
from engine.commands import lists, hashes, sets  # noqa: F401
from engine.commands import sorted_sets  # noqa: F401
from engine.commands import sort  # noqa: F401
from engine.commands import memory_report  # noqa: F401
