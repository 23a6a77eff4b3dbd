"""Facts: the value type and the `memory.facts` API (`api`), and near-duplicate detection (`duplicates`).

May import `store`, `text`, `store.actors` and the shared `scope`, `clock`, `errors`, `settings`.
"""
