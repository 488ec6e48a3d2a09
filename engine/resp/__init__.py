"""RESP: reply values (Status, OK, null arrays), the C buffer that encodes replies,
the protocol codec (request parser and reply writer) and the small parsing helpers
every layer above shares. It knows nothing of commands, sessions or sockets."""
