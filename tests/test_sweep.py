"""`ccarena sweep`: grid expansion, validation before anything runs, the
point cache (a rerun and a resumed sweep recompute nothing finished), the
Parquet table, and the Ray executor giving the local executor's bytes."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ccarena.errors import ScenarioError
from ccarena.sweep import load_sweep, run_sweep
from conftest import run_cli

#: A short two-flow scenario: each point simulates in well under a second.
BASE = """\
duration = "6s"
seed = 1
[measure]
from = "2s"
[bottleneck]
rate = "20Mbit"
buffer = "1BDP"
[[flow]]
cc = "bbr"
rtt = "10ms"
[[flow]]
cc = "cubic"
rtt = "40ms"
"""

SMALL = BASE + """
[sweep]
"bottleneck.rate" = ["10Mbit", "20Mbit"]
"flow.1.rtt" = ["20ms", "40ms"]
seeds = [1, 2]
"""


def write(tmp_path: Path, text: str, name: str = "sweep.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_grid_is_the_product_of_the_axes_in_file_order_seeds_innermost(tmp_path):
    sweep = load_sweep(write(tmp_path, SMALL))
    assert list(sweep.axes) == ["bottleneck.rate", "flow.1.rtt", "seed"]
    labels = [p.label() for p in sweep.points]
    assert len(labels) == 8
    assert labels[0] == "bottleneck.rate=10Mbit flow.1.rtt=20ms seed=1"
    assert labels[1] == "bottleneck.rate=10Mbit flow.1.rtt=20ms seed=2"
    assert labels[7] == "bottleneck.rate=20Mbit flow.1.rtt=40ms seed=2"
    p = sweep.points[5]
    assert p.scenario.config["bottleneck"]["rate_bps"] == 20_000_000
    assert p.scenario.config["flows"][1]["rtt_ns"] == 20_000_000
    assert p.scenario.config["seed"] == 2


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('"flow.1.rtt" = ["20ms", "soon"]', "flow[1].rtt"),
        ('"flow.1.rtt" = "20ms"', 'sweep."flow.1.rtt": expected a non-empty list'),
        ('"flow.1.rtt" = []', 'sweep."flow.1.rtt": expected a non-empty list'),
        ('seeds = [1, -2]', "sweep.seeds: expected non-negative integers"),
        ('seed = [1, 2]', "sweep.seed: give the seeds as seeds = [...]"),
        ('"flow.7.rtt" = ["20ms"]', "flow.7 (sweep point 0: flow.7.rtt=20ms): index out of range"),
        ('"bottleneck.rate" = ["1Mbit", "1Mbit"]', "lists a value twice"),
    ],
)
def test_a_bad_sweep_is_one_line_exit_2_and_nothing_written(tmp_path, table, message):
    path = write(tmp_path, BASE + "[sweep]\n" + table + "\n")
    out = tmp_path / "out"
    proc = run_cli("sweep", path, "--out", out)
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ccarena: error: ") and message in lines[0], proc.stderr
    assert not out.exists()


def test_a_bad_point_names_the_point_and_its_values(tmp_path):
    with pytest.raises(ScenarioError) as err:
        load_sweep(write(tmp_path, BASE + '[sweep]\n"flow.1.rtt" = ["20ms", "soon"]\nseeds = [1, 2]\n'))
    assert "sweep point 2: flow.1.rtt=soon seed=1" in str(err.value)


def test_no_sweep_table_and_a_sweep_file_given_to_run(tmp_path):
    proc = run_cli("sweep", write(tmp_path, BASE), "--out", tmp_path / "o")
    assert proc.returncode == 2 and "sweep: missing" in proc.stderr
    proc = run_cli("run", write(tmp_path, SMALL), "--out", tmp_path / "o")
    assert proc.returncode == 2 and "this is a sweep file" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_a_directory_that_is_not_a_sweeps_is_left_alone(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("precious")
    proc = run_cli("sweep", write(tmp_path, SMALL), "--out", mine)
    assert proc.returncode == 2 and "is not a ccarena sweep directory" in proc.stderr
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_the_table_has_a_row_per_point_that_run_point_reproduces(tmp_path):
    sweep_file = write(tmp_path, SMALL)
    out = tmp_path / "out"
    proc = run_cli("sweep", sweep_file, "--out", out, "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert "points: 8 (0 cached, 8 computed)" in proc.stdout
    table = pq.read_table(out / "points.parquet").to_pylist()
    assert [row["point"] for row in table] == list(range(8))
    assert [row["flow.1.rtt"] for row in table] == ["20ms", "20ms", "40ms", "40ms"] * 2
    assert [row["seed"] for row in table] == [1, 2] * 4
    assert {row["rate_mbps"] for row in table} == {10.0, 20.0}
    for row in table:
        assert row["flow.0.share"] + row["flow.1.share"] == pytest.approx(1, abs=1e-5)
        assert 0 < row["utilization"] <= 1
    # Each point ran its own scenario (seed included).
    index = json.loads((out / "sweep.json").read_text())
    seeds = [
        json.loads((out / "points" / f"{e['key']}.json").read_text())["summary"]["scenario"]["config"]["seed"]
        for e in index["points"]
    ]
    assert seeds == [1, 2] * 4

    # A point alone, by the command sweep.json records, gives the same summary.
    entry = index["points"][5]
    assert entry["command"] == f"ccarena run {sweep_file} --point 5"
    proc = run_cli("run", sweep_file, "--point", "5", "--out", tmp_path / "p5")
    assert proc.returncode == 0, proc.stderr
    alone = json.loads((tmp_path / "p5" / "summary.json").read_text())
    cached = json.loads((out / "points" / f"{entry['key']}.json").read_text())["summary"]
    assert alone == cached
    assert table[5]["flow.0.share"] == alone["flows"][0]["share"]


def test_relative_files_are_the_sweep_files_wherever_points_run(tmp_path):
    """A sweep's size file, host model file and link trace are relative
    to the sweep file, in its base and in its axes, for the sweep and for
    `run --point`, also when the working directory holds files of the
    same names (which must not be read)."""
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "sizes.cdf").write_text("1000 0\n2000 1\n")
    (tmp_path / "sizes.cdf").write_text("50000 0\n51000 1\n")
    (sub / "host.toml").write_text("start_spread_ns = 1000\n")
    (tmp_path / "host.toml").write_text("start_spread_ns = 2000\n")
    (sub / "link.trace").write_text("1\n2\n")
    (tmp_path / "link.trace").write_text("1\n")
    write(sub, """duration = "2s"
[measure]
from = "1s"
[[link]]
name = "a"
trace = "link.trace"
buffer = "50KB"
[[flow]]
cc = "bbr"
rtt = "10ms"
path = ["a"]
[[workload]]
cc = "cubic"
rtt = "10ms"
path = ["a"]
sizes = "sizes.cdf"
load = 0.3
[sweep]
host = ["host.toml", "linux"]
""", "w.toml")
    proc = run_cli("sweep", "sub/w.toml", "--out", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    index = json.loads((tmp_path / "out" / "sweep.json").read_text())
    point = [json.loads((tmp_path / "out" / "points" / f"{e['key']}.json").read_text())["summary"]
             for e in index["points"]]
    proc = run_cli("run", "sub/w.toml", "--point", "0", "--out", "p0", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    alone = json.loads((tmp_path / "p0" / "summary.json").read_text())
    for summary in (point[0], alone):
        config = summary["scenario"]["config"]
        assert config["host"]["start_spread_ns"] == 1000
        assert [w["mean_size_bytes"] for w in summary["workloads"]] == [1500.0]
        assert summary["scenario"]["input"]["link"][0]["trace"] == str(sub / "link.trace")
    assert alone == point[0]


def test_seeds_and_parameters_up_to_the_largest_u64_make_a_table(tmp_path):
    """Seeds and u64 parameters are valid up to 2^64 - 1, beyond Arrow's
    int64: their columns are uint64 (a mixed column of -1 and 2^64 - 1 is
    text, as any axis of mixed kinds)."""
    top = (1 << 64) - 1
    sweep_file = write(tmp_path, BASE.replace('"6s"', '"1s"').replace('from = "2s"', 'from = "0.5s"') + f"""
[sweep]
"flow.0.params.cwnd_min_target" = [{top}, 4]
seeds = [{top}]
""")
    proc = run_cli("sweep", sweep_file, "--out", tmp_path / "out", "--jobs", "1")
    assert proc.returncode == 0, proc.stderr
    table = pq.read_table(tmp_path / "out" / "points.parquet")
    assert str(table.schema.field("seed").type) == "uint64"
    assert table.column("seed").to_pylist() == [top, top]
    assert table.column("flow.0.params.cwnd_min_target").to_pylist() == [top, 4]
    from ccarena.sweep.table import _column
    assert _column([-1, top]).to_pylist() == ["-1", str(top)]


def test_a_rerun_computes_nothing_and_writes_the_same_bytes(tmp_path):
    sweep_file = write(tmp_path, SMALL)
    out = tmp_path / "out"
    first = run_sweep(sweep_file, out, jobs=2, progress=False)
    assert (first.cached, first.computed) == (0, 8)
    before = (out / "points.parquet").read_bytes()
    again = run_sweep(sweep_file, out, jobs=2, progress=False)
    assert (again.cached, again.computed) == (0 + 8, 0)
    assert (out / "points.parquet").read_bytes() == before
    # A wider sweep (same name: the name is in each summary) into the same
    # directory computes only the new points.
    (tmp_path / "wider").mkdir()
    wider = write(tmp_path / "wider", SMALL.replace("seeds = [1, 2]", "seeds = [1, 2, 3]"))
    more = run_sweep(wider, out, jobs=2, progress=False)
    assert (more.cached, more.computed) == (8, 4)


def test_a_killed_sweep_resumes_without_recomputing_finished_points(tmp_path):
    # 12 points, one worker: slow enough to kill half-way.
    sweep_file = write(
        tmp_path, BASE.replace('duration = "6s"', 'duration = "30s"') + '[sweep]\n"flow.1.rtt" = ["20ms", "30ms", "40ms"]\nseeds = [1, 2, 3, 4]\n'
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "ccarena", "sweep", str(sweep_file), "--out", str(out), "--jobs", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    points = out / "points"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if points.is_dir() and len(list(points.glob("*.json"))) >= 4:
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the sweep finished before it could be killed"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {p.name: (p.stat().st_ino, p.stat().st_mtime_ns) for p in points.glob("*.json")}
    assert 4 <= len(finished) < 12
    assert not (out / "points.parquet").exists()

    proc = run_cli("sweep", sweep_file, "--out", out, "--jobs", "2")
    assert proc.returncode == 0, proc.stderr
    assert f"points: 12 ({len(finished)} cached, {12 - len(finished)} computed)" in proc.stdout
    for name, stamp in finished.items():
        p = points / name
        assert (p.stat().st_ino, p.stat().st_mtime_ns) == stamp, f"{name} was written again"
    assert len(list(points.glob("*.json"))) == 12
    assert not list(points.glob(".*"))  # no temporary file of the killed run is left
    fresh = run_sweep(sweep_file, tmp_path / "fresh", jobs=2, progress=False)
    assert fresh.table.read_bytes() == (out / "points.parquet").read_bytes()


def test_save_runs_writes_each_points_run_directory(tmp_path):
    sweep = BASE + '[sweep]\n"flow.1.rtt" = ["20ms", "40ms"]\n'
    out = tmp_path / "out"
    done = run_sweep(write(tmp_path, sweep), out, save_runs=True, jobs=1, progress=False)
    assert done.computed == 2
    for name in ("00000", "00001"):
        run = out / "runs" / name
        assert {"summary.json", "timeseries.parquet", "link.parquet", "goodput.png"} <= {p.name for p in run.iterdir()}
    assert not (tmp_path / "plain" / "runs").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def ray_cluster(monkeypatch):
    """A local Ray head started for the test (as a cluster would be), with
    token authentication (Ray's default from 2.59: the head and every
    client share RAY_AUTH_TOKEN), stopped after."""
    pytest.importorskip("ray", reason="the Ray executor's extra (pip install 'ccarena[ray]'; make test installs it)")
    monkeypatch.setenv("RAY_AUTH_MODE", "token")
    monkeypatch.setenv("RAY_AUTH_TOKEN", secrets.token_hex(16))
    ray_bin = shutil.which("ray", path=str(Path(sys.executable).parent))
    assert ray_bin, "the ray command is missing next to the interpreter"
    port = _free_port()
    temp = Path(f"/tmp/ccarena-ray-{os.getpid()}")
    started = subprocess.run(
        [ray_bin, "start", "--head", "--num-cpus", "2", "--port", str(port), "--temp-dir", str(temp),
         "--include-dashboard", "false", "--disable-usage-stats"],
        capture_output=True, text=True, timeout=180, check=False,
    )
    try:
        assert started.returncode == 0, started.stderr[-2000:]
        yield f"127.0.0.1:{port}"
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True, timeout=120, check=False)
        shutil.rmtree(temp, ignore_errors=True)


def test_the_ray_executor_gives_the_local_executors_bytes(tmp_path, ray_cluster):
    sweep_file = write(tmp_path, SMALL)
    local = run_sweep(sweep_file, tmp_path / "local", jobs=2, progress=False)
    proc = run_cli("sweep", sweep_file, "--out", tmp_path / "ray", "--executor", "ray", "--address", ray_cluster)
    assert proc.returncode == 0, proc.stderr
    assert "points: 8 (0 cached, 8 computed)" in proc.stdout
    assert (tmp_path / "ray" / "points.parquet").read_bytes() == local.table.read_bytes()
    for path in (tmp_path / "local" / "points").glob("*.json"):
        assert (tmp_path / "ray" / "points" / path.name).read_bytes() == path.read_bytes()


def test_executor_errors_are_usage_errors(tmp_path):
    sweep_file = write(tmp_path, SMALL)
    proc = run_cli("sweep", sweep_file, "--out", tmp_path / "o", "--executor", "slurm")
    assert proc.returncode == 2 and "--executor: expected one of local, ray" in proc.stderr
    proc = run_cli("sweep", sweep_file, "--out", tmp_path / "o", "--address", "auto")
    assert proc.returncode == 2 and "--address: only with --executor ray" in proc.stderr
    assert not (tmp_path / "o").exists()
