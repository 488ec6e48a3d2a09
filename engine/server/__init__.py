"""The network side of Sluice: a RESP server any Redis client can use.

Modules: main (the `sluice-server` entry point), config/ (redis.conf, the command
line, CONFIG GET/SET), server (listeners, admission, cron, shutdown), connection (one
client: the asyncio Protocol), fastpath (its command loop, compiled: each command
through the one road, engine/api/road.pyx), session (the server's session: CLIENT, Pub/Sub, CONFIG, INFO, COMMAND...),
blocking (its hub: blocked clients wait on the event loop), busy (serving the other
clients while a script runs long), pubsub (channels, patterns, keyspace
notifications), info (stats, INFO), command_info (COMMAND).
"""


def main(argv=None) -> int:
    """`sluice-server [config-file] [--directive value ...]` (see engine.server.main)."""
    from engine.server.main import main as _main
    return _main(argv)


__all__ = ["main"]
