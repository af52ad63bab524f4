"""Atomic file writes, shared by every package of the course.

It lives here because minitokenizer is the one package the others all stand on: minimodel and
minirag both import it, and neither may import the other's internals for a file helper.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(path, write, mode: str = "wb") -> None:
    """Call `write(f)` on a temp file beside `path`, then os.replace it onto `path`.

    A reader sees the old file or the new one, never half of one; a crash inside `write`
    leaves the old file and no temp file behind. `mode` is "wb" or "w" (UTF-8 text).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes the file private; an artifact is for everyone
        os.replace(tmp, path)  # atomic on POSIX and Windows
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
