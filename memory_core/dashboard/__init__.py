"""Streamlit helpers for the pages (`helpers`: sign-in gates, sandboxes, the scope picker, uploads), what pages
read once per state of a scope (`cached`, `preview`), the Facts page's parts and the demo conversation (`demo`).
The only package that imports Streamlit; the library never imports it.

May import the facade, views, `context` (the injection report's types), `policy` and `text`; only `pages/` and
`streamlit_app.py` import it.
"""
