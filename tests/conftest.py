"""Shared pytest setup: the hypothesis profile for CI and paths to the repo's data."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

REPO = Path(__file__).resolve().parents[1]

# Index caches built during the tests (in-process and in CLI subprocesses, which inherit the
# environment) go to a temporary folder, never into the working tree's .cache/.
if "MINIRAG_CACHE_DIR" not in os.environ:
    os.environ["MINIRAG_CACHE_DIR"] = tempfile.mkdtemp(prefix="minirag-test-cache-")
    atexit.register(shutil.rmtree, os.environ["MINIRAG_CACHE_DIR"], ignore_errors=True)

# CI is derandomised (the same examples every run) and has no per-example deadline:
# a loaded 2-core machine must not turn a slow example into a failure.
settings.register_profile(
    "ci", derandomize=True, deadline=None, max_examples=60,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", deadline=None, max_examples=100)
settings.load_profile("ci" if os.environ.get("CI") else "dev")


@pytest.fixture(scope="session")
def repo() -> Path:
    """The repository root."""
    return REPO


@pytest.fixture(scope="session")
def shipped_tok():
    """The shipped BPE tokenizer (models/), loaded once for the tests that read real prompts."""
    from minirag.files.artifacts import load_tokenizer
    return load_tokenizer()
