"""The views: the memory of one scope as a capability (`scoped`), its facts, daily logs, queue, plans and import
ledger bound to that scope and role (`subviews`), the admin handle for what spans scopes (`admin`), and the
`Parts` they are made from (`parts`). The home of per-scope behaviour; the per-scope API of every client.

May import every part below it; never the facade, the composition root, `portability`, `cli`, `mcp` or
`dashboard`.
"""
