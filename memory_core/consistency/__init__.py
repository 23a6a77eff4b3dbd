"""One truth acted on: rewriting what states a retired fact when facts retire (`propagation`; the rule that says
which sentences do is `text.truth`), the consistency report (`doctor`) and erasing what must be gone (`erase`: a plan carried out
by a journal, with tombstones; `erase_match`: its own rule for a passage that states a statement).

May import `facts`, `store`, `text`, `tiers` and `search`; never a view, the facade or the runtime.
"""
