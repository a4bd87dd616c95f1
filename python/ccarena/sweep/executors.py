"""Where a sweep's points run.

- ``local`` (the default): worker processes on this machine, one per core
  (:func:`ccarena.experiments.runner.execute`, the pool ``reproduce``
  uses).
- ``ray``: tasks on a Ray cluster (``pip install 'ccarena[ray]'``). With
  ``address`` (``auto``, ``HOST:PORT``, ``ray://HOST:10001``) it joins a
  running cluster; without, Ray starts a local one for the duration of
  the sweep. Every node must have this very build of ccarena: each task
  returns the build id it ran with, and a point computed by another
  build is refused (the sweep stops with the node's id).

Both call the same function for a point (``runner.run_one``) and give
the same results for the same points: each run is deterministic, and the
order in which they finish only changes the progress bar.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import ScenarioError
from ..experiments import runner
from ..experiments.framework import Outcome, RunSpec

EXECUTORS = ("local", "ray")

#: on_outcome(outcome): called in the parent as each point finishes.
OnOutcome = Callable[[Outcome], None]


def run(
    specs: Sequence[RunSpec],
    on_outcome: OnOutcome,
    *,
    executor: str = "local",
    jobs: int | None = None,
    address: str | None = None,
) -> None:
    """Run every spec on ``executor``, handing each outcome to ``on_outcome``."""
    if executor == "local":
        if address is not None:
            raise ScenarioError("--address", "only with --executor ray")
        runner.execute(specs, jobs=jobs, on_outcome=on_outcome)
    elif executor == "ray":
        _run_ray(specs, on_outcome, jobs=jobs, address=address)
    else:
        raise ScenarioError("--executor", f"expected one of {', '.join(EXECUTORS)}, got {executor!r}")


def check_executor(executor: str) -> None:
    """Fail before anything runs if ``executor`` cannot be used here."""
    if executor not in EXECUTORS:
        raise ScenarioError("--executor", f"expected one of {', '.join(EXECUTORS)}, got {executor!r}")
    if executor == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ScenarioError("--executor", "ray is not installed: pip install 'ccarena[ray]'") from None


def _ray_point(spec: RunSpec) -> tuple[str, Outcome]:
    """A Ray task: one point, and the build it ran with."""
    from .. import _core

    return _core.build_id(), runner.run_one(spec)


def _run_ray(specs: Sequence[RunSpec], on_outcome: OnOutcome, *, jobs: int | None, address: str | None) -> None:
    import ray

    from .. import _core

    started_here = not ray.is_initialized()
    if started_here:
        options = {"address": address} if address else {"num_cpus": jobs or runner.default_jobs()}
        ray.init(**options, include_dashboard=False, log_to_driver=False, configure_logging=False)
    pending: list = []
    try:
        task = ray.remote(num_cpus=1, max_retries=0)(_ray_point)
        # Longest first, as locally, so that the last task is a short one.
        pending = [task.remote(spec) for spec in sorted(specs, key=lambda s: -s.cost)]
        build = _core.build_id()
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for ref in done:
                try:
                    theirs, outcome = ray.get(ref)
                except ray.exceptions.RayTaskError as err:
                    raise runner.RunFailed("ray task", err.cause or err) from None
                if theirs != build:
                    raise ScenarioError(
                        "--executor", f"a Ray worker runs ccarena build {theirs}, this is {build}: install this build on every node"
                    )
                on_outcome(outcome)
    finally:
        for ref in pending:  # stopped early: leave a shared cluster idle
            ray.cancel(ref, force=True)
        if started_here:
            ray.shutdown()
