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


def dead_pid() -> int:
    """The pid of a process that has exited (a killed run's, say)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def plant_decoys(directory: Path) -> dict[Path, str]:
    """A user's files and directories in ``directory`` named like
    ccarena's temporaries of a dead process (the old and the new pattern),
    and one that imitates a temporary but whose marker ccarena did not
    write; what each holds. :func:`assert_decoys_intact` checks them."""
    directory.mkdir(parents=True, exist_ok=True)
    dead = dead_pid()
    planted = {}
    for name in (f".thesis.tmp-{dead}-v2", f".paper.tex.tmp-{dead}-autosave", f".notes.ccarena-tmp-{dead}-draft",
                 f".x.old-{dead}-abc"):
        (directory / name).write_text(f"draft {name}\n")
        planted[directory / name] = f"draft {name}\n"
    fake = directory / f".mine.ccarena-tmp-{dead}-abc"
    fake.mkdir()
    (fake / ".ccarena-run").write_text('{"written_by": "me"}\n')
    (fake / "data.csv").write_text("1,2\n")
    planted[fake / "data.csv"] = "1,2\n"
    bare = directory / f".out.ccarena-tmp-{dead}-xyz"
    bare.mkdir()
    (bare / "summary.json").write_text("mine\n")
    planted[bare / "summary.json"] = "mine\n"
    return planted


def assert_decoys_intact(planted: dict[Path, str]) -> None:
    for path, text in planted.items():
        assert path.is_file() and path.read_text() == text, f"{path} was touched"


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


def bottleneck_scenario(flows, *, buffer, seed, duration="120s", measure_from="30s", loss=None) -> dict:
    """A dumbbell at 100 Mbit/s (the BBRv2/v3 behaviour tests): flows are
    (cc, rtt) or (cc, rtt, params), params None or a dict."""
    bottleneck = {"rate": "100Mbit", "buffer": buffer}
    if loss is not None:
        bottleneck["loss"] = loss
    return {
        "duration": duration,
        "seed": seed,
        "measure": {"from": measure_from},
        "bottleneck": bottleneck,
        "flow": [{"cc": f[0], "rtt": f[1], **({"params": f[2]} if len(f) > 2 and f[2] else {})} for f in flows],
    }
