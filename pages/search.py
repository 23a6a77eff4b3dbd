"""Search: hybrid keyword + vector search over facts, daily logs and MEMORY.md."""

import pandas as pd
import streamlit as st

from memory_core.dashboard.helpers import ensure_entrypoint, header, escape_markdown, view
from memory_core.search.explain import why

ensure_entrypoint()
memory = view()
header("Search", memory)
c1, c2, c3 = st.columns([4, 1, 1])
query = c1.text_input("Query", key="search_q", placeholder="What does the user do on weekends?", max_chars=2000)
k = c2.number_input("Results", 1, 50, 10, key="search_k")
mode = c3.selectbox("Mode", ["hybrid", "keyword", "vector"], key="search_mode")
if query.strip():
    # One hit per statement (search dedups); a hit that shares no word with the query matched on its vector
    # alone (memory_core.search.explain): shown apart, and a search with only those says "no good match".
    hits = [h for h in memory.search(query, k=int(k), mode=mode) if h.score > 0]
    reasons = {id(h): why(query, h.text) for h in hits}
    good = [h for h in hits if reasons[id(h)].good]
    weak = [h for h in hits if not reasons[id(h)].good]
    if not hits:
        st.info("Nothing found. Try other words, or the vector mode for meaning rather than wording.")
    elif not good:
        st.warning(f"No good match for “{escape_markdown(query)}”: no hit says any word of the query. The "
                   f"closest {len(weak)} by vector are below, for what they are worth.", icon=":material/search_off:")
    table = pd.DataFrame([{"score": h.score, "why": reasons[id(h)].words(), "kind": h.kind, "text": h.text,
                           "ref": h.ref, "source": h.source} for h in good], columns=["score", "why", "kind", "text",
                                                                                       "ref", "source"])
    if good:
        st.dataframe(table, hide_index=True, width="stretch",
                     column_config={"ref": st.column_config.TextColumn("ref", help="fact id or document lines")})
    if weak:
        with st.expander(f"Weak matches: {len(weak)} similar by vector only", expanded=not good):
            st.dataframe(pd.DataFrame([{"score": h.score, "kind": h.kind, "text": h.text} for h in weak]),
                         hide_index=True, width="stretch")
    st.caption(memory.search_info())
    for h in good[:5]:
        with st.expander(f"{h.kind} · {h.score:.4f} · {reasons[id(h)].words()}"):
            st.text(h.text)  # memory text is shown as text: nothing in it is rendered
            if h.kind == "daily" and h.source:
                st.page_link("pages/daily.py", label=f"Open {h.ref} on the Daily page", icon=":material/open_in_new:",
                             query_params={"day": h.source[len("memory/"):-len(".md")]})
            elif h.kind == "core":
                st.page_link("pages/dream.py", label=f"Open {h.ref} on the Dream page", icon=":material/open_in_new:")
            elif h.kind == "fact":
                st.page_link("pages/facts.py", label=f"Open this fact on the Facts page (source {escape_markdown(h.source or '-')})", icon=":material/open_in_new:",
                             query_params={"scope": memory.scope.key, "fact": h.ref})
