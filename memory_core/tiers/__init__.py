"""The three tiers: context (in memory), daily (Markdown logs), core (MEMORY.md)."""
