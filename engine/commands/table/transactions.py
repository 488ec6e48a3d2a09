"""The records of Redis's transactions group: MULTI, EXEC, DISCARD, WATCH, UNWATCH."""
from __future__ import annotations

from engine.commands.table.record import Command, arg, cmd, family, ks

TRANSACTION_COMMANDS: list[Command] = family("transactions",
    cmd("discard", 1, "noscript loading stale fast allow_busy", layer="session", immediate=True,
        acl_categories="transaction",
        docs=("2.0.0", "Discards a transaction."),
        complexity="O(N), when N is the number of queued commands"),
    cmd("exec", 1, "noscript loading stale skip_slowlog",
        layer="session", immediate=True, aborts_exec=True,
        acl_categories="transaction",
        docs=("1.2.0", "Executes all commands in a transaction."),
        complexity="Depends on commands in the transaction"),
    cmd("multi", 1, "noscript loading stale fast allow_busy", layer="session", immediate=True,
        acl_categories="transaction",
        docs=("1.2.0", "Starts a transaction."),
        complexity="O(1)"),
    cmd("unwatch", 1, "noscript loading stale fast allow_busy", layer="session",
        acl_categories="transaction",
        docs=("2.2.0", "Forgets about watched keys of a transaction."),
        complexity="O(1)"),
    cmd("watch", -2, "noscript loading stale fast allow_busy", layer="session", immediate=True,
        acl_categories="transaction",
        key_specs=(ks("RO", index=1, range=(-1, 1, 0)),),
        docs=("2.2.0", "Monitors changes to keys to determine the execution of a transaction."),
        complexity="O(1) for every key.",
        arguments=(
            arg("key", "key", key_spec_index=0, multiple=True),
        )))
