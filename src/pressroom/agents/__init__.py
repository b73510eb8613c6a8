"""The MCP server: AI assistants drive Pressroom through the public API, never around it.

It is a client of the API with the caller's own key (over HTTP for `pressroom mcp --url`, or
in-process for the transport mounted at `/mcp`), so scopes, roles, rate limits and the audit
ledger apply unchanged. Its tools are generated from the OpenAPI document (`tools.py`); a write
acts only on a second call carrying the confirmation token the first call answered with
(`confirmation.py`), under an Idempotency-Key derived from that token. The package is named
`agents`, not `mcp`, so nothing could ever shadow the SDK."""
