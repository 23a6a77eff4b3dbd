"""The `memory-core` command line: `main.py` parses and routes, one module per group of subcommands.

May import the facade (`memory_core.memory`), `settings`, and the packages below it; nothing imports `cli`. A command
holds a view of one scope (`memory.scoped(...)`) or the admin handle for what spans scopes (`memory.admin`), never
the facade's parts (`memory.facts`, `memory.queue`, ...).
"""
