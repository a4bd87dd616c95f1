"""Shared fixtures: paths, and running the CLI as a user would."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"

# The suite may run with SIGINT or SIGHUP ignored (a shell's background job
# ignores SIGINT, POSIX; nohup ignores SIGHUP), and children inherit SIG_IGN
# across exec: the processes the signal tests start would then (rightly)
# keep ignoring the signals they are sent. A handler installed here becomes
# SIG_DFL in every child instead; this process keeps ignoring SIGHUP and
# turns SIGINT into KeyboardInterrupt as Python does by default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)
if signal.getsignal(signal.SIGHUP) is signal.SIG_IGN:
    signal.signal(signal.SIGHUP, lambda _signum, _frame: None)


def run_cli(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m ccarena ARGS` with the test's interpreter (the .venv one)."""
    return subprocess.run(
        [sys.executable, "-m", "ccarena", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=600,
        check=False,
    )


PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TABLE_HEADER = "| quantity | paper | ccarena | ccarena range | verdict |"


def reproduce_quick(names: Sequence[str], out: Path) -> Path:
    """`ccarena reproduce NAMES --quick --out OUT`, which must succeed; OUT."""
    proc = run_cli("reproduce", *names, "--quick", "--out", out)
    assert proc.returncode == 0, proc.stderr
    return out


def assert_quick_report(out: Path) -> None:
    """A --quick experiment's directory is complete and judges nothing:
    the table and the --quick note, every linked figure a PNG, rows and
    numbers in results.json, and no verdicts (one seed: docs/experiments.md,
    rule 3, so nothing can differ unexplained)."""
    report = (out / "report.md").read_text()
    assert TABLE_HEADER in report and "--quick run" in report
    linked = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", report)
    assert linked and all((out / f).read_bytes().startswith(PNG_MAGIC) for f in linked)
    results = json.loads((out / "results.json").read_text())
    assert results["comparisons"] and results["numbers"]
    assert all(row["agrees"] is None for row in results["comparisons"])


@pytest.fixture
def small_scenario() -> dict:
    """A valid two-flow scenario, short enough for unit tests."""
    return {
        "duration": "3s",
        "seed": 1,
        "bottleneck": {"rate": "100Mbit", "buffer": "2MB"},
        "flow": [{"cc": "bbr", "rtt": "10ms"}, {"cc": "cubic", "rtt": "50ms", "start": "0.5s"}],
    }
