"""index.py: the index cache under .cache/ is keyed by KB bytes and config, reloads intact,
rebuilds on any change, and survives corruption with a warning (a tiny KB in tmp_path)."""

import warnings

import numpy as np
import pytest
from fakes import write_kb

from minirag.bm25 import BM25Index
from minirag.files.kb import KBError
from minirag.index.cache import IndexConfig, load_or_build_index

FILES = {
    "verbs.md": "# Verbs\n## Irregular\nGo has went as its past. See has saw.\n",
    "nouns.md": "# Nouns\n## Plurals\nThe plural of child is children; of mouse, mice.\n",
}


@pytest.fixture
def kb(tmp_path):
    return write_kb(tmp_path / "kb", FILES)


def test_second_load_comes_from_the_cache_unchanged(kb, tmp_path):
    first = load_or_build_index(kb, cache_dir=tmp_path / "cache")
    second = load_or_build_index(kb, cache_dir=tmp_path / "cache")
    assert not first.loaded_from_cache and second.loaded_from_cache
    assert first.key == second.key
    assert [c.id for c in first.chunks] == [c.id for c in second.chunks]
    assert np.array_equal(first.store.vectors, second.store.vectors)
    assert second.bm25.search("went", 1)[0][0].doc_id == "verbs.md"


def test_an_edited_kb_or_a_new_config_rebuilds(kb, tmp_path):
    cache = tmp_path / "cache"
    base = load_or_build_index(kb, cache_dir=cache)
    (kb / "verbs.md").write_text(FILES["verbs.md"].replace("went", "goed"), encoding="utf-8")
    edited = load_or_build_index(kb, cache_dir=cache)
    assert edited.key != base.key and not edited.loaded_from_cache
    assert edited.bm25.search("goed", 1)[0][0].doc_id == "verbs.md"
    smaller = load_or_build_index(kb, IndexConfig(target_tokens=8, overlap=2), cache_dir=cache)
    assert smaller.key != edited.key and len(smaller.chunks) > len(edited.chunks)


@pytest.mark.parametrize("victim", ["store/vectors.npy", "store/manifest.json",
                                    "bm25/chunks.jsonl", "bm25/tf.npy"])
def test_a_corrupted_cache_is_rebuilt_with_a_warning(kb, tmp_path, victim):
    cache = tmp_path / "cache"
    good = load_or_build_index(kb, cache_dir=cache)
    path = cache / good.key / victim
    path.write_bytes(path.read_bytes()[:-7] + b"garbage")
    with pytest.warns(UserWarning, match="rebuilding"):
        again = load_or_build_index(kb, cache_dir=cache)
    assert not again.loaded_from_cache
    assert np.array_equal(again.store.vectors, good.store.vectors)
    assert load_or_build_index(kb, cache_dir=cache).loaded_from_cache  # and it is whole again


def test_a_missing_kb_is_a_clear_error(tmp_path):
    with pytest.raises(KBError, match="not found"):
        load_or_build_index(tmp_path / "nope", cache_dir=tmp_path / "cache")


def test_two_builds_of_one_index_at_once_leave_a_whole_cache(kb, tmp_path, monkeypatch):
    # Another process builds and caches the same index while this one is between saving its
    # store and its BM25 index: each must write in a temp folder of its own.
    cache, real_save, interrupted = tmp_path / "cache", BM25Index.save, []

    def save_after_the_other_process(self, path):
        if not interrupted:
            interrupted.append(True)
            other = load_or_build_index(kb, cache_dir=cache)
            assert not other.loaded_from_cache
        real_save(self, path)

    monkeypatch.setattr(BM25Index, "save", save_after_the_other_process)
    first = load_or_build_index(kb, cache_dir=cache)
    assert interrupted and not first.loaded_from_cache
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an unusable cache would warn and rebuild
        again = load_or_build_index(kb, cache_dir=cache)
    assert again.loaded_from_cache
    assert np.array_equal(again.store.vectors, first.store.vectors)
    assert [p.name for p in cache.iterdir()] == [first.key]  # no temp folder left behind
