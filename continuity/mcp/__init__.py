"""The MCP transport: the continuity protocol over Streamable HTTP at /mcp."""
