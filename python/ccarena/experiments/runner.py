"""Running many scenarios at once: one worker process per core.

Runs are independent and each is deterministic (its scenario carries its
seed), so the order in which they finish changes nothing but the progress
lines. The longest runs are submitted first so that a sweep does not end
waiting on one 1 Gbit/s run started last.

A worker is a fresh interpreter, ``python -P -c BOOT`` with the parent's
``sys.path``, that imports this module and nothing of its caller's:

- not ``__main__``: multiprocessing's spawn and forkserver re-import the
  main script in every worker, so a script calling :func:`execute` (or
  ``measure()``) without an ``if __name__ == "__main__":`` guard would
  start pools from inside its own workers;
- not a fork of the parent, which may hold threads (pyarrow's pool) or
  matplotlib state.

It reads pickled :class:`RunSpec` frames on stdin and answers each with
one frame on its original stdout (its fd 1 then points at stderr, so that
nothing printed during a run can corrupt a frame).

Workers live exactly as long as :func:`execute`:

- however it ends (every result in, a run failed, KeyboardInterrupt, or
  the CLI's ``Terminated`` for SIGTERM and SIGHUP), every worker is sent
  SIGKILL and reaped before it returns or raises. A worker holds nothing
  but a simulation in memory, so there is nothing to wait for, and the
  one in the middle of a 5-s run is stopped now, not when the run ends;
- if the parent dies without running any code (SIGKILL, a crash), the
  kernel kills the workers (``PR_SET_PDEATHSIG``);
- Ctrl-C at a terminal signals the whole foreground process group:
  workers ignore SIGINT and leave it to the parent. They start with SIGINT
  blocked (a mask survives exec), so a Ctrl-C while one is still starting
  up stays pending until it is ignored, instead of printing a traceback.
"""

from __future__ import annotations

import ctypes
import dataclasses
import os
import pickle
import selectors
import signal
import struct
import subprocess
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

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


def run_one(spec: RunSpec) -> Outcome:
    """Simulate one spec and keep only what its analysis asked for (the
    telemetry crosses from the engine only when a column is asked for,
    a derived metric needs it, or the run directory is written)."""
    from ..api import simulate
    from ..results import Result
    from ..scenario import load_scenario

    started = time.perf_counter()
    scenario = dataclasses.replace(load_scenario(spec.scenario), name=spec.name)
    wanted = spec
    if spec.derive:
        from ..sweep.derive import columns_for

        wanted = dataclasses.replace(spec, flow_columns=tuple(dict.fromkeys(spec.flow_columns + columns_for(spec.derive))))
    series = bool(wanted.flow_columns or wanted.link_columns or spec.out)
    engine_started = time.perf_counter()
    raw = simulate(scenario, series=series)
    engine_s = time.perf_counter() - engine_started
    result = Result(scenario, raw)
    if spec.out:
        result.save(spec.out)
    outcome = outcome_of(wanted, result, started)
    outcome.engine_s = engine_s
    if spec.derive:
        from ..sweep.derive import compute

        outcome.summary = {**outcome.summary, "derived": compute(spec.derive, outcome.summary, outcome.t_s, outcome.flow)}
        outcome.flow = {k: v for k, v in outcome.flow.items() if k in spec.flow_columns}
    return outcome


def run_live(spec: RunSpec, log: Callable[[str], None], wait: float | None = None) -> Outcome:
    """Run one spec on the live engine (real Linux TCP, our algorithms as
    BPF; root, holds the testbed, waiting ``wait`` s for it as ``run_live``
    does) and keep what its analysis asked for.
    The live engine writes the simulator's schema; what it cannot observe
    (e.g. the bandwidth estimate of a BPF algorithm) is null, NaN here.
    An analysis that reads a flow's own queue (``queue_bytes``) gets the
    userspace bottleneck, the only one that counts it (the kernel's bfifo
    keeps no per-flow backlog)."""
    from ..live.engine import load_live_scenario, run_live as run_on_testbed

    started = time.perf_counter()
    scenario = load_live_scenario(dict(spec.scenario))
    bottleneck = "userspace" if "queue_bytes" in spec.flow_columns else "auto"
    result = run_on_testbed(scenario, log=log, wait=wait, bottleneck=bottleneck)
    return outcome_of(spec, result, started)


def outcome_of(spec: RunSpec, result: Any, started: float) -> Outcome:
    """Reduce a finished run (an api/live ``Result``) to its :class:`Outcome`."""
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


def execute(
    specs: Sequence[RunSpec],
    jobs: int | None = None,
    progress: Progress | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
) -> dict[str, Outcome]:
    """Run every spec (in ``jobs`` worker processes; 1 runs them here) and
    return the outcomes by key; ``on_outcome`` sees each as it arrives (a
    sweep stores it at once). No worker outlives the call."""
    jobs = default_jobs() if jobs is None else jobs
    order = sorted(specs, key=lambda s: -s.cost)
    outcomes: dict[str, Outcome] = {}

    def done(outcome: Outcome) -> None:
        outcomes[outcome.key] = outcome
        if on_outcome is not None:
            on_outcome(outcome)
        if progress is not None:
            progress(len(outcomes), len(order), outcome.key, outcome.wall_s)

    # Without sys.executable (an embedded interpreter) there is no Python to start.
    if jobs <= 1 or len(order) <= 1 or not sys.executable:
        for spec in order:
            try:
                outcome = run_one(spec)
            except Exception as err:
                raise RunFailed(spec.key, err) from err
            done(outcome)
        return outcomes

    pending = deque(order)
    workers: list[_Worker] = []
    try:
        with selectors.DefaultSelector() as busy:
            for _ in range(min(jobs, len(order))):
                worker = _Worker()
                workers.append(worker)
                worker.give(pending.popleft())
                busy.register(worker.results, selectors.EVENT_READ, worker)
            while busy.get_map():
                for ready, _ in busy.select():
                    worker = ready.data
                    done(worker.receive())
                    if pending:
                        worker.give(pending.popleft())
                    else:
                        busy.unregister(ready.fileobj)
    finally:
        # Kill them all first, then reap: a second interrupt during the
        # reaping leaves zombies at worst, never a running worker.
        for worker in workers:
            worker.process.kill()
        for worker in workers:
            worker.close()
    return outcomes


# The parent side.

#: What a worker runs: argv[1] is the parent's pid, argv[2:] its sys.path.
_BOOT = "import sys; sys.path[:] = sys.argv[2:]; from ccarena.experiments.runner import worker_main; worker_main(int(sys.argv[1]))"


class _Worker:
    """A worker process, from the parent, and the run it is on."""

    def __init__(self) -> None:
        # Started with SIGINT blocked (a mask survives exec) until worker_main ignores it.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
        try:
            self.process = subprocess.Popen(
                # -P: no script directory or cwd in front of sys.path, which is set from argv.
                [sys.executable, "-P", "-c", _BOOT, str(os.getpid()), *(p for p in sys.path if isinstance(p, str))],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
            )
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.results = self.process.stdout
        self.key = ""

    def give(self, spec: RunSpec) -> None:
        self.key = spec.key
        try:
            _send(self.process.stdin.fileno(), spec)  # type: ignore[union-attr]
        except BrokenPipeError:
            raise RunFailed(spec.key, _WorkerError(self._death())) from None

    def receive(self) -> Outcome:
        reply = _receive(self.results.fileno())
        if reply is None:
            raise RunFailed(self.key, _WorkerError(self._death()))
        ok, value = reply
        if not ok:
            raise RunFailed(self.key, _WorkerError(value))
        return value

    def _death(self) -> str:
        """How the worker ended (it has, or is about to: its pipe is closed)."""
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            return "its worker process closed its pipe"
        if code >= 0:
            return f"its worker process exited with status {code}"
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"its worker process was killed by {name}"

    def close(self) -> None:
        """Reap the (killed) process and close its pipes."""
        self.process.wait()
        self.process.stdin.close()  # type: ignore[union-attr]
        self.results.close()


# The worker side.

#: <linux/prctl.h>
_PR_SET_PDEATHSIG = 1


def worker_main(parent_pid: int) -> None:
    """A worker's life: run the specs read on stdin until end of file."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
    if sys.platform.startswith("linux"):
        # SIGKILL when the thread that started us exits: the one in
        # execute(), which outlives its workers unless the process dies.
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")
    if os.getppid() != parent_pid:
        return  # the parent died before prctl: nobody to work for
    results = os.dup(1)
    os.dup2(2, 1)
    while (spec := _receive(0)) is not None:
        try:
            reply = (True, run_one(spec))
        except Exception as err:
            reply = (False, describe(err))
        try:
            _send(results, reply)
        except BrokenPipeError:
            return  # the parent is gone (and SIGKILL on its way): no traceback


# Frames: an 8-byte big-endian length, then a pickle.

_LENGTH = struct.Struct(">Q")


def _send(fd: int, obj: object) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> Any:
    """The next frame's object, or None if the other end closed the pipe
    before a whole frame."""
    length = _read(fd, _LENGTH.size)
    body = None if length is None else _read(fd, _LENGTH.unpack(length)[0])
    return None if body is None else pickle.loads(body)


def _read(fd: int, size: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < size:
        chunk = os.read(fd, min(size - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)
