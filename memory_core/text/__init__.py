"""Text before it is stored or shown: words and hashes (`words`), exact token counts (`tokens`), validation
(`validation`), credentials masked (`credentials`, its patterns in `credential_rules`), secrets kept out of errors
and logs (`redact`), chat messages (`messages`), and sentences with what they state (`truth`: sentence keys,
stems, provenance, whether a sentence states a retired fact).

The bottom layer: imports nothing of memory_core but `errors`.
"""
