"""Search: hybrid keyword + vector search over facts, daily logs and MEMORY.md."""

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import ensure_entrypoint, header, escape_markdown, view

ensure_entrypoint()
memory = view()
header("Search", memory)
c1, c2, c3 = st.columns([4, 1, 1])
query = c1.text_input("Query", key="search_q", placeholder="What does the user do on weekends?", max_chars=2000)
k = c2.number_input("Results", 1, 50, 10, key="search_k")
mode = c3.selectbox("Mode", ["hybrid", "keyword", "vector"], key="search_mode")
if query.strip():
    # One hit per statement (search dedups); hits that share nothing with the query are filler, not answers.
    hits = [h for h in memory.search(query, k=int(k), mode=mode) if h.score > 0]
    if not hits:
        st.info("Nothing found. Try other words, or the vector mode for meaning rather than wording.")
    st.dataframe(pd.DataFrame([{"score": h.score, "kind": h.kind, "ref": h.ref, "text": h.text, "source": h.source}
                               for h in hits]), hide_index=True, width="stretch")
    st.caption(memory.search_info())
    for h in hits[:5]:
        with st.expander(f"{h.kind} · {h.ref} · {h.score:.4f}"):
            st.text(h.text)  # memory text is shown as text: nothing in it is rendered
            if h.kind == "daily" and h.source:
                st.page_link("pages/daily.py", label=f"Open {h.ref} on the Daily page", icon=":material/open_in_new:",
                             query_params={"day": h.source[len("memory/"):-len(".md")]})
            elif h.kind == "core":
                st.page_link("pages/dream.py", label=f"Open {h.ref} on the Dream page", icon=":material/open_in_new:")
            elif h.kind == "fact":
                st.page_link("pages/facts.py", label=f"Open the Facts page ({h.ref}, source {escape_markdown(h.source or '-')})",
                             icon=":material/open_in_new:", query_params={"q": h.text[:80]})
