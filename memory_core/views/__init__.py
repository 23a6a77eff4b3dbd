"""The scoped view: the memory of one scope as a capability (`scoped`), and its facts, daily logs, queue and
plans bound to that scope and role (`subviews`). The home of per-scope behaviour.

May import every part below it; never the facade, `cli`, `mcp` or `dashboard`.
"""
