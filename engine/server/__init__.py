"""The network side of Sluice: a RESP server any Redis client can use.

Modules: resp (the RESP codec, Cython), config (redis.conf / command line / CONFIG),
server (listeners, admission, cron, shutdown), connection (one client: the asyncio
Protocol and its command loop), commands (the server's session: INFO, CONFIG,
COMMAND, CLIENT, Pub/Sub), blocking (blocked XREAD/XREADGROUP, CLAIM timer), pubsub
(channels, patterns, keyspace notifications), info (stats, INFO), command_info
(COMMAND), main (the `sluice-server` entry point).
"""


def main(argv=None) -> int:
    """`sluice-server [config-file] [--directive value ...]` (see engine.server.main)."""
    from engine.server.main import main as _main
    return _main(argv)


__all__ = ["main"]
