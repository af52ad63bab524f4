"""encoders/minilm.py: the teacher as an Embedder (shape, float32, unit rows even for a text with
no words, determinism in a fresh process, refuses a bare str), cached in the index like the
others, in `minirag eval`'s rows and `--embedder minilm`; and without the teacher's wheel a
one-line message that says `make teacher`, never a traceback, and no eval rows.
The vectors themselves are checked against sentence-transformers in tests/test_bert.py."""

import json
import subprocess
import sys

import numpy as np
import pytest
from fakes import write_kb

import minimodel.teacher
from minirag.encoders.minilm import (
    MiniLMEmbedder,
    TeacherMissing,
    teacher_fingerprint,
    teacher_installed,
)

TEXTS = ["The past of swim is swam.", "", "   ", "Café déjà vu 🙂", "mouse, mice"]
FILES = {
    "verbs.md": "# Verbs\n## Irregular\nThe past of swim is swam; the participle is swum.\n",
    "nouns.md": "# Nouns\n## Plurals\nOne mouse, two mice. One goose, two geese.\n",
}
needs_teacher = pytest.mark.skipif(not teacher_installed(), reason="`make teacher` not run")


@pytest.fixture(scope="module")
def embedder():
    if not teacher_installed():
        pytest.skip("`make teacher` not run")
    return MiniLMEmbedder()


@pytest.fixture
def kb(tmp_path):
    return write_kb(tmp_path / "kb", FILES)


@pytest.fixture
def no_teacher(monkeypatch):
    """The teacher's package looked up under a name nothing installs."""
    monkeypatch.setattr(minimodel.teacher, "PACKAGE", "no_such_teacher_package")


def test_embedder_protocol(embedder):
    assert embedder.name == "minilm" and embedder.d == 384
    X = embedder.embed(TEXTS)
    assert X.shape == (len(TEXTS), 384) and X.dtype == np.float32
    # every row is unit: a text with no words still reads [CLS] [SEP] (as the reference does)
    assert np.allclose(np.linalg.norm(X, axis=1), 1.0, atol=1e-5)
    assert np.array_equal(X, embedder.embed(TEXTS))
    assert np.abs(X[0] - embedder.embed([TEXTS[0]])[0]).max() < 1e-6
    assert embedder.embed([]).shape == (0, 384)
    with pytest.raises(TypeError, match="list"):
        embedder.embed("one text")
    assert embedder.config == {"model": "all-MiniLM-L6-v2", "max_len": 256,
                               "fingerprint": teacher_fingerprint()[:16]}


def test_similar_texts_are_closer(embedder):
    a, b, c = embedder.embed(["the plural of mouse is mice", "mice is the plural of mouse",
                              "the past tense of swim is swam"])
    assert a @ b > a @ c + 0.2


def test_same_vectors_in_a_fresh_process(embedder):
    code = ("import sys, json; from minirag.encoders.minilm import MiniLMEmbedder; "
            "sys.stdout.write(MiniLMEmbedder().embed(json.loads(sys.argv[1])).tobytes().hex())")
    out = subprocess.run([sys.executable, "-c", code, json.dumps(TEXTS)], capture_output=True,
                         text=True, check=True).stdout
    assert bytes.fromhex(out) == embedder.embed(TEXTS).tobytes()


@needs_teacher
def test_the_index_caches_minilm_vectors(kb, tmp_path):
    from minirag.index.cache import IndexConfig, load_or_build_index
    from minirag.retrieve import Retriever
    cache = tmp_path / "cache"
    first = load_or_build_index(kb, IndexConfig("minilm"), cache_dir=cache)
    second = load_or_build_index(kb, IndexConfig("minilm"), cache_dir=cache)
    assert not first.loaded_from_cache and second.loaded_from_cache
    assert first.key != load_or_build_index(kb, cache_dir=cache).key  # not the hashing index
    assert np.array_equal(first.store.vectors, second.store.vectors)
    assert first.store.vectors.shape == (len(first.chunks), 384)
    top = Retriever(second.store, second.bm25).retrieve_scored("plural of goose", 1, "dense")
    assert top[0][0].doc_id == "nouns.md"


@needs_teacher
def test_eval_has_the_minilm_rows(kb):
    from minirag.eval.harness import configurations
    names = set(configurations(kb))
    assert {"dense(minilm)", "hybrid(minilm+bm25)", "dense(hashing)", "bm25"} <= names


def test_without_the_teacher_its_rows_are_left_out(kb, no_teacher):
    from minirag.eval.harness import configurations
    names = set(configurations(kb))
    assert "dense(hashing)" in names and not any("minilm" in n for n in names)


def test_without_the_teacher_the_error_says_make_teacher(no_teacher):
    assert not teacher_installed()
    with pytest.raises(TeacherMissing, match="make teacher") as e:
        MiniLMEmbedder()
    assert isinstance(e.value, ValueError)  # the CLI's user errors


@pytest.mark.parametrize("command", [["index"], ["search", "plural of goose"],
                                     ["ask", "plural of goose"]])
def test_the_cli_without_the_teacher_prints_one_line(kb, command):
    code = ("import sys, minimodel.teacher as t; t.PACKAGE = 'no_such_teacher_package'; "
            "from minirag.cli import main; sys.exit(main(sys.argv[1:]))")
    r = subprocess.run([sys.executable, "-c", code, *command, "--kb", str(kb),
                        "--embedder", "minilm"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("minirag: error:") and "make teacher" in lines[0]


@needs_teacher
def test_the_cli_searches_with_minilm(kb):
    r = subprocess.run([sys.executable, "-m", "minirag", "search", "plural of goose", "--kb",
                        str(kb), "--embedder", "minilm", "--mode", "dense", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["results"][0]["doc_id"] == "nouns.md"
