"""Where the wall time of `ccarena run` goes: the split `make bench` prints.

The parent starts a child interpreter that runs the real command as the
``ccarena`` script does (``ccarena.cli.main()`` with ``sys.argv`` set to
``ccarena run SCENARIO --out DIR``) with timers wrapped
around its phases, found by name as their modules are imported:

- imports: interpreter start-up to ``main``, plus every import done later
  (the CLI imports pyarrow and matplotlib lazily, so each phase's own time
  excludes the imports it triggers; imports on another thread count too);
- scenario: parsing and validating the TOML;
- simulation: ``api.simulate`` (the engine and decoding its buffers);
- summary: ``metrics.summarize``;
- tables, parquet, plot, scenario.toml: the parts of ``Result.save``;
- exit: from the command's ``atexit`` handlers to the end of the process
  (flushing the output; the interpreter's teardown, where the command
  does not skip it);
- other: the rest of the wall time (directory handling, printing). When
  phases overlap (imports on a thread while the engine runs), it is
  negative: minus the time the overlap saved.

Run alone: ``python bench/run_split.py [SCENARIO]`` (with ccarena importable).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

#: (phase, module, attribute) of each timed function. A name a version of
#: ccarena does not have is skipped, so the same child times older trees.
PHASES = [
    ("scenario", "ccarena.scenario", "load_scenario"),
    ("simulation", "ccarena.api", "simulate"),
    ("summary", "ccarena.metrics", "summarize"),
    ("tables", "ccarena.tables", "flow_table"),
    ("tables", "ccarena.tables", "link_table"),
    ("parquet", "pyarrow.parquet", "write_table"),
    ("plot", "ccarena.plots", "plot_goodput"),
    ("scenario.toml", "ccarena.results", "scenario_toml"),
]
ORDER = ["imports", "scenario", "simulation", "summary", "tables", "parquet", "plot", "scenario.toml", "exit", "other"]

CHILD = r"""
import builtins, importlib, json, sys, threading, time
started_at = float(sys.argv[1])
entered = time.time()
totals = {}
lock = threading.Lock()
local = threading.local()
phases = json.loads(sys.argv[2])
patched = set()

def charge(name, seconds):
    with lock:
        totals[name] = totals.get(name, 0.0) + seconds

def wrap(phase, function):
    # Imports and nested phases inside count as theirs, not this phase's.
    def timed(*args, **kwargs):
        outer = getattr(local, "excluded", 0.0)
        local.excluded = 0.0
        t0 = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            spent = time.perf_counter() - t0
            charge(phase, spent - local.excluded)
            local.excluded = outer + spent
    return timed

def patch_loaded():
    for phase, module, attribute in phases:
        key = (module, attribute)
        target = sys.modules.get(module)
        # A module being imported may not have the attribute yet.
        if key not in patched and hasattr(target, attribute):
            setattr(target, attribute, wrap(phase, getattr(target, attribute)))
            patched.add(key)

def timed_import(real_import):
    # Outermost imports of each thread (import statements, import_module).
    def timed(*args, **kwargs):
        depth = getattr(local, "depth", 0)
        local.depth = depth + 1
        t0 = time.perf_counter()
        try:
            return real_import(*args, **kwargs)
        finally:
            local.depth = depth
            if depth == 0:
                spent = time.perf_counter() - t0
                charge("imports", spent)
                local.excluded = getattr(local, "excluded", 0.0) + spent
                patch_loaded()
    return timed

builtins.__import__ = timed_import(builtins.__import__)
importlib.import_module = timed_import(importlib.import_module)
import atexit, contextlib, io

def report():
    # At exit, however the command ends the process (a newer one without
    # the interpreter's teardown, after running these handlers).
    totals["imports"] = totals.get("imports", 0.0) + entered - started_at
    print(json.dumps({"phases": totals, "finished_at": time.time()}), file=sys.__stdout__, flush=True)

atexit.register(report)
from ccarena import cli
# As the `ccarena` script calls it: the command is this process.
sys.argv = ["ccarena", "run", sys.argv[3], "--out", sys.argv[4]]
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    status = cli.main()
sys.exit(status)
"""


def split_once(scenario: Path) -> dict[str, float]:
    """One `ccarena run` in a fresh interpreter: seconds per phase, and
    ``total`` (the parent's wall time of the whole process)."""
    with tempfile.TemporaryDirectory(prefix="ccarena-split-") as tmp:
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started_at = time.time()
        t0 = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-c", CHILD, repr(started_at), json.dumps(PHASES), str(scenario), str(Path(tmp) / "run")],
            capture_output=True, text=True, check=False,
        )
        total = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"ccarena run exited {proc.returncode}: {proc.stderr}")
    child = json.loads(proc.stdout.strip().splitlines()[-1])
    phases = dict(child["phases"])
    phases["exit"] = started_at + total - child["finished_at"]
    phases["other"] = total - sum(phases.values())
    phases["total"] = total
    phases["cpu"] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return phases


def split(scenario: Path, repeats: int, engine: Callable[[], float]) -> dict[str, float]:
    """The per-phase medians over ``repeats`` runs (the machine is shared),
    and ``engine``: the median of as many runs of the engine alone
    (``engine()``: its wall seconds), each just before a command, so that
    both medians come from the same minutes of a machine whose speed
    drifts (the engine alone took 0.28-0.44 s within a minute, idle)."""
    runs = []
    for _ in range(repeats):
        alone = engine()
        runs.append({**split_once(scenario), "engine": alone})
    return {key: statistics.median(r.get(key, 0.0) for r in runs) for key in [*ORDER, "total", "cpu", "engine"]}


def describe(phases: dict[str, float], repeats: int) -> str:
    """The split as `make bench` prints it. "Everything else" is measured
    against the engine alone (its own process, nothing else running): the
    simulation phase inside the command can take longer, sharing the CPU
    with the imports that overlap it."""
    engine_alone_s = phases["engine"]
    outside = phases["total"] - engine_alone_s
    cells = " | ".join(f"{name} {phases[name]:.3f}" for name in ORDER)
    return (
        f"ccarena run split (s, median of {repeats}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores):\n"
        f"  {cells}\n"
        f"  total {phases['total']:.3f} s wall ({phases['cpu']:.3f} s CPU); the engine alone {engine_alone_s:.3f} s "
        f"(median of {repeats}, interleaved), everything else {outside:.3f} s "
        f"({outside / max(engine_alone_s, 1e-9):.2f}x the engine)"
    )


if __name__ == "__main__":
    import bench_sim
    from ccarena import load_scenario

    bench_sim.compile_package()
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else bench_sim.SCENARIO
    config = json.dumps(load_scenario(target).config)
    repeats = bench_sim.SPLIT_RUNS
    print(describe(split(target, repeats, lambda: bench_sim.run_engine(config)["wall_s"]), repeats))
