"""Pure MCP protocol code: no Django import may appear in this package."""
