"""Real Linux beside every judged row: the dated results files.

``ccarena reproduce NAME --live`` runs every run of an experiment again on
the live engine (the kernel's own BBR and CUBIC, ours loaded as BPF), one
after the other; each seed's scenario is one repetition (the live engine
draws nothing from the seed but random loss, so the repetitions differ as
real runs do), the first ``--live-reps`` (3) seeds of each point. The
experiment's own analysis then measures them exactly as it measures the
simulator's runs, and what it measured for each claim
(``Report.measured``) is recorded in a dated results file,
``docs/linux/YYYY-MM-DD.json``, committed with the code.

Every report then shows, per judged row, the paper, the simulator and
Linux: Linux judged against the paper by the same rule as the simulator
(verdict.py), and the simulator against Linux by that rule's two-sided
form (:func:`.verdict.sim_vs_linux`). A report reads the newest record of
its experiment across the files, so a results file may hold some
experiments and a later one others.

An experiment whose runs the testbed cannot carry (more flows than it
supports, samples finer than it takes, a bottleneck faster than this host
forwards, a host model of its own) is recorded with the reason and not
run: its rows say why.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from . import live_runs
from .framework import Experiment, Outcome, RunSpec
from .variants import first_seeds, seeds
from .verdict import MIN_REPS, Measured

#: Where the committed results files live (the repository's docs/linux/).
RESULTS_DIR = Path(__file__).resolve().parents[3] / "docs" / "linux"
#: A results file's "format" field: how a later run knows the file is ours.
FORMAT = "ccarena linux results"
VERSION = 1


@dataclass(frozen=True)
class Record:
    """What one ``--live`` pass found for one experiment."""

    experiment: str
    #: The day the runs were made (the file's name).
    date: str
    quick: bool
    #: Why the testbed cannot carry the experiment's runs; "" when they ran.
    cannot: str = ""
    #: Claim id -> what the experiment's analysis measured on Linux.
    measured: Mapping[str, Measured] = field(default_factory=dict)
    #: Live runs made (every repetition of every point).
    runs: int = 0
    #: Repetitions of each point (its first seeds' scenarios).
    reps: int = 0
    #: The host: kernel release and CPUs.
    host: Mapping[str, Any] = field(default_factory=dict)
    #: The results file it was read from (its name under docs/linux/).
    file: str = ""
    #: The days its runs were made, when a pass resumed runs kept from
    #: earlier days (:mod:`.live_runs`); () for one made on ``date``.
    days: tuple[str, ...] = ()

    @property
    def where(self) -> str:
        return f"docs/linux/{self.file or self.date + '.json'}"


# --- Measured <-> JSON (NaN as null: a repetition that measured nothing).

def _floats(xs: Sequence[float]) -> list[float | None]:
    return [None if not math.isfinite(float(x)) else round(float(x), 9) for x in xs]


def _unfloats(xs: Sequence[float | None]) -> list[float]:
    return [float("nan") if x is None else float(x) for x in xs]


def measured_to_json(m: Measured) -> dict[str, Any]:
    doc: dict[str, Any] = {}
    if len(m.values):
        doc["values"] = _floats(m.values)
    if m.members:
        doc["members"] = {k: _floats(v) for k, v in m.members.items()}
    if m.chains:
        doc["chains"] = {c: {k: _floats(v) for k, v in mem.items()} for c, mem in m.chains.items()}
    if m.alternatives:
        doc["alternatives"] = {k: measured_to_json(v) for k, v in m.alternatives.items()}
    if m.note:
        doc["note"] = m.note
    if m.resolution:
        doc["resolution"] = m.resolution
    return doc


def measured_from_json(doc: Mapping[str, Any]) -> Measured:
    return Measured(
        values=_unfloats(doc.get("values", ())),
        members={k: _unfloats(v) for k, v in doc.get("members", {}).items()},
        alternatives={k: measured_from_json(v) for k, v in doc.get("alternatives", {}).items()},
        note=str(doc.get("note", "")),
        chains={c: {k: _unfloats(v) for k, v in mem.items()} for c, mem in doc.get("chains", {}).items()},
        resolution=float(doc.get("resolution", 0.0)),
    )


def record_to_json(r: Record) -> dict[str, Any]:
    doc: dict[str, Any] = {"quick": r.quick, "runs": r.runs, "reps": r.reps, "host": dict(r.host)}
    if set(r.days) - {r.date}:
        doc["days"] = sorted(r.days)
    if r.cannot:
        doc["cannot"] = r.cannot
    doc["measured"] = {k: measured_to_json(v) for k, v in sorted(r.measured.items())}
    return doc


def record_from_json(name: str, date: str, doc: Mapping[str, Any]) -> Record:
    return Record(experiment=name, date=date, quick=bool(doc.get("quick", False)), cannot=str(doc.get("cannot", "")),
                  measured={k: measured_from_json(v) for k, v in doc.get("measured", {}).items()},
                  runs=int(doc.get("runs", 0)), reps=int(doc.get("reps", 0)), host=dict(doc.get("host", {})),
                  days=tuple(str(d) for d in doc.get("days", ())))


# --- The files.

def _read(path: Path) -> dict[str, Any] | None:
    """A results file's document, or None if the file is not one of ours."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("experiments"), dict):
        return None
    return doc


def latest(directory: Path = RESULTS_DIR) -> dict[str, Record]:
    """The newest record of each experiment over every results file in
    ``directory`` (files named by date, so the name orders them; files
    that are not ours are ignored)."""
    records: dict[str, Record] = {}
    if not directory.is_dir():
        return records
    for path in sorted(directory.glob("*.json")):
        doc = _read(path)
        if doc is None:
            continue
        for name, entry in doc["experiments"].items():
            records[name] = replace(record_from_json(name, str(doc.get("date") or path.stem), entry), file=path.name)
    return records


def default_path(today: datetime.date | None = None) -> Path:
    return RESULTS_DIR / f"{(today or datetime.date.today()).isoformat()}.json"


def check_writable(path: Path) -> None:
    """Fail (ScenarioError, nothing written) unless ``path`` is ours to
    write: absent, or a results file of ours (whose other experiments are
    kept); and its directory exists."""
    if not path.parent.is_dir():
        raise ScenarioError("--live-results", f"directory {path.parent} does not exist (give a path with --live-results)")
    if path.exists() and _read(path) is None:
        raise ScenarioError("--live-results", f"{path} exists and is not a ccarena Linux results file; not touching it")


def write(path: Path, records: Sequence[Record]) -> None:
    """Add ``records`` to the results file at ``path`` (its other
    experiments kept), atomically."""
    from ..rundir import write_file_atomic

    check_writable(path)
    doc = _read(path) if path.exists() else None
    experiments = dict(doc["experiments"]) if doc else {}
    for r in records:
        experiments[r.experiment] = record_to_json(r)
    dates = sorted({r.date for r in records} | ({doc["date"]} if doc and isinstance(doc.get("date"), str) else set()))
    out = {"format": FORMAT, "version": VERSION, "date": dates[-1] if dates else "",
           "experiments": {k: experiments[k] for k in sorted(experiments)}}
    write_file_atomic(path, json.dumps(out, indent=1, allow_nan=False) + "\n")


# --- Running.

def host(outcomes: Mapping[str, Outcome] | None = None) -> dict[str, Any]:
    """The host, and how its testbed's path behaved in ``outcomes``' runs:
    how many ran on a stalling path (docs/host.md, "Two machines, two
    testbeds"), so that a record can be read against the host model;
    the kernel's tick (``hz``, None where its config cannot be read) and
    the clock our BPF algorithms count (``bpf_clock``: "jiffies" since
    2026-11-28; a record without it ran them on ms of the µs clock)."""
    from ..live.hostmodel import kernel_hz

    doc: dict[str, Any] = {"kernel": platform.release(), "cpus": len(os.sched_getaffinity(0)), "hz": kernel_hz(),
                           "bpf_clock": "jiffies"}
    if outcomes:
        from ..live.hostmodel import path_stalled

        late = [(o.summary["live"]["delay_line"]["late_over_1ms"], o.summary["scenario"]["config"]["duration_ns"] / 1e9)
                for o in outcomes.values()]
        doc["late_over_1ms_per_s"] = round(sorted(n / s for n, s in late)[len(late) // 2], 2)  # the median run's
        doc["runs_on_a_stalling_path"] = sum(path_stalled(n, s) for n, s in late)
    return doc


def on_linux(spec: RunSpec) -> RunSpec:
    """The spec as the live engine runs it: a kernel algorithm with
    parameters (BBR with Linux 4.9's settings) is ours, cc/bbr.c loaded as
    BPF (``bbr@ccarena``), the only build that takes them; without
    parameters the kernel's own runs."""
    from ..live.ccs import SUFFIX, is_kernel_cc

    flows = []
    for flow in spec.scenario["flow"]:
        flow = dict(flow)
        if flow.get("params") and is_kernel_cc(str(flow["cc"])):
            flow["cc"] = f"{flow['cc']}{SUFFIX}"
        flows.append(flow)
    return replace(spec, scenario={**spec.scenario, "flow": flows})


def cannot_carry(specs: Sequence[RunSpec], capacity_mbps: float | None) -> str:
    """Why the live testbed cannot carry these runs ("" if it can): the
    live engine's own refusal of a scenario, or a bottleneck faster than
    1/HEADROOM of what this host forwards through the testbed."""
    from ..live import capacity
    from ..live.engine import load_live_scenario

    for spec in specs:
        if isinstance(spec.scenario.get("host"), dict):
            # The live engine drops `host` (its hosts are real): a run whose
            # timing is its own host table (bbr-delayed-acks' held ACKs)
            # would run without what it measures.
            return (f"run {spec.key}: its own host model (a [host] table) is the simulator's; the live engine's "
                    "hosts are real and take none")
        try:
            scenario = load_live_scenario(dict(on_linux(spec).scenario))
        except ScenarioError as err:
            return f"run {spec.key}: the live engine refuses it ({err})"
        if capacity_mbps is not None:
            rate_mbps = capacity.fastest_rate_bps(scenario.config) / 1e6
            if rate_mbps * capacity.HEADROOM > capacity_mbps:
                return (f"run {spec.key}: a {rate_mbps:g} Mbit/s bottleneck, more than 1/{capacity.HEADROOM:g} of "
                        f"what this host forwards through the testbed ({capacity_mbps:g} Mbit/s)")
    return ""


#: Repetitions of each point a live pass runs by default: the first seeds'
#: scenarios (the fewest the simulator is compared with, verdict.MIN_REPS).
DEFAULT_REPS = MIN_REPS


def run(exp: Experiment, paper: str, *, quick: bool, capacity_mbps: float | None, wait: float | None,
        log: Callable[[str], None], date: str, reps: int = DEFAULT_REPS,
        store: Path | None = None) -> tuple[Record, dict[str, Outcome]]:
    """Every run of ``exp`` with its first ``reps`` seeds on the live
    engine, analysed by the experiment's own analysis (over those seeds):
    its Record and the live outcomes by key. With ``store`` (a directory
    of kept runs), each run is kept there as it finishes and one kept
    earlier is not run again (:mod:`.live_runs`)."""
    with first_seeds(reps):
        record, outcomes = _run(exp, paper, quick=quick, capacity_mbps=capacity_mbps, wait=wait, log=log, date=date,
                                store=store)
        return replace(record, reps=len(seeds(quick))), outcomes


def _run(exp: Experiment, paper: str, *, quick: bool, capacity_mbps: float | None, wait: float | None,
         log: Callable[[str], None], date: str, store: Path | None) -> tuple[Record, dict[str, Outcome]]:
    from . import runner
    from .claims import of_experiment

    specs = exp.specs(quick)
    reason = cannot_carry(specs, capacity_mbps)
    if reason:
        log(f"ccarena: live: {exp.name}: not run: {reason}")
        return Record(exp.name, date, quick, cannot=reason, host=host()), {}
    outcomes: dict[str, Outcome] = {}
    days = {date}
    live = {s.key: on_linux(s) for s in specs}
    paths = {key: live_runs.path_of(store, exp.name, spec) for key, spec in live.items()} if store is not None else {}
    kept = {key: found for key, path in paths.items() if (found := live_runs.load(path)) is not None}
    if kept:
        log(f"ccarena: live: {exp.name}: {len(kept)} of {len(specs)} runs kept in {store} "
            f"(from {', '.join(sorted({day for _, day in kept.values()}))}), {len(specs) - len(kept)} to run")
    left_s = sum(s.duration_s for s in specs if s.key not in kept)
    ran_s = wall_s = 0.0
    for i, spec in enumerate(specs, 1):
        if spec.key in kept:
            outcome, day = kept[spec.key]
            outcomes[spec.key] = replace(outcome, key=spec.key)
            days.add(day)
            continue
        # What is left, at the wall time per simulated second so far
        # (set-up and teardown included), else at the runs' own length.
        eta = left_s * (wall_s / ran_s if ran_s else 1.0)
        log(f"ccarena: [live {exp.name} {i}/{len(specs)}] {spec.key} (~{_hours(eta)} left)")
        outcome = runner.run_live(live[spec.key], log=log, wait=wait)
        if store is not None:
            live_runs.store(paths[spec.key], outcome, date)
        outcomes[spec.key] = outcome
        ran_s += spec.duration_s
        left_s -= spec.duration_s
        wall_s += outcome.wall_s
    try:
        rep = exp.analyse(outcomes, None, quick)
    except Exception as err:  # noqa: BLE001 - recorded: the rows say why they have no Linux numbers
        from .runner import describe

        reason = f"its analysis could not measure the live runs ({describe(err)})"
        log(f"ccarena: live: {exp.name}: {reason}")
        return Record(exp.name, date, quick, cannot=reason, runs=len(specs), host=host(outcomes),
                      days=tuple(sorted(days))), outcomes
    judged = {c.id for c in of_experiment(paper, exp.name)}
    measured = {k: v for k, v in rep.measured.items() if k in judged}
    return Record(exp.name, date, quick, measured=measured, runs=len(specs), host=host(outcomes),
                  days=tuple(sorted(days))), outcomes


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 5400 else f"{seconds / 60:.0f} min"


def stderr_log(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
