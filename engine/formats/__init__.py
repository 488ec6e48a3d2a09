"""Redis's serialized forms of stored values, between the core that stores them and
the layers that move them (commands, persistence): the DUMP/RESTORE payload (the RDB
value encoding, its CRC-64 framing) and the commands that recreate a collection (the
AOF rewrite's). The core's value classes know none of these forms."""
