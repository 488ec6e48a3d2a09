"""The keyevent notifications a server publishes for a list of commands, for the tests
that compare sluice-server's with redis-server 7.0's (tests/server/test_collection_events.py,
tests/commands/test_sorted_set_blocking.py)."""
from __future__ import annotations

import redis

END_KEY = b"end"


def keyevents(host: str, port: int, commands: list) -> list[tuple[bytes, bytes]]:
    """The (event, key) pairs of __keyevent@0__ that `commands` fire, in order, on the
    flushed server with notify-keyspace-events KEA; a SET of END_KEY after them marks
    the end (its ("set", END_KEY) is the last pair), so no wait guesses when they stop."""
    client = redis.Redis(host=host, port=port, protocol=2)
    client.response_callbacks.clear()       # any reply as it comes: none is parsed
    client.flushall()
    client.config_set("notify-keyspace-events", "KEA")
    listener = client.pubsub()
    listener.psubscribe("__keyevent@0__:*")
    listener.get_message(timeout=1)
    for cmd in commands:
        client.execute_command(*cmd)
    client.execute_command("SET", END_KEY, "x")
    seen = []
    while True:
        message = listener.get_message(timeout=2)
        assert message is not None, seen
        if message["type"] != "pmessage":
            continue
        seen.append((message["channel"].split(b":", 1)[1], message["data"]))
        if message["data"] == END_KEY:
            break
    listener.close()
    client.config_set("notify-keyspace-events", "")
    client.close()
    return seen
