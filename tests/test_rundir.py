"""`--out` never costs a user's data: ccarena replaces only a directory it
wrote itself (marked, and holding nothing it did not write) or an empty
one, refuses anything else before simulating, and removes the temporary
directories a killed run left behind."""

from __future__ import annotations

import os
import shutil

import pytest

import ccarena
from ccarena import rundir
from ccarena.experiments.reproduce import reproduce
from conftest import assert_decoys_intact, dead_pid, plant_decoys, run_cli

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
SWEEP = SCENARIO + '[sweep]\n"flow.0.rtt" = ["20ms", "30ms"]\n'


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
    result = ccarena.run(DOC)
    for out in (5, None):
        with pytest.raises(ccarena.ScenarioError, match=r"^out: expected a directory path"):
            result.save(out)


def test_temporaries_of_a_killed_run_are_removed_by_the_next_one(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    stale = tmp_path / f".out.ccarena-tmp-{dead}-abc123"
    old = tmp_path / f".out.ccarena-old-{dead}-abc124"
    running = tmp_path / f".out.ccarena-tmp-{alive}-def456"
    lookalike = tmp_path / f".out.ccarena-tmp-{dead}-ghi789"  # no marker: not ours
    for d in (stale, old, running, lookalike):
        d.mkdir()
        (d / "summary.json").write_text("half")
    for d in (stale, old, running):
        rundir.mark(d)
    ccarena.run(DOC, out=tmp_path / "out")
    assert not stale.exists() and not old.exists()
    assert running.exists() and lookalike.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["out", running.name, lookalike.name])


def test_only_a_marked_temporary_directory_is_ever_removed(tmp_path):
    planted = plant_decoys(tmp_path)
    assert rundir.remove_stale_temporaries(tmp_path) == []
    assert_decoys_intact(planted)


# --------------------------------------------------------------------------
# A user's files named like ccarena's temporaries survive every command
# that writes (live run and compare: tests/test_live.py).


def test_run_and_result_save_leave_a_users_lookalike_files(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    planted = plant_decoys(tmp_path / "runs")
    assert run_cli("run", "s.toml", "--out", "runs/a", cwd=tmp_path).returncode == 0
    assert run_cli("run", "s.toml", "--out", "runs/a", cwd=tmp_path).returncode == 0  # replacing too
    ccarena.run(DOC).save(tmp_path / "runs" / "b")
    assert_decoys_intact(planted)


def test_sweep_leaves_a_users_lookalike_files(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    planted = plant_decoys(tmp_path / "runs")
    assert run_cli("sweep", "s.toml", "--out", "runs/sw", "--jobs", "1", cwd=tmp_path).returncode == 0
    # Inside the sweep's own directory too (a rerun writes its table again).
    planted |= plant_decoys(tmp_path / "runs" / "sw")
    assert run_cli("sweep", "s.toml", "--out", "runs/sw", "--jobs", "1", "--save-runs", cwd=tmp_path).returncode == 0
    assert_decoys_intact(planted)


def test_report_leaves_a_users_lookalike_files(tmp_path):
    ccarena.run(DOC, out=tmp_path / "run")
    planted = plant_decoys(tmp_path / "docs")
    proc = run_cli("report", tmp_path / "run", "--out", tmp_path / "docs" / "report.html")
    assert proc.returncode == 0, proc.stderr
    assert_decoys_intact(planted)


def test_reproduce_leaves_a_users_lookalike_files(tmp_path):
    planted = plant_decoys(tmp_path)
    assert run_cli("reproduce", "bbq-fig1", "--quick", "--out", "repro", cwd=tmp_path).returncode == 0
    assert rundir.kind_of(tmp_path / "repro") == "reproduce"
    assert rundir.kind_of(tmp_path / "repro" / "bbq-fig1") == "experiment"
    # Inside its own directory too, when it replaces the experiment.
    planted |= plant_decoys(tmp_path / "repro")
    assert run_cli("reproduce", "bbq-fig1", "--quick", "--out", "repro", cwd=tmp_path).returncode == 0
    assert_decoys_intact(planted)


# --------------------------------------------------------------------------
# One rule for every --out.


def test_no_command_writes_into_a_run_directory_or_a_users_directory(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    (tmp_path / "sw.toml").write_text(SWEEP)
    assert run_cli("run", "s.toml", "--out", "r", cwd=tmp_path).returncode == 0
    before = sorted(p.name for p in (tmp_path / "r").iterdir())
    _refused(run_cli("reproduce", "bbq-fig1", "--quick", "--out", "r", cwd=tmp_path),
             "r is a run directory of ccarena, not a reproduce's")
    _refused(run_cli("report", "r", "--out", "r/report.html", cwd=tmp_path), "is inside the ccarena run directory")
    _refused(run_cli("run", "s.toml", "--out", "r/nested", cwd=tmp_path), "is inside the ccarena run directory")
    _refused(run_cli("sweep", "sw.toml", "--out", "r", cwd=tmp_path), "r is a run directory of ccarena, not a sweep's")
    _refused(run_cli("scorecard", "--ccs", "reno,cubic", "--out", "r", cwd=tmp_path),
             "r is a run directory of ccarena, not a scorecard's")
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == before
    # compare checks --out before it needs the testbed (refused on any host).
    _refused(run_cli("compare", "s.toml", "--out", "r", cwd=tmp_path), "r is a run directory of ccarena, not a compare's")
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    for args in (["compare", "s.toml"], ["reproduce", "bbq-fig1", "--quick"], ["live", "run", "s.toml"]):
        _refused(run_cli(*args, "--out", "mine", cwd=tmp_path), "is not a ccarena")
    assert [p.name for p in mine.iterdir()] == ["thesis.tex"]


def test_a_reproduction_directory_of_an_older_ccarena_is_adopted(tmp_path):
    repro = tmp_path / "repro"
    assert run_cli("reproduce", "bbq-fig1", "--quick", "--out", repro).returncode == 0
    (repro / ".ccarena-reproduce").unlink()  # as an older ccarena left it
    assert run_cli("reproduce", "bbq-fig1", "--quick", "--out", repro).returncode == 0
    assert rundir.kind_of(repro) == "reproduce"


# --------------------------------------------------------------------------
# Input at fault: exit 2 and one line, never "internal".


def test_a_name_too_long_for_the_file_system_is_bad_input(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO)
    long = "x" * 300
    (tmp_path / "sw.toml").write_text(SWEEP)
    for args in (["run", "s.toml"], ["live", "run", "s.toml"], ["sweep", "sw.toml"], ["compare", "s.toml"]):
        _refused(run_cli(*args, "--out", long, cwd=tmp_path), "longer than a file name may be")
    _refused(run_cli("run", "s.toml", "--out", "y" * 240, cwd=tmp_path), "ccarena needs it at most")
    with pytest.raises(ccarena.ScenarioError, match="longer than a file name may be"):
        ccarena.run(DOC, out=tmp_path / long)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.toml", "sw.toml"]


def test_an_uncreatable_out_is_bad_input_for_every_command(tmp_path):
    (tmp_path / "s.toml").write_text(SWEEP)
    ccarena.run(DOC, out=tmp_path / "run")
    for args in (["sweep", "s.toml", "--out", "/proc/x"], ["scorecard", "--ccs", "reno,cubic", "--out", "/proc/x"],
                 ["report", "run", "--out", "/proc/x.html"]):
        _refused(run_cli(*args, cwd=tmp_path), "cannot create")


@pytest.mark.parametrize("text", ["{not json", '{"flows": 3}', "[]", '{"scenario": {"name": "x"}, "flows": [{}]}'])
def test_report_of_a_broken_summary_is_bad_input(tmp_path, text):
    ccarena.run(DOC, out=tmp_path / "run")
    (tmp_path / "run" / "summary.json").write_text(text)
    proc = run_cli("report", tmp_path / "run", "--out", tmp_path / "r.html")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"ccarena: error: {tmp_path / 'run' / 'summary.json'}: "), proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and "internal" not in proc.stderr
    assert not (tmp_path / "r.html").exists()


def test_reproduce_leaves_an_index_it_did_not_write_alone(tmp_path):
    (tmp_path / "index.md").write_text("# my notes\n")
    with pytest.raises(ccarena.ScenarioError, match="is not a ccarena reproduce directory"):
        reproduce(["bbq-fig1"], tmp_path, quick=True, index=True, progress=None)
    repro = rundir.open_container(tmp_path / "repro", "reproduce")
    (repro / "index.md").write_text("# my notes\n")
    with pytest.raises(ccarena.ScenarioError, match="was not written by ccarena"):
        reproduce(["bbq-fig1"], repro, quick=True, index=True, progress=None)
    assert (tmp_path / "index.md").read_text() == (repro / "index.md").read_text() == "# my notes\n"
    assert sorted(p.name for p in repro.iterdir()) == [".ccarena-reproduce", "index.md"]


def test_reproduce_refuses_an_unwritable_out_before_running(tmp_path):
    proc = run_cli("reproduce", "bbq-fig1", "--quick", "--out", "/proc/ccarena-test", cwd=tmp_path)
    _refused(proc, "cannot create")
    assert "[1/" not in proc.stderr


def test_a_dict_with_explicit_nones_saves_and_runs_again(tmp_path):
    """The API takes None for an optional key (as left out); scenario.toml
    (TOML has no null) leaves it out, and runs again to the same numbers."""
    doc = {"duration": "1s", "measure": None, "bottleneck": {"rate": "10Mbit", "buffer": "10pkt", "red": None},
           "flow": [{"cc": "bbr", "rtt": "10ms", "size": None, "jitter": None}]}
    first = ccarena.run(doc, out=tmp_path / "a")
    again = ccarena.run(tmp_path / "a" / "scenario.toml")
    assert again.summary["flows"] == first.summary["flows"]
