"""The MCP door: the tool table (:mod:`~chitta.mcp.tools`, from the method table),
the stdio server on the official SDK (:mod:`~chitta.mcp.server`), the warm host and
its forwarder (:mod:`~chitta.mcp.host`, :mod:`~chitta.mcp.forward`) and streamable
HTTP (:mod:`~chitta.mcp.http`). Nothing is imported here (``chitta mcp`` starts fast)."""
