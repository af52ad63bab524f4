"""metrics.py: hand-checked values for every metric, and hypothesis properties
(Recall@k never decreases in k; every metric lies in [0, 1]; a perfect ranking scores 1)."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minirag.eval.metrics import (
    exact_match,
    hit_at_k,
    mean_of,
    mrr,
    ndcg_at_k,
    percentile,
    recall_at_k,
)

A, B, C, D = ("a.md", "x"), ("b.md", "y"), ("c.md", "z"), ("d.md", "w")


def test_hand_computed_values():
    ranked = [A, B, C, D]
    assert recall_at_k(ranked, {B, D}, 1) == 0.0
    assert recall_at_k(ranked, {B, D}, 2) == 0.5
    assert recall_at_k(ranked, {B, D}, 4) == 1.0
    assert hit_at_k(ranked, {B, D}, 2) == 1.0
    assert mrr(ranked, {C}, 10) == pytest.approx(1 / 3)
    assert mrr(ranked, {C}, 2) == 0.0
    # DCG = 1/log2(3) (B at rank 2) + 1/log2(5) (D at rank 4); IDCG = 1 + 1/log2(3)
    expected = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(ranked, {B, D}, 10) == pytest.approx(expected)


def test_two_chunks_of_one_section_count_once():
    # the section A appears twice: the duplicate does not push B out of the top 2
    assert recall_at_k([A, A, B], {B}, 2) == 1.0
    assert mrr([A, A, B], {B}) == 0.5


def test_bad_arguments():
    with pytest.raises(ValueError, match="k"):
        recall_at_k([A], {A}, 0)
    with pytest.raises(ValueError, match="gold"):
        recall_at_k([A], set(), 1)


def test_exact_match_is_normalised_and_whole_word():
    assert exact_match("Went [#1]", "went") == 1.0
    assert exact_match("the answer is: WENT.", "went") == 1.0
    assert exact_match("wentworth", "went") == 0.0
    assert exact_match("anything", "") == 0.0
    assert exact_match("learnt [#1]", "learnt / learned") == 1.0  # alternatives: any one
    assert exact_match("learned", "learnt / learned") == 1.0
    assert exact_match("learning", "learnt / learned") == 0.0


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4], 50) == 2.5
    assert percentile([5], 95) == 5
    assert percentile([1, 2, 3, 4, 5], 100) == 5


keys = st.lists(st.sampled_from([A, B, C, D, ("e.md", "v")]), min_size=0, max_size=8)
golds = st.sets(st.sampled_from([A, B, C, D]), min_size=1, max_size=3)


@given(keys, golds)
def test_recall_never_decreases_in_k_and_all_metrics_in_unit_interval(ranked, gold):
    rs = [recall_at_k(ranked, gold, k) for k in range(1, 10)]
    assert rs == sorted(rs)
    for v in [*rs, mrr(ranked, gold), ndcg_at_k(ranked, gold), hit_at_k(ranked, gold, 3)]:
        assert 0.0 <= v <= 1.0


@given(golds)
def test_a_perfect_ranking_scores_one(gold):
    ranked = sorted(gold)
    assert ndcg_at_k(ranked, gold, 10) == pytest.approx(1.0)
    assert mrr(ranked, gold) == 1.0
    assert recall_at_k(ranked, gold, len(gold)) == 1.0


def test_mean_of_rounds_once_to_six_places():
    assert mean_of([{"em": 1.0}, {"em": 0.0}, {"em": 0.0}], "em") == 0.333333
    assert mean_of([{"r": 1.0}] * 34 + [{"r": 0.0}] * 23, "r") == 0.596491  # 34/57
