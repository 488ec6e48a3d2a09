"""The network side of Sluice: the RESP codec (engine.server.resp) and the server."""
