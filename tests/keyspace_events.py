"""The keyspace notifications a server publishes for a list of commands, for the tests
that compare sluice-server's with redis-server 7.0's (tests/server/test_collection_events.py,
tests/server/test_new_key_events.py, tests/commands/test_sorted_set_blocking.py)."""
from __future__ import annotations

import redis

END_KEY = b"end"


def notifications(host: str, port: int, commands: list, classes: str = "KEA",
                  pattern: str = "__keyevent@0__:*", db: int = 0) -> list[tuple[bytes, bytes]]:
    """The (channel, message) pairs matching `pattern` that `commands` fire, in order, on
    the flushed server with notify-keyspace-events `classes`, the commands run in
    database `db`; a SET of END_KEY after them, with the classes KEA, marks the end (its
    keyevent is the last pair), so no wait guesses when they stop."""
    client = redis.Redis(host=host, port=port, protocol=2, db=db)
    client.response_callbacks.clear()       # any reply as it comes: none is parsed
    client.flushall()
    client.config_set("notify-keyspace-events", classes)
    listener = client.pubsub()
    listener.psubscribe(pattern)
    listener.get_message(timeout=1)
    for cmd in commands:
        try:
            client.execute_command(*cmd)
        except redis.ResponseError:
            pass                            # an error fires nothing; the oracle's too
    client.config_set("notify-keyspace-events", "KEA")     # the end's events, whatever `classes`
    client.execute_command("SET", END_KEY, "x")
    seen = []
    while True:
        message = listener.get_message(timeout=2)
        assert message is not None, seen
        if message["type"] != "pmessage":
            continue
        seen.append((message["channel"], message["data"]))
        if message["channel"] == b"__keyevent@%d__:set" % db and message["data"] == END_KEY:
            break
    listener.close()
    client.config_set("notify-keyspace-events", "")
    client.close()
    return seen


def keyevents(host: str, port: int, commands: list) -> list[tuple[bytes, bytes]]:
    """The (event, key) pairs of __keyevent@0__ that `commands` fire, in order, on the
    flushed server with notify-keyspace-events KEA (the last is ("set", END_KEY))."""
    return [(channel.split(b":", 1)[1], key)
            for channel, key in notifications(host, port, commands)]
