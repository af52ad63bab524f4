"""BPETokenizer against tiktoken built from the same ranks and pattern: training and encoding.

Text: the docstrings of ~150 standard-library modules, read with `ast` (deterministic for a
given Python version; about 1 MB of English prose and code). Printed: the encode throughput of
tiktoken (`encode_ordinary`, its fastest path: no special-token scan) and of ours, with an empty
cache (a fresh tokenizer per run) and a warm one, medians over repeats, the ids checked equal;
then the training time at vocab 1024 for the incremental trainer on the whole text and for the
naive one on a slice (it recounts every pair at every merge: minutes on 1 MB), and a sweep over
vocab sizes.

Run: python benchmarks/bench_bpe.py [--quick]   (full: ~1 min)
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import statistics
import sys
import time
import warnings

from common import environment, table

from minitokenizer import TIKTOKEN_PATTERN, BPETokenizer

SPECIALS = ["<|pad|>", "<|eos|>", "<|ctx|>", "<|q|>", "<|a|>", "<|idk|>",
            "<|#1|>", "<|#2|>", "<|#3|>", "<|#4|>"]
MODULES = """argparse ast asyncio.base_events asyncio.tasks calendar collections configparser csv
dataclasses datetime decimal difflib email.message enum fractions ftplib functools gettext
http.client http.cookiejar imaplib inspect ipaddress logging mailbox optparse os pathlib pickle
pydoc random shutil smtplib statistics string subprocess tarfile textwrap threading typing
unittest.case unittest.mock urllib.parse urllib.request uuid xml.dom.minidom zipfile doctest
tkinter turtle heapq bisect codecs locale socket ssl tempfile trace traceback weakref
json.decoder json.encoder sqlite3.dbapi2 contextlib copy ctypes platform shlex nntplib poplib
sched selectors signal tokenize warnings wave zoneinfo._zoneinfo zipimport webbrowser cmd code
codeop numbers operator pprint queue quopri reprlib rlcompleter runpy secrets socketserver stat
symtable tabnanny timeit xmlrpc.client xml.etree.ElementTree multiprocessing.pool
multiprocessing.managers concurrent.futures._base importlib._bootstrap importlib.metadata pdb
bdb mimetypes gzip bz2 lzma hashlib hmac base64 filecmp fileinput fnmatch glob graphlib getopt
getpass colorsys netrc opcode pickletools plistlib posixpath ntpath profile pstats pty
py_compile pyclbr site struct sysconfig tty types io abc keyword linecache modulefinder
compileall dis asyncio.streams asyncio.events email.utils email.headerregistry http.server
http.cookies logging.handlers logging.config tkinter.ttk unittest.loader xml.sax.handler
idlelib.editor idlelib.pyshell lib2to3.fixer_util distutils.ccompiler""".split()
MIN_BYTES = 1_000_000


def stdlib_docstrings(min_bytes: int = MIN_BYTES) -> str:
    """Docstrings of MODULES' source files, in order, until the text reaches `min_bytes`."""
    parts, size = [], 0
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    for name in MODULES:
        try:
            with warnings.catch_warnings():  # importlib may warn about deprecated packages
                warnings.simplefilter("ignore")
                spec = importlib.util.find_spec(name)
        except ImportError:
            continue  # a module this Python no longer ships
        if spec is None or not (spec.origin or "").endswith(".py"):
            continue
        with open(spec.origin, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, kinds) and (doc := ast.get_docstring(node)):
                parts.append(doc)
                size += len(doc.encode("utf-8")) + 2
        if size >= min_bytes:
            break
    return "\n\n".join(parts)


def timed(fn) -> tuple[float, object]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def median_s(fn, repeats: int) -> float:
    return statistics.median(timed(fn)[0] for _ in range(repeats))


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats, a smaller naive slice")
    args = ap.parse_args(argv)
    import tiktoken

    repeats, naive_chars = (3, 10_000) if args.quick else (7, 30_000)
    environment(tiktoken=tiktoken.__version__)
    text = stdlib_docstrings()
    n_bytes = len(text.encode("utf-8"))
    print(f"text: {n_bytes:,} bytes of stdlib docstrings, sha256 "
          f"{hashlib.sha256(text.encode()).hexdigest()[:12]}; {repeats} repeats, medians\n")

    # --- training at vocab 1024 (10 special tokens included) -----------------------------------
    t_inc = median_s(lambda: BPETokenizer.train(text, 1024, SPECIALS), max(3, repeats // 2))
    tok = BPETokenizer.train(text, 1024, SPECIALS)
    piece = text[:naive_chars]
    t_naive, naive = timed(lambda: BPETokenizer.train(piece, 1024, SPECIALS, method="naive"))
    t_inc_piece, inc = timed(lambda: BPETokenizer.train(piece, 1024, SPECIALS))
    assert naive.merges == inc.merges, "the two trainers disagree"
    print(table(["training, vocab 1024", "text bytes", "seconds", "naive / incremental"], [
        ["incremental (whole text)", n_bytes, t_inc, "-"],
        ["incremental (slice)", len(piece.encode()), t_inc_piece, "-"],
        ["naive (same slice)", len(piece.encode()), t_naive, f"{t_naive / t_inc_piece:.0f}x"],
    ]))
    print("naive and incremental merges identical on the slice: True\n")

    # --- encoding -----------------------------------------------------------------------------
    enc = tiktoken.Encoding("ours", pat_str=TIKTOKEN_PATTERN,
                            mergeable_ranks=tok.mergeable_ranks(), special_tokens={})
    ids = tok.encode(text)
    assert ids == enc.encode_ordinary(text), "ids differ from tiktoken"

    fresh = [BPETokenizer(tok.merges, SPECIALS) for _ in range(repeats)]  # empty caches
    runs = {"tiktoken": lambda r: enc.encode_ordinary(text),
            "cold": lambda r: fresh[r].encode(text),  # every distinct pre-token misses once
            "warm": lambda r: tok.encode(text)}  # tok's cache is warm: it encoded text above
    times = {name: [] for name in runs}
    for r in range(repeats):  # take turns, so a burst of load hits all three alike
        for name, fn in runs.items():
            times[name].append(timed(lambda fn=fn, r=r: fn(r))[0])
    t_tik, t_cold, t_warm = (statistics.median(times[n]) for n in ("tiktoken", "cold", "warm"))
    mb = n_bytes / 1e6
    print(table(["encode 1 MB, vocab 1024", "ms", "MB/s", "vs tiktoken"], [
        ["tiktoken encode_ordinary", 1e3 * t_tik, mb / t_tik, "1"],
        ["ours, empty cache", 1e3 * t_cold, mb / t_cold, f"1/{t_cold / t_tik:.1f}"],
        ["ours, warm cache", 1e3 * t_warm, mb / t_warm, f"1/{t_warm / t_tik:.1f}"],
    ]))
    print(f"ids identical to tiktoken's: True ({len(ids):,} tokens, "
          f"{n_bytes / len(ids):.2f} bytes/token)\n")

    # --- vocab sweep --------------------------------------------------------------------------
    rows = []
    for vocab in (512, 1024, 2048, 4096):
        t, tk = timed(lambda v=vocab: BPETokenizer.train(text, v, SPECIALS))
        rows.append([vocab, t, n_bytes / len(tk.encode(text))])
    print(table(["vocab (incl. 10 specials)", "train s", "bytes/token"], rows))


if __name__ == "__main__":
    main(sys.argv[1:])
