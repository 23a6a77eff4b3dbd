"""From a conversation to facts: the candidates an extractor hands on (`candidates`), the LLM extractor
(`llm`), lenient reading of small models' replies (`lenient`), applying one update's reply (`updating`) and,
in `offline/`, the heuristic extractor used without an LLM.

May import `facts`, `text`, `llm`, `store` and `consistency`; never a view or the facade.
"""
