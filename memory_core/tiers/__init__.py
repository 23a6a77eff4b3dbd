"""The three tiers: context (in memory), daily (Markdown logs), core (MEMORY.md); beside them the episodes, every
conversation taken in as it was said, dated (`episodes`)."""
