"""Pseudo-relevance feedback (search.embedders.with_feedback): hybrid search moves the query's vector toward its
nearest rows before ranking them; vector search alone does not."""

from __future__ import annotations

import numpy as np

from memory_core.search.embedders import FEEDBACK_ROWS, cosine_top, with_feedback
from tests.conftest import make_memory


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


MATRIX = np.stack([unit(1, 0.2, 0), unit(1, 0.3, 0), unit(0.9, 0.4, 0.1), unit(0, 0, 1), unit(0.2, 1, 0)])


def test_the_query_moves_toward_the_mean_of_its_nearest_rows_and_stays_unit_length():
    query = unit(1, 0, 0)
    moved = with_feedback(MATRIX, query, rows=3, weight=0.5)
    idx, _ = cosine_top(MATRIX, query, 3)
    centroid = MATRIX[idx].mean(axis=0)
    assert sorted(idx.tolist()) == [0, 1, 2]
    assert abs(float(np.linalg.norm(moved)) - 1.0) < 1e-5 and moved.dtype == query.dtype
    assert float(moved @ centroid) > float(query @ centroid)  # nearer what its nearest rows share
    expected = query + 0.5 * centroid
    assert np.allclose(moved, expected / np.linalg.norm(expected), atol=1e-6)


def test_nothing_to_move_toward_leaves_the_query_as_it_is():
    query = unit(0, 1, 0)
    assert with_feedback(np.zeros((0, 3), dtype=np.float32), query) is query
    assert with_feedback(MATRIX, query, rows=0) is query and with_feedback(MATRIX, query, weight=0.0) is query
    assert np.allclose(with_feedback(MATRIX[:1], unit(1, 0.2, 0), rows=FEEDBACK_ROWS), unit(1, 0.2, 0), atol=1e-6)


def test_hybrid_search_asks_for_feedback_and_vector_search_alone_does_not(tmp_path, monkeypatch):
    with make_memory(tmp_path) as m:
        for text in ("Ana swims with the kids on Sundays", "Ana paints birds", "Bob repairs bikes"):
            m.facts.add(text, "context", 0.8)
        asked: list[bool] = []
        vector = type(m.index).vector

        def spy(self, scope, query, limit=50, *, feedback=False):
            asked.append(feedback)
            return vector(self, scope, query, limit, feedback=feedback)

        monkeypatch.setattr(type(m.index), "vector", spy)
        hybrid = m.search("what does Ana do with her family", k=3)
        alone = m.search("what does Ana do with her family", k=3, mode="vector")
        assert asked == [True, False]
        assert hybrid and alone and {h.text for h in alone} <= {"Ana swims with the kids on Sundays", "Ana paints birds",
                                                                 "Bob repairs bikes"}
