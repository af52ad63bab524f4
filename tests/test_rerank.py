"""rerank/cross_encoder.py and the re-ranking Retriever: the token layout (passage cut or
padded to P, <|q|>, the query cut to the room left), scores through cached chunk states equal
to the training layout's, the cache, and a Retriever that reorders only what its first stage
found (a fake re-ranker with hand-set scores), with explain's ranks. A tiny random model and a
tokenizer trained on the test texts: no shipped artifact is read."""

import numpy as np
import pytest
from fakes import make_chunks

from minimodel.mini_gpt import MiniGPTConfig
from minimodel.relevance import RelevanceModel
from minirag.bm25 import BM25Index
from minirag.chunk import search_text
from minirag.embed import HashingEmbedder
from minirag.files.special_tokens import SPECIAL_TOKENS
from minirag.rerank.cross_encoder import CrossEncoder
from minirag.retrieve import Retriever, rerank_scores
from minirag.store import FlatVectorStore
from minitokenizer import BPETokenizer

TEXTS = [
    "The past simple of go is went; the past participle is gone.",
    "Use since with a point in time and for with a span of time.",
    "Much goes with uncountable nouns, many with countable nouns.",
    "Swim, swam, swum: three different forms of an irregular verb.",
]
P = 12


@pytest.fixture(scope="module")
def ce():
    tok = BPETokenizer.train(" ".join(TEXTS), 300, SPECIAL_TOKENS)
    cfg = MiniGPTConfig(vocab_size=len(tok), block_size=P + 6, d_model=8, n_head=2,
                        n_layer=2, dtype="float64", n_segments=3)
    model = RelevanceModel(cfg, seed=0)
    rng = np.random.default_rng(0)
    for p in model.params.values():
        p += rng.normal(0.0, 0.3, size=p.shape)
    return CrossEncoder(model, tok, passage_tokens=P)


def test_the_layout_passage_then_query(ce):
    short, long = make_chunks(["go", " ".join(TEXTS)], separate_docs=True)
    pad, q = ce.tokenizer.encode_special("<|pad|>")[0], ce.tokenizer.encode_special("<|q|>")[0]
    ids = ce.passage_ids(short)
    assert len(ids) == P and ids[-1] == pad  # the search text, then padding
    assert ce.tokenizer.decode([t for t in ids if t != pad]) == search_text(short)
    assert len(ce.passage_ids(long)) == P and pad not in ce.passage_ids(long)  # cut at P
    assert ce.max_query_tokens == 5
    assert ce.query_ids("the past simple of go is went") == [q] + ce.tokenizer.encode(
        "the past simple of go is went")[:5]
    with pytest.raises(ValueError, match="room for a query"):
        CrossEncoder(ce.model, ce.tokenizer, passage_tokens=P + 5)
    no_flags = RelevanceModel(MiniGPTConfig(vocab_size=len(ce.tokenizer), block_size=P + 6))
    with pytest.raises(ValueError, match="segment ids"):
        CrossEncoder(no_flags, ce.tokenizer, passage_tokens=P)


def test_query_tokens_are_flagged_by_whether_the_chunk_holds_their_text(ce):
    tok = ce.tokenizer
    passage = ce.passage_ids(make_chunks(["Swim, swam, swum."])[0])
    query = ce.query_ids("swim home")  # <|q|>, then tokens of "swim" and " home"
    flags = ce.flags(query, passage)
    assert flags[0] == 1  # <|q|> is no word
    pieces = [tok.decode([t]).strip().lower() for t in query[1:]]
    in_passage = {tok.decode([t]).strip().lower() for t in passage}
    assert list(flags[1:]) == [2 if p in in_passage and any(ch.isalnum() for ch in p) else 1
                               for p in pieces]
    assert 2 in flags[1:] and 1 in flags[1:]  # "swim" is there, "home" is not
    assert ce.word[tok.encode(" went")[0]] == ce.word[tok.encode("went")[0]]


def test_scores_equal_the_training_layouts_and_the_cache_fills_once(ce):
    chunks = make_chunks(TEXTS, separate_docs=True)
    query = "past of swim"
    ids, last, segments = ce.sequences(np.array([ce.passage_ids(c) for c in chunks]),
                                       [ce.query_ids(query)] * len(chunks))
    assert ids.shape == segments.shape == (4, P + len(ce.query_ids(query)))
    assert (segments[:, :P] == 0).all() and set(np.unique(segments[:, P:])) == {1, 2}
    expected = ce.model.scores(ids, last, segments)
    ce._states.clear()
    np.testing.assert_allclose(ce.score(query, chunks), expected, atol=1e-12)
    assert len(ce._states) == 4
    again = ce.score(query, [chunks[2], chunks[0], chunks[2]])  # cached, reordered, repeated
    np.testing.assert_allclose(again, expected[[2, 0, 2]], atol=1e-12)
    assert len(ce._states) == 4
    assert ce.score(query, []).shape == (0,)


class FixedReranker:
    """A fake re-ranker: each chunk's score is set by hand (by its text's first word)."""

    def __init__(self, by_word: dict[str, float]):
        self.by_word, self.seen = by_word, []

    def score(self, query, chunks):
        self.seen.append([c.id for c in chunks])
        return np.array([self.by_word.get(c.text.split()[0], 0.0) for c in chunks])


@pytest.fixture
def chunks():
    return make_chunks(TEXTS, separate_docs=True)


def retriever(chunks, reranker=None, first_stage=2, prior=0.0):
    store = FlatVectorStore(HashingEmbedder(d=256).fit(TEXTS))
    store.add(chunks)
    bm25 = BM25Index()
    bm25.add(chunks)
    return Retriever(store, bm25, reranker=reranker, first_stage=first_stage, prior=prior)


def test_rerank_scores_by_hand():
    np.testing.assert_allclose(rerank_scores([1.0, 3.0], 0.0), [-1.0, 1.0])
    # z = [-1, 1]; with prior 3 the second loses 3 ln 2 = 2.08 for its first-stage rank
    np.testing.assert_allclose(rerank_scores([1.0, 3.0], 3.0), [-1.0, 1.0 - 3 * np.log(2)])
    np.testing.assert_allclose(rerank_scores([2.0, 2.0, 2.0], 0.0), [0.0, 0.0, 0.0])


def test_a_large_prior_keeps_the_first_stage_order(chunks):
    fake = FixedReranker({"Swim,": 1.0, "Much": 0.5})
    first = [c.id for c, _ in retriever(chunks).retrieve_scored("past of go", 4)]
    kept = retriever(chunks, fake, first_stage=4, prior=100.0).retrieve_scored("past of go", 4)
    assert [c.id for c, _ in kept] == first


def test_the_reranker_reorders_the_first_stage_and_cuts_to_k(chunks):
    plain = [c.id for c, _ in retriever(chunks).retrieve_scored("past participle of go", 2)]
    assert plain[0] == chunks[0].id
    fake = FixedReranker({"Use": 5.0, "The": 1.0})
    r = retriever(chunks, fake, first_stage=2)
    out = r.retrieve_scored("past participle of go", 1)
    assert fake.seen == [plain]  # it saw exactly the first stage's top 2
    second = next(c for c in chunks if c.id == plain[1])
    expected = max([chunks[0], second], key=lambda c: fake.by_word.get(c.text.split()[0], 0.0))
    assert [c.id for c, _ in out] == [expected.id]
    # a chunk outside the first stage's top 2 is never brought back, however high its score
    swim = FixedReranker({"Swim,": 100.0})
    ids = [c.id for c, _ in retriever(chunks, swim, 2).retrieve_scored("past participle of go", 2)]
    assert chunks[3].id not in ids and sorted(ids) == sorted(plain)


def test_ties_keep_the_first_stage_order_and_k_above_first_stage_reads_k(chunks):
    fake = FixedReranker({})
    r = retriever(chunks, fake, first_stage=2)
    first = [c.id for c, _ in retriever(chunks).retrieve_scored("past of go", 3)]
    assert [c.id for c, _ in r.retrieve_scored("past of go", 3)] == first
    assert len(fake.seen[0]) == 3


def test_explain_gives_first_stage_rank_score_and_final_rank(chunks):
    r = retriever(chunks, FixedReranker({"Use": 5.0}), first_stage=4)
    e = r.explain("past participle of go", chunks[1].id)
    first = [c.id for c, _ in r.first_stage_scored("past participle of go", 4)]
    fused = rerank_scores([5.0 if i == chunks[1].id else 0.0 for i in first], 0.0)
    assert e["rerank"] == {"first_stage_rank": first.index(chunks[1].id) + 1,
                           "reranker_score": 5.0, "score": pytest.approx(fused.max()),
                           "rank": 1}
    last = r.retrieve_scored("past participle of go", 4)[-1][0].id
    assert r.explain("past participle of go", last)["rerank"]["rank"] == 4
    outside = retriever(chunks, FixedReranker({}), first_stage=1)
    top = outside.first_stage_scored("past participle of go", 1)[0][0].id
    other = next(c.id for c in chunks if c.id != top)
    assert set(outside.explain("past participle of go", other)["rerank"].values()) == {None}
    assert "rerank" not in retriever(chunks).explain("past of go", chunks[1].id)


@pytest.mark.parametrize("k, first_stage, match", [(0, 2, "k"), (1, 0, "first_stage")])
def test_bad_sizes(chunks, k, first_stage, match):
    with pytest.raises(ValueError, match=match):
        retriever(chunks, FixedReranker({}), first_stage).retrieve_scored("go", k)


def test_training_lists_put_the_positive_first_and_never_a_negative_that_could_be_right(ce):
    from minirag.training.rerank_train import RerankConfig, make_lists, states_answer

    texts = ["| go | went | gone |", "I went home after school.", "Since and for.",
             "Much and many.", "Swim, swam, swum.", "Adjective order."]
    chunks = [make_chunks([t], doc=f"d{i}.md")[0] for i, t in enumerate(texts)]
    labelled = [("past of go", 0, "went"), ("much or many", 3, "")]
    cfg = RerankConfig(list_size=4, first_stage=5)
    lists = make_lists(labelled, chunks, retriever(chunks, first_stage=5), ce, cfg,
                       np.random.default_rng(0))
    assert lists.rows.shape == (2, 4) and list(lists.rows[:, 0]) == [0, 3]
    assert lists.queries[0] == ce.query_ids("past of go")
    assert 1 not in lists.rows[0]  # "I went home" states the answer: no negative for "went"
    for (_, pos, _), row in zip(labelled, lists.rows):
        assert len(set(row)) == 4 and pos not in row[1:]
    again = make_lists(labelled, chunks, retriever(chunks, first_stage=5), ce, cfg,
                       np.random.default_rng(0))
    assert (again.rows == lists.rows).all()
    assert states_answer(chunks[1], "went") and not states_answer(chunks[1], "wen")
    assert not states_answer(chunks[1], "")
