"""encoders/thesaurus.py in isolation: the neighbours chosen on hand-built vectors (threshold,
cap, the stem rule, ties), the expansion, save/load and bad files, a Retriever that reads the
expanded query, and invariants of the shipped table against the KB."""

import json

import numpy as np
import pytest
from fakes import make_chunks

from minirag.bm25 import BM25Index, tokenize
from minirag.embed import HashingEmbedder
from minirag.encoders.thesaurus import FORMAT, THESAURUS_PATH, Thesaurus, build_thesaurus
from minirag.files.artifacts import ArtifactError
from minirag.files.kb import read_kb
from minirag.retrieve import Retriever
from minirag.store import FlatVectorStore

# unit vectors in 3-d: "tale" is close to "story" (0.96) and "narrative" (0.8), far from "verb"
VECTORS = {"story": [1, 0, 0], "narrative": [0.8, 0.6, 0], "verb": [0, 0, 1],
           "tale": [0.96, 0.28, 0], "storey": [1, 0, 0], "xylophone": [0, 0.6, 0.8]}


def embed(words, vectors=VECTORS):
    return np.array([vectors[w] for w in words], dtype=np.float32)  # [n, 3]


def test_neighbours_by_threshold_cap_and_stem():
    kb = ["story", "narrative", "verb"]
    t = build_thesaurus(kb, ["tale", "storey", "xylophone"], embed, tau=0.6, m=3, stem=4)
    # tale: story 0.96, narrative 0.936, verb 0 (under tau); best first
    assert t.neighbours["tale"] == ["story", "narrative"]
    # storey is story's own vector, but shares "stor": left out; narrative is 0.8
    assert t.neighbours["storey"] == ["narrative"]
    # xylophone: verb 0.8, narrative 0.36, story 0: one over tau
    assert t.neighbours["xylophone"] == ["verb"]
    assert build_thesaurus(kb, ["tale"], embed, tau=0.6, m=1).neighbours == {"tale": ["story"]}
    assert build_thesaurus(kb, ["tale"], embed, tau=0.99).neighbours == {}  # nothing that close


def test_ties_go_to_the_earlier_kb_word_and_the_build_repeats():
    vectors = {**VECTORS, "saga": [1, 0, 0], "yarn": [1, 0, 0]}
    twins = lambda words: embed(words, vectors)  # noqa: E731
    t = build_thesaurus(["saga", "yarn", "verb"], ["tale"], twins, tau=0.5, m=1)
    assert t.neighbours == {"tale": ["saga"]}
    again = build_thesaurus(["saga", "yarn", "verb"], ["tale"], twins, tau=0.5, m=1)
    assert again.neighbours == t.neighbours
    with pytest.raises(ValueError, match="KB words"):
        build_thesaurus([], ["tale"], embed)


def test_expand_gives_the_neighbours_of_the_words_it_knows():
    t = Thesaurus({"tale": ["story", "narrative"], "nile": ["river"]})
    assert t.expand(["in", "a", "tale", "by", "the", "nile"]) == ["story", "narrative", "river"]
    assert t.expand(["past", "of", "go"]) == []  # no word of it is in the table


def test_save_and_load_round_trip_and_bad_files(tmp_path):
    t = Thesaurus({"tale": ["story"], "nile": ["river", "sea"]})
    path = tmp_path / "thesaurus.json"
    t.save(path, tau=0.6)
    assert json.loads(path.read_text())["tau"] == 0.6
    assert Thesaurus.load(path).neighbours == t.neighbours
    with pytest.raises(ArtifactError, match="make models"):
        Thesaurus.load(tmp_path / "missing.json")
    path.write_text("{not json")
    with pytest.raises(ArtifactError, match="not valid JSON"):
        Thesaurus.load(path)
    for bad in ([], {"format": "other/1", "neighbours": {}},
                {"format": FORMAT, "neighbours": {"tale": "story"}},
                {"format": FORMAT, "neighbours": {"tale": [1]}}):
        path.write_text(json.dumps(bad))
        with pytest.raises(ArtifactError, match="not a"):
            Thesaurus.load(path)


def test_the_hybrid_reads_the_expanded_query_and_the_rows_the_question():
    texts = ["The plural of mouse is mice.", "The past of go is went.", "Use since for a point."]
    chunks = make_chunks(texts)
    store = FlatVectorStore(HashingEmbedder(d=256).fit(texts))
    store.add(chunks)
    bm25 = BM25Index()
    bm25.add(chunks)
    thesaurus = Thesaurus({"rodent": ["mouse"]})
    plain, expanded = Retriever(store, bm25), Retriever(store, bm25, thesaurus=thesaurus)
    assert expanded.expanded("a Rodent, small") == "a Rodent, small mouse"  # tokens lowercased
    assert plain.expanded("a Rodent, small") == "a Rodent, small"
    assert expanded.retrieve("plural of a rodent", 1, hybrid=True) == [chunks[0]]
    assert bm25.search("rodent", 3) == []  # a word the KB lacks: BM25 alone finds nothing
    e = expanded.explain("rodent", chunks[0].id)
    assert e["bm25"]["rank"] == 1 and plain.explain("rodent", chunks[0].id)["bm25"]["rank"] is None
    # dense and BM25 modes read the query as it is; only the hybrid expands it
    assert expanded.retrieve_scored("rodent", 3, "bm25") == []


def test_the_shipped_table_maps_words_the_kb_lacks_to_words_it_has():
    t = Thesaurus.load(THESAURUS_PATH)
    kb = {w for d in read_kb() for w in tokenize(d.text)}
    assert t.neighbours and not set(t.neighbours) & kb
    assert all(n in kb and n[:4] != w[:4] for w, ns in t.neighbours.items() for n in ns)
    assert max(map(len, t.neighbours.values())) <= 3
