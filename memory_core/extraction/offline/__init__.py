"""The offline extractor: a person's statements (`utterances`) turned into third-person facts by rules
(`heuristics`), what a statement is about and when one replaces another (`statements`), and the user-context
summaries written from facts (`fact_summaries`).

May import `text` and `facts` only: pure rules, no I/O.
"""
