"""All-or-nothing run directories: outputs are written into a temporary
directory next to the target and renamed into place at the end, so that a
failed or interrupted run leaves no half-written directory behind."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import ScenarioError


def check_target(out: Path) -> None:
    """Fail early (before simulating) if ``out`` cannot become a run dir."""
    if out.exists() and not out.is_dir():
        raise ScenarioError("--out", f"{out} exists and is not a directory")
    parent = out.parent if str(out.parent) else Path(".")
    probe = parent
    while not probe.exists():
        probe = probe.parent
    if not probe.is_dir() or not os.access(probe, os.W_OK):
        raise ScenarioError("--out", f"cannot create {out}: {probe} is not writable")


@contextmanager
def atomic_dir(out: Path) -> Iterator[Path]:
    """Yield a fresh temporary directory; on success it replaces ``out``
    (an older run there is removed), on any failure it is deleted."""
    out = Path(out)
    check_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.replace(out, old / out.name)
            os.replace(tmp, out)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
