"""Who may do what and what it costs: roles (`roles`), grants, tokens and anonymous visitors (`access`) and
the usage ledger with its daily token budget (`usage`).

May import `store` and `text`; the views and the MCP server ask it, it asks nobody above it.
"""
