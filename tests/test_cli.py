"""The `minirag` command as a learner runs it: subprocesses, JSON shapes (DESIGN §3 cli), exit
codes (0 ok, 1 user error with a one-line message, 2 usage error) and bad input."""

import json
import re
import subprocess
import sys

import pytest

from minirag.retrieve import MAX_QUERY_CHARS


def minirag(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "minirag", *args], capture_output=True,
                          text=True, input=stdin, timeout=300)


def assert_user_error(r, match):
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("minirag: error:"), r.stderr
    assert match in lines[0]


@pytest.fixture(scope="module")
def small_kb(tmp_path_factory):
    root = tmp_path_factory.mktemp("kb")
    (root / "verbs.md").write_text("# Verbs\n## Irregular\nThe past of swim is swam; the "
                                   "participle is swum.\n", encoding="utf-8")
    (root / "nouns.md").write_text("# Nouns\n## Plurals\nOne mouse, two mice.\n",
                                   encoding="utf-8")
    return root


def test_search_json_shape(small_kb):
    r = minirag("search", "plural of mouse", "-k", "2", "--kb", str(small_kb), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert set(out) == {"query", "mode", "rerank", "rows", "thesaurus", "expanded_query",
                        "results", "timings_ms"}
    assert out["mode"] == "hybrid" and out["rerank"] is False and len(out["results"]) == 2
    assert out["rows"] is True  # the pipeline's choice; --no-rows turns the lookup off
    top = out["results"][0]
    assert set(top) == {"rank", "chunk_id", "doc_id", "section", "score", "text"}
    assert (top["rank"], top["doc_id"], top["section"]) == (1, "nouns.md", "Plurals")


def test_no_rows_turns_the_row_lookup_off(small_kb):
    r = minirag("search", "plural of mouse", "--no-rows", "--kb", str(small_kb), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["rows"] is False


@pytest.mark.parametrize("mode", ["dense", "bm25", "hybrid"])
def test_search_text_output_and_explain(small_kb, mode):
    r = minirag("search", "swum", "--mode", mode, "--kb", str(small_kb), "--explain")
    assert r.returncode == 0, r.stderr
    assert "verbs.md § Irregular" in r.stdout.splitlines()[0]
    assert "bm25 rank" in r.stdout


def test_index_json(small_kb):
    r = minirag("index", "--kb", str(small_kb), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["documents"] == 2 and out["chunks"] >= 2
    one = small_kb.parent / "one"
    one.mkdir()
    (one / "nouns.md").write_text("# Nouns\n## Plurals\nOne mouse, two mice.\n", encoding="utf-8")
    text = minirag("index", "--kb", str(one)).stdout
    assert text.startswith("2 chunks from 1 document, ")  # the title's chunk, the section's


def test_user_errors_exit_1_with_one_line(small_kb, tmp_path):
    assert_user_error(minirag("search", "go", "--kb", str(tmp_path / "missing")), "not found")
    assert_user_error(minirag("search", "   ", "--kb", str(small_kb)), "empty")
    assert_user_error(minirag("search", "go", "-k", "0", "--kb", str(small_kb)), "-k")
    assert_user_error(minirag("index", "--kb", str(tmp_path / "missing")), "not found")
    (tmp_path / "empty").mkdir()
    assert_user_error(minirag("index", "--kb", str(tmp_path / "empty")), "no .md or .txt file")


def test_a_one_megabyte_query_is_refused_not_crashed(small_kb):
    r = minirag("search", "-", "--kb", str(small_kb), stdin="swim " * 200_000)
    assert_user_error(r, f"limit is {MAX_QUERY_CHARS:,}")


def test_query_from_stdin(small_kb):
    r = minirag("search", "-", "--kb", str(small_kb), "--json", stdin="plural of mouse\n")
    assert r.returncode == 0 and json.loads(r.stdout)["results"][0]["doc_id"] == "nouns.md"


def test_usage_errors_exit_2():
    assert minirag("search", "go", "--mode", "sparse").returncode == 2
    assert minirag("frobnicate").returncode == 2
    assert minirag().returncode == 2


def test_eval_json_shape(small_kb, tmp_path):
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({
        "id": "t1", "question": "past participle of swim", "type": "literal",
        "topic": "verb-conjugation", "gold": [{"doc_id": "verbs.md", "section": "Irregular"}],
        "answer": "swum"}) + "\n", encoding="utf-8")
    r = minirag("eval", "--set", str(questions), "--kb", str(small_kb), "--no-sweep",
                "--plots", str(tmp_path / "plots"), "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    rows = {(row["config"], row["group"]): row for row in out["retrieval"]}
    assert {"dense(hashing)", "bm25", "hybrid(hashing+bm25)"} <= {c for c, _ in rows}
    # every hybrid, with or without rows and thesaurus, has its re-ranked twin (both shipped)
    hybrids = {c for c, _ in rows if c.startswith("hybrid") and not c.endswith("+rerank")}
    assert {"hybrid(hashing+bm25+rows)", "hybrid(hashing+bm25+rows+thesaurus)"} <= hybrids
    assert {c + "+rerank" for c in hybrids} <= {c for c, _ in rows}
    row = rows[("hybrid(hashing+bm25)", "all")]
    assert row["n"] == 1 and row["recall@1"] == 1.0 and row["mrr@10"] == 1.0
    assert {"recall@3", "recall@5", "recall@10", "ndcg@10", "p50_ms", "p95_ms"} <= set(row)
    assert (tmp_path / "plots" / "recall_at_k.png").stat().st_size > 1000
    assert out["split"] == "custom" and "misses" in out  # one's own set: misses listed
    # the shipped adapter's rows beside the shipped reader's, on the pipeline's retriever only
    assert {row["reader"] for row in out["reader"]} == {"shipped", "+choice adapter"}
    assert {row["retriever"] for row in out["reader"] if row["reader"] != "shipped"} == {
        None, "hybrid(biencoder+bm25+rows+thesaurus)"}


def test_eval_on_the_test_split_prints_aggregates_only(small_kb, tmp_path):
    """The blind split: no per-question misses, no question ids, no tuning sweeps."""
    args = ["eval", "--split", "test", "--kb", str(small_kb), "--plots", str(tmp_path)]
    r = minirag(*args, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["split"] == "test" and out["retrieval"]
    assert not {"misses", "lexical_gaps", "sweep", "fusion_sweep"} & set(out)
    text = minirag(*args).stdout
    assert text.startswith("Split: test") and not re.search(r"\bTU?-\d{3}\b", text)


def test_eval_on_a_missing_set_is_a_user_error(tmp_path):
    assert_user_error(minirag("eval", "--set", str(tmp_path / "none.jsonl")), "not found")


def test_a_stale_default_adapter_is_one_warning_line_and_the_answer_still_comes(
        monkeypatch, tmp_path, capsys):
    """In-process, so the pipeline's default adapter can point at a file that is not there
    (as after a reader rebuild without `minirag train adapter`)."""
    import warnings

    from minirag import cli, pipeline
    monkeypatch.setattr(pipeline, "DEFAULT_ADAPTER", tmp_path / "gone.npz")
    monkeypatch.setattr(warnings, "formatwarning", warnings.formatwarning)  # restored after
    with pytest.warns(UserWarning) as caught:
        assert cli.main(["ask", "past participle of sing"]) == 0
    assert capsys.readouterr().out.startswith("Q: past participle of sing\nA: sung [#")
    (w,) = caught  # as the command prints it: one line, like its errors
    assert warnings.formatwarning(w.message, w.category, w.filename, w.lineno) == (
        f"minirag: warning: reading without the adapter: {tmp_path / 'gone.npz'}: no such "
        f"checkpoint file (rebuild it: minirag train adapter)\n")
