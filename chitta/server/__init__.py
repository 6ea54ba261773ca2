"""The daemon door: the wire protocol (:mod:`~chitta.server.protocol`), the method
table (:mod:`~chitta.server.methods`), the daemon (:mod:`~chitta.server.daemon`) and
its maintenance thread, the client handle ``connect()`` (:mod:`~chitta.server.client`)
and the socket helpers shared with the MCP host (:mod:`~chitta.server.sockets`).
Nothing is imported here: each process loads only the parts it uses."""
