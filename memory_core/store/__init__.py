"""The store layer: the only place that opens sessions or writes SQL; with it the actor recorded with every change
(`actors`) and the paths a scope's documents may take (`document_paths`), which the stores enforce.

May import `facts`, `text`, `scope`, `clock`, `settings` and `errors`; every package above asks it, it asks none.
"""
