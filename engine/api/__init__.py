"""The embedded API: the `Engine` (keyspace + command layer + persistence), client
sessions (MULTI, WATCH, AUTH, blocked reads) and the redis-py compatible
`EmbeddedRedis`. It knows nothing of sockets."""
from engine.api import functions  # noqa: F401  (binds FUNCTION's subcommands)
from engine.api import persistence_commands  # noqa: F401  (binds SAVE, BGSAVE, ...)
