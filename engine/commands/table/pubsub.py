"""The records of Redis's pubsub group: SUBSCRIBE & co., PUBLISH, PUBSUB."""
from __future__ import annotations

from engine.commands.table.record import Command, arg, cmd, family

PUBSUB_COMMANDS: list[Command] = family("pubsub",
    cmd("psubscribe", -2, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
        docs=("2.0.0", "Listens for messages published to channels that match one or more patterns."),
        complexity="O(N) where N is the number of patterns the client is already subscribed to.",
        arguments=(
            arg("pattern", "block", multiple=True, arguments=(
                arg("pattern", "pattern"),
            )),
        )),
    cmd("publish", 3, "pubsub loading stale fast may_replicate", layer="server",
        docs=("2.0.0", "Posts a message to a channel."),
        complexity="O(N+M) where N is the number of clients subscribed to the receiving channel and M is the total number of subscribed patterns (by any client).",
        arguments=(
            arg("channel", "string"),
            arg("message", "string"),
        )),
    cmd("pubsub", -2, layer="server",
        docs=("2.8.0", "A container for Pub/Sub commands."),
        complexity="Depends on subcommand.",
        subcommands=[
            cmd("channels", -2, "pubsub loading stale",
                docs=("2.8.0", "Returns the active channels."),
                complexity="O(N) where N is the number of active channels, and assuming constant time pattern matching (relatively short channels and patterns)",
                arguments=(
                    arg("pattern", "pattern", optional=True),
                )),
            cmd("numsub", -2, "pubsub loading stale",
                docs=("2.8.0", "Returns a count of subscribers to channels."),
                complexity="O(N) for the NUMSUB subcommand, where N is the number of requested channels",
                arguments=(
                    arg("channel", "string", optional=True, multiple=True),
                )),
            cmd("numpat", 2, "pubsub loading stale",
                docs=("2.8.0", "Returns a count of unique pattern subscriptions."),
                complexity="O(1)"),
            cmd("help", 2, "loading stale",
                docs=("6.2.0", "Returns helpful text about the different subcommands."),
                complexity="O(1)")]),
    cmd("punsubscribe", -1, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
        docs=("2.0.0", "Stops listening to messages published to channels that match one or more patterns."),
        complexity="O(N+M) where N is the number of patterns the client is already subscribed and M is the number of total patterns subscribed in the system (by any client).",
        arguments=(
            arg("pattern", "pattern", optional=True, multiple=True),
        )),
    cmd("subscribe", -2, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
        docs=("2.0.0", "Listens for messages published to channels."),
        complexity="O(N) where N is the number of channels to subscribe to.",
        arguments=(
            arg("channel", "string", multiple=True),
        )),
    cmd("unsubscribe", -1, "pubsub noscript loading stale", layer="server", pubsub_ok=True,
        docs=("2.0.0", "Stops listening to messages posted to channels."),
        complexity="O(N) where N is the number of clients already subscribed to a channel.",
        arguments=(
            arg("channel", "string", optional=True, multiple=True),
        )))
