"""The `memory-core` command line: `main.py` parses and routes, one module per group of subcommands.

May import the facade (`memory_core.memory`), `settings`, and the packages below it; nothing imports `cli`.
"""
