"""One truth: which stored sentences state a retired fact (`truth`), rewriting them when facts retire
(`propagation`), the consistency report (`doctor`) and erasing what must be gone (`erase`: a plan carried out
by a journal, with tombstones; `erase_match`: its own rule for a passage that states a statement).

May import `facts`, `store`, `text`, `tiers` and `search`; never a view, the facade or the runtime.
"""
