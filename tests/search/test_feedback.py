"""Pseudo-relevance feedback (search.embedders.feedback_top): hybrid search ranks the rows by the query's vector
moved toward its nearest rows; vector search alone does not. The moved query ranks the rows nearest to the plain
one (FEEDBACK_POOL), so that feedback costs one product over the matrix."""

from __future__ import annotations

import numpy as np

from memory_core.search.embedders import cosine_top, feedback_top
from tests.conftest import make_memory


def unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


MATRIX = np.stack([unit(1, 0.2, 0), unit(1, 0.3, 0), unit(0.9, 0.4, 0.1), unit(0.6, 0, 0.8), unit(0.2, 1, 0),
                   unit(0.5, 0.9, 0)])


def moved(matrix: np.ndarray, query: np.ndarray, rows: int, weight: float) -> np.ndarray:
    """The moved query, as written out: the mean of the `rows` nearest rows, added by `weight`, unit length."""
    nearest = np.argsort(-(matrix @ query))[:rows]
    v = query + weight * matrix[nearest].mean(axis=0)
    return v / np.linalg.norm(v)


def test_the_rows_are_ranked_by_the_query_moved_toward_its_nearest_rows():
    query = unit(1, 0, 0)
    idx, scores = feedback_top(MATRIX, query, 4, rows=3, weight=0.5)
    expected = MATRIX @ moved(MATRIX, query, 3, 0.5)
    assert idx.tolist() == np.argsort(-expected)[:4].tolist()
    assert np.allclose(scores, expected[idx], atol=1e-5) and scores.dtype == np.float32
    plain, _ = cosine_top(MATRIX, query, 6)
    shifted, _ = feedback_top(MATRIX, query, 6, rows=3, weight=3.0)  # pulled hard toward what rows 0-2 share (y)
    assert plain.tolist().index(5) > plain.tolist().index(3)  # plain: (0.6, 0, 0.8) is nearer than (0.5, 0.9, 0)
    assert shifted.tolist().index(5) < shifted.tolist().index(3)  # moved: (0.5, 0.9, 0) shares the y, and rises


def test_the_moved_query_ranks_the_pool_nearest_to_the_plain_one():
    rng = np.random.default_rng(7)
    matrix = rng.normal(size=(300, 16)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[0]
    idx, scores = feedback_top(matrix, query, 10, pool=50)
    pool = set(np.argsort(-(matrix @ query))[:50].tolist())
    assert set(idx.tolist()) <= pool and len(idx) == 10 and list(scores) == sorted(scores, reverse=True)
    whole, _ = feedback_top(matrix, query, 10, pool=300)  # the pool the whole matrix: the moved query's own top 10
    assert whole.tolist() == np.argsort(-(matrix @ moved(matrix, query, 5, 0.5)))[:10].tolist()


def test_nothing_to_move_toward_ranks_by_the_plain_query():
    query = unit(0, 1, 0)
    assert feedback_top(np.zeros((0, 3), dtype=np.float32), query, 3)[0].tolist() == []
    for idx, _scores in (feedback_top(MATRIX, query, 3, rows=0), feedback_top(MATRIX, query, 3, weight=0.0)):
        assert idx.tolist() == cosine_top(MATRIX, query, 3)[0].tolist()
    assert feedback_top(MATRIX, query, 0)[0].tolist() == []


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
        assert m.search("what does Ana do with her family", k=3)
        assert m.search("what does Ana do with her family", k=3, mode="vector")
        assert asked == [True, False]
