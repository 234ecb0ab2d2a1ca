"""The console's MCP endpoint for clients: one URL, both protocol eras, every call held for approval."""
