"""What a script's commands run with: the calling client's database and the server's
current stream node limits (one command context serves every script, so it must follow
CONFIG SET), compared with redis-server 7.0."""
from __future__ import annotations

import redis

from servers import SluiceServer

FILL = ("for i = 1, tonumber(ARGV[1]) do redis.call('XADD', KEYS[1], i .. '-1', 'f', 'v') end; "
        "return redis.call('XINFO', 'STREAM', KEYS[1])")


def nodes_after_fill(r: redis.Redis) -> list:
    """radix-tree-keys of streams filled by scripts under changing node limits, in db 0
    and db 2."""
    out = []
    r.flushall()
    for entries in ("2", "5", "100"):
        r.config_set("stream-node-max-entries", entries)
        for db in (0, 2):
            r.execute_command("SELECT", db)
            info = r.eval(FILL, 1, "s" + entries, 10)
            out.append((db, entries, dict(zip(info[::2], info[1::2]))[b"radix-tree-keys"]))
    r.execute_command("SELECT", 0)
    r.config_set("stream-node-max-entries", "100")
    return out


def test_scripts_follow_config_set_of_stream_node_limits(redis_server):
    with SluiceServer(["--save", ""]) as sluice:
        ours = redis.Redis(port=sluice.port, single_connection_client=True)
        theirs = redis.Redis(port=redis_server[1], single_connection_client=True)
        try:
            assert nodes_after_fill(ours) == nodes_after_fill(theirs)
            assert [n for _, _, n in nodes_after_fill(ours)] == [5, 5, 2, 2, 1, 1]
        finally:
            ours.close()
            theirs.close()
