"""Streamlit helpers for the pages (`helpers`: sign-in gates, sandboxes, the scope picker, uploads) and the demo
conversation (`demo`). The only package that imports Streamlit; the library never imports it.

May import the facade, views, `policy` and `text`; only `pages/` and `streamlit_app.py` import it.
"""
