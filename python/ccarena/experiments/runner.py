"""Running many scenarios at once: one process per core.

Runs are independent and each is deterministic (its scenario carries its
seed), so the order in which they finish changes nothing but the progress
lines. The longest runs are submitted first so that a sweep does not end
waiting on one 1 Gbit/s run started last.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

import numpy as np

from .framework import Outcome, RunSpec

#: progress(done, total, key, wall_s), called once per finished run.
Progress = Callable[[int, int, str, float], None]


class RunFailed(RuntimeError):
    """A run of an experiment failed (a bug in the experiment or the engine,
    not bad user input): names the run."""

    def __init__(self, key: str, err: BaseException) -> None:
        super().__init__(f"run {key} failed: {describe(err)}")


def describe(err: BaseException) -> str:
    """``Type: message`` on one line (a worker's error arrives already
    described, as a plain RuntimeError)."""
    detail = " ".join(str(err).split())
    if isinstance(err, _WorkerError):
        return detail
    return f"{type(err).__name__}: {detail}" if detail else type(err).__name__


class _WorkerError(RuntimeError):
    """An error raised in a worker process, reduced to its description, so
    that any exception type (whatever its constructor) gets back to the
    parent."""


def run_in_worker(spec: RunSpec) -> Outcome:
    """:func:`run_one` in a pool process: errors come back as one picklable type."""
    try:
        return run_one(spec)
    except Exception as err:
        raise _WorkerError(describe(err)) from None


def run_one(spec: RunSpec) -> Outcome:
    """Simulate one spec and keep only what its analysis asked for."""
    from ..api import run

    started = time.perf_counter()
    result = run(spec.scenario)
    n_flows = len(result.summary["flows"])
    t_s = np.zeros(0)
    flow: dict[str, np.ndarray] = {}
    link: dict[str, np.ndarray] = {}
    if spec.flow_columns:
        table = result.timeseries
        # Rows are (interval, flow) with every flow in every interval.
        t_s = table.column("t_s").to_numpy()[::n_flows].copy()
        for col in spec.flow_columns:
            values = table.column(col).to_numpy(zero_copy_only=False).astype(np.float64)
            flow[col] = values.reshape(-1, n_flows).T.copy()
    if spec.link_columns:
        table = result.link
        t_s = table.column("t_s").to_numpy().copy()
        for col in spec.link_columns:
            link[col] = table.column(col).to_numpy(zero_copy_only=False).astype(np.float64)
    return Outcome(spec.key, result.summary, t_s, flow, link, time.perf_counter() - started)


def default_jobs() -> int:
    return os.cpu_count() or 1


def execute(specs: Sequence[RunSpec], jobs: int | None = None, progress: Progress | None = None) -> dict[str, Outcome]:
    """Run every spec (in ``jobs`` processes; 1 runs them here) and return
    the outcomes by key."""
    jobs = default_jobs() if jobs is None else jobs
    order = sorted(specs, key=lambda s: -s.cost)
    outcomes: dict[str, Outcome] = {}

    def done(outcome: Outcome) -> None:
        outcomes[outcome.key] = outcome
        if progress is not None:
            progress(len(outcomes), len(order), outcome.key, outcome.wall_s)

    if jobs <= 1 or len(order) <= 1:
        for spec in order:
            try:
                outcome = run_one(spec)
            except Exception as err:
                raise RunFailed(spec.key, err) from err
            done(outcome)
        return outcomes

    # forkserver: workers start from a clean interpreter, not a fork of a
    # process that may hold threads (pyarrow's pool) or matplotlib state.
    context = multiprocessing.get_context("forkserver")
    with ProcessPoolExecutor(max_workers=min(jobs, len(order)), mp_context=context) as pool:
        keys = {pool.submit(run_in_worker, spec): spec.key for spec in order}
        pending: set[Future[Outcome]] = set(keys)
        try:
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    try:
                        outcome = future.result()
                    except Exception as err:
                        raise RunFailed(keys[future], err) from err
                    done(outcome)
        except BaseException:
            for future in pending:
                future.cancel()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return outcomes
