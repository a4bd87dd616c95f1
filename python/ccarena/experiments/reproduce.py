"""`ccarena reproduce`: run experiments and write their reports.

All the runs of all the requested experiments go into one process pool
(so `reproduce all` keeps every core busy to the end); the analyses then
run one experiment at a time, each writing DIR/NAME/ atomically:
report.md, results.json and its PNGs. `all` also writes DIR/index.md,
a section per paper.

With ``live`` (``ccarena reproduce --live``), every run of every named
experiment is then repeated on the live engine, one at a time, each seed
a repetition; the experiment's own analysis measures them, and what it
measured per claim goes into a dated results file (docs/linux/DATE.json,
:mod:`.linux`) that every report reads for its Linux column. The runs an
experiment marks (:attr:`Experiment.live`) also reach its analysis under
``live/KEY``, for the prose that quotes them: what a report says about
real Linux is measured, never written into the source.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
from collections.abc import Sequence
from pathlib import Path

from ..progress import Progress
from ..rundir import atomic_dir, check_owned_file, check_target, first_line, kind_of, open_container, write_file_atomic
from ..errors import ScenarioError
from . import linux, live_runs, registry, report, runner
from .framework import LIVE_PREFIX, Experiment, Outcome, Report, Result, all_rows

REPORT = "report.md"
RESULTS = "results.json"
INDEX = "index.md"


def run_experiments(
    experiments: Sequence[Experiment], *, quick: bool, jobs: int | None = None,
    progress: runner.Progress | bool | None = None,
) -> dict[str, dict[str, Outcome]]:
    """Simulate every run of every experiment; outcomes per experiment, by
    run key. ``progress``: a callback per finished run, or True for a bar
    over all the runs (ccarena.progress: ``experiment/run`` of N)."""
    specs = []
    for exp in experiments:
        specs += [dataclasses.replace(s, key=f"{exp.name}/{s.key}") for s in exp.specs(quick)]
    if progress is True:
        with Progress(len(specs), what="reproduce", unit="run", log=True) as bar:
            outcomes = runner.execute(specs, jobs=jobs, progress=lambda _done, _total, key, _wall: bar.advance(key))
    else:
        outcomes = runner.execute(specs, jobs=jobs, progress=progress or None)
    per_experiment: dict[str, dict[str, Outcome]] = {exp.name: {} for exp in experiments}
    for key, outcome in outcomes.items():
        name, _, run_key = key.partition("/")
        outcome.key = run_key
        per_experiment[name][run_key] = outcome
    return per_experiment


def run_linux(
    experiments: Sequence[Experiment], outcomes: dict[str, dict[str, Outcome]], *, quick: bool, results: Path,
    wait: float | None = None, reps: int = linux.DEFAULT_REPS, store: Path | None = None,
) -> dict[str, list[str]]:
    """Every run of every experiment on the testbed (linux.run), each
    experiment's record added to ``results`` as soon as it is done, and
    with ``store`` (a directory of kept runs) each run kept there as it
    finishes, so that an interrupted pass resumes (live_runs.py); the
    runs an experiment marks for its own prose are added to ``outcomes``
    under ``live/KEY``. Returns those keys, per experiment."""
    from ..live.engine import check_prerequisites, host_capacity

    capacity = host_capacity(check_prerequisites(), linux.stderr_log)
    capacity_mbps = None if capacity is None else float(capacity["goodput_mbps"])
    date = results.stem if _is_date(results.stem) else datetime.date.today().isoformat()
    ran: dict[str, list[str]] = {}
    for exp in experiments:
        record, live = linux.run(exp, registry.paper_of(exp.name).key, quick=quick, capacity_mbps=capacity_mbps,
                                 wait=wait, log=linux.stderr_log, date=date, reps=reps, store=store)
        linux.write(results, [record])
        marked = [s.key for s in exp.live_specs(quick) if s.key in live]
        for key in marked:
            outcomes[exp.name][LIVE_PREFIX + key] = dataclasses.replace(live[key], key=LIVE_PREFIX + key)
        ran[exp.name] = [LIVE_PREFIX + key for key in marked]
    return ran


def _check_store(store: Path, field: str) -> None:
    """Fail (nothing written) unless ``store`` can hold the live runs:
    absent or a directory (``field`` names the option that chose it)."""
    if store.is_symlink() or (store.exists() and not store.is_dir()):
        raise ScenarioError(field, f"{store} exists and is not a directory of kept live runs; it is left alone: "
                                   f"choose another {field}")


def _is_date(text: str) -> bool:
    try:
        datetime.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def check_live(results: Path) -> None:
    """Fail before anything runs when --live cannot be honoured: the
    results file is not ours to write, or no testbed on this host."""
    linux.check_writable(results)
    from ..live.engine import check_prerequisites

    check_prerequisites()


def measure(name: str, *, quick: bool = False, jobs: int | None = None) -> Report:
    """Run one experiment and analyse it without writing anything or
    drawing figures: its numbers and comparison rows (what tests pin).
    Safe at a script's top level, without an ``if __name__ == "__main__":``
    guard: the workers never import the caller's ``__main__``."""
    exp = registry.get(name)
    outcomes = run_experiments([exp], quick=quick, jobs=jobs)[exp.name]
    rep = exp.analyse(outcomes, None, quick)
    rep.comparisons = all_rows(exp, registry.paper_of(name).key, rep, quick)
    return rep


def write_experiment(
    exp: Experiment, outcomes: dict[str, Outcome], out: Path, quick: bool, live_runs: Sequence[str] = ()
) -> tuple[Report, Result]:
    """Analyse and write DIR/NAME/ (all or nothing): report.md and
    results.json, both rendered from the experiment's :class:`Result`."""
    with atomic_dir(out / exp.name, "experiment") as tmp:
        rep = exp.analyse(outcomes, tmp, quick)
        result = Result.of(exp, registry.paper_of(exp.name).key, rep, quick, live_runs)
        (tmp / REPORT).write_text(report.markdown(result), encoding="utf-8")
        (tmp / RESULTS).write_text(report.results_json(result), encoding="utf-8")
    return rep, result


def _written_by_reproduce(entry: Path) -> bool:
    """An entry of a reproduction directory that ccarena wrote (for one an
    older ccarena left without its marker): an experiment's directory or
    the index."""
    if entry.is_dir():
        return kind_of(entry) == "experiment"
    return entry.name == INDEX and entry.is_file() and first_line(entry).startswith(report.INDEX_TITLE)


def check_outputs(names: Sequence[str], out: Path, *, index: bool) -> None:
    """Fail (ScenarioError, nothing written) unless DIR is (or can become)
    a reproduction's directory and every DIR/NAME can be written, and
    DIR/index.md with ``index``, without touching a user's files."""
    check_target(out, "reproduce", adopt=_written_by_reproduce)
    for name in names:
        check_target(out / name, "experiment")
    if index:
        check_owned_file(out / INDEX, report.INDEX_TITLE)


def open_output(out: Path) -> None:
    """Create DIR as a reproduction's directory (or adopt one an older
    ccarena wrote)."""
    open_container(out, "reproduce", adopt=_written_by_reproduce)


def reproduce(
    names: Sequence[str],
    out: Path,
    *,
    quick: bool = False,
    jobs: int | None = None,
    index: bool = False,
    live: bool = False,
    live_wait: float | None = None,
    live_results: Path | None = None,
    live_reps: int = linux.DEFAULT_REPS,
    live_store: Path | None = None,
    progress: runner.Progress | bool | None = True,
) -> list[tuple[Experiment, Result]]:
    """Run, analyse and write the named experiments under ``out``; with
    ``index``, also ``out/index.md``; with ``live``, also every run on the
    live engine (each waiting ``live_wait`` s for the testbed, as
    ``run_live``'s ``wait``), recorded in ``live_results`` (default:
    today's docs/linux/DATE.json), each run kept in ``live_store``
    (default ``out/live-runs``) as it finishes so that the same call again
    resumes (live_runs.py). Unknown names, unwritable outputs and
    (with ``live``) a host without the testbed raise ScenarioError before
    anything runs."""
    experiments = [registry.get(name) for name in names]
    check_outputs(names, out, index=index)
    results = live_results if live_results is not None else linux.default_path()
    if live:
        check_live(results)
        store = Path(live_store) if live_store is not None else Path(out) / live_runs.DIRNAME
        _check_store(store, "--out" if live_store is None else "--live-store")
    jobs = runner.default_jobs() if jobs is None else jobs
    started = time.perf_counter()
    outcomes = run_experiments(experiments, quick=quick, jobs=jobs, progress=progress)
    if live:
        open_output(out)  # by default the live runs are kept in it as they finish
    live_keys = (run_linux(experiments, outcomes, quick=quick, results=results, wait=live_wait, reps=live_reps,
                           store=store) if live else {})
    open_output(out)
    done = []
    results = []
    for exp in experiments:
        rep, result = write_experiment(exp, outcomes[exp.name], out, quick, live_keys.get(exp.name, ()))
        done.append((exp, result))
        results.append(result)
    if index:
        wall_s = time.perf_counter() - started
        runs = sum(len(v) for v in outcomes.values())
        write_file_atomic(out / INDEX, report.index_markdown(registry.PAPERS, results, quick, wall_s, runs, jobs))
    return done
