"""The core: the data structures that hold what is stored - the radix tree, stream
storage (nodes, consumer groups, the PEL), stream IDs, the keyspace, the clock and
the memory accounting. It knows nothing of commands, replies, sockets or files."""
