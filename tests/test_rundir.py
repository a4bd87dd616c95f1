"""`--out` never costs a user's data: ccarena replaces only a directory it
wrote itself (marked, and holding nothing it did not write) or an empty
one, refuses anything else before simulating, and removes the temporary
directories a killed run left behind."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import ccarena
from ccarena import rundir
from ccarena.experiments.reproduce import reproduce
from conftest import run_cli

DOC = {
    "duration": "2s",
    "bottleneck": {"rate": "10Mbit", "buffer": "100pkt"},
    "flow": [{"cc": "cubic", "rtt": "20ms"}],
}
SCENARIO = """\
duration = "2s"
[bottleneck]
rate = "10Mbit"
buffer = "100pkt"
[[flow]]
cc = "cubic"
rtt = "20ms"
"""


def _refused(proc, fragment):
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("ccarena: error: --out: "), proc.stderr
    assert fragment in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert "running" not in proc.stderr


def test_a_users_file_in_an_earlier_run_directory_is_kept(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    assert run_cli("run", "s.toml", "--out", "out", cwd=tmp_path).returncode == 0
    (tmp_path / "out" / "notes.txt").write_text("mine")
    _refused(run_cli("run", "s.toml", "--out", "out", cwd=tmp_path), "holds files ccarena did not write (notes.txt)")
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"
    # Without it, the earlier run is ccarena's to replace.
    (tmp_path / "out" / "notes.txt").unlink()
    assert run_cli("run", "s.toml", "--out", "out", cwd=tmp_path).returncode == 0


def test_the_directory_holding_the_scenario_is_not_a_run_directory(tmp_path):
    exp = tmp_path / "exp"
    exp.mkdir()
    (exp / "s.toml").write_text(SCENARIO)
    _refused(run_cli("run", "exp/s.toml", "--out", "exp", cwd=tmp_path), "is not a ccarena run directory")
    assert (exp / "s.toml").read_text() == SCENARIO
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp"]


def test_an_empty_directory_becomes_the_run_directory(tmp_path):
    (tmp_path / "out").mkdir()
    ccarena.run(DOC, out=tmp_path / "out")
    assert (tmp_path / "out" / "summary.json").is_file()
    assert rundir.is_run_dir(tmp_path / "out")


def test_result_save_refuses_a_users_directory(tmp_path):
    result = ccarena.run(DOC)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    with pytest.raises(ccarena.ScenarioError, match="not a ccarena run directory"):
        result.save(mine)
    assert (mine / "thesis.tex").read_text() == "years of work"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine"]


def test_api_rejects_an_out_that_is_not_a_path(tmp_path):
    with pytest.raises(ccarena.ScenarioError, match="expected a directory path"):
        ccarena.run(DOC, out=5)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporaries_of_a_killed_run_are_removed_by_the_next_one(tmp_path):
    dead, alive = _dead_pid(), os.getpid()
    stale = tmp_path / f".out.tmp-{dead}-abc123"
    running = tmp_path / f".out.tmp-{alive}-def456"
    lookalike = tmp_path / f".out.tmp-{dead}-ghi789"  # no marker: not ours
    for d in (stale, running, lookalike):
        d.mkdir()
        (d / "summary.json").write_text("half")
    rundir.mark(stale)
    rundir.mark(running)
    ccarena.run(DOC, out=tmp_path / "out")
    assert not stale.exists()
    assert running.exists() and lookalike.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", running.name, lookalike.name])


def test_reproduce_leaves_an_index_it_did_not_write_alone(tmp_path):
    (tmp_path / "index.md").write_text("# my notes\n")
    with pytest.raises(ccarena.ScenarioError, match="was not written by ccarena"):
        reproduce(["bbq-fig1"], tmp_path, quick=True, index=True, progress=None)
    assert (tmp_path / "index.md").read_text() == "# my notes\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.md"]


def test_reproduce_refuses_an_unwritable_out_before_running(tmp_path):
    proc = run_cli("reproduce", "bbq-fig1", "--quick", "--out", "/proc/ccarena-test", cwd=tmp_path)
    _refused(proc, "cannot create")
    assert "[1/" not in proc.stderr
