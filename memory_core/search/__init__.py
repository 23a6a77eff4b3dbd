"""Hybrid search over facts, daily logs and MEMORY.md."""
