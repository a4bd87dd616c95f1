"""The Python API: ``ccarena.run(scenario) -> Result``."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ScenarioError
from .rundir import check_target
from .scenario import ResolvedScenario, load_scenario

if TYPE_CHECKING:
    from .results import Result


def simulate(
    scenario: ResolvedScenario, series: bool = True, progress: Callable[[int], object] | None = None
) -> dict[str, Any]:
    """Run the engine on a resolved scenario; the raw result as a dict: the
    counters (``flows``, ``link``, ``events``) and, unless ``series`` is
    false (a sweep point that keeps only its summary), ``flow_series`` and
    ``link_series``, each column a numpy array over the engine's buffer;
    with workloads, ``workloads`` (their counts) and ``workload_flows``
    (a record per flow, with its time alone: workload_results.py).
    ``progress(now_ns)``, if given, is called with the simulated time about
    every 50 ms of wall time while the engine runs (ccarena.progress)."""
    from . import _core

    try:
        text, flow_columns, link_columns, workload_columns = _core.simulate(
            json.dumps(scenario.config), series, progress)
    except ValueError as err:
        # The engine names the field ("flows[0].cc: ..."); keep one line.
        message = str(err).strip().splitlines()[0] if str(err).strip() else "rejected by the simulator"
        path, sep, problem = message.partition(": ")
        raise (ScenarioError(path, problem) if sep else ScenarioError("scenario", message)) from None
    raw = json.loads(text)
    if series:
        raw["flow_series"] = _columns(flow_columns)
        raw["link_series"] = _columns(link_columns)
    _add_alone_fcts(scenario.config, raw)
    if scenario.config.get("workloads"):
        from .workload_results import add_alone_fcts

        raw["workload_flows"] = _columns(workload_columns)
        add_alone_fcts(scenario.config, raw)
    return raw


def _add_alone_fcts(config: Mapping[str, Any], raw: dict[str, Any]) -> None:
    """For each sized flow, ``fct_alone_ns``: its completion time alone on
    the empty path (the same flow, started at 0, on the same bottleneck and
    host model, for the run's duration; None if it does not finish), what
    its slowdown divides by. One run per distinct flow."""
    from . import _core

    alone: dict[str, int | None] = {}
    for flow, res in zip(config["flows"], raw["flows"], strict=True):
        if flow.get("size_bytes") is None:
            continue
        solo = {**flow, "start_ns": 0, "stop_ns": None}
        key = json.dumps(solo, sort_keys=True)
        if key not in alone:
            cfg = {**config, "flows": [solo], "measure_from_ns": 0, "measure_to_ns": config["duration_ns"]}
            text, _, _, _ = _core.simulate(json.dumps(cfg), False, None)
            alone[key] = json.loads(text)["flows"][0].get("fct_ns")
        res["fct_alone_ns"] = alone[key]


def _columns(columns: list[tuple[str, str, bytes]]) -> dict[str, Any]:
    import numpy as np

    return {name: np.frombuffer(data, dtype=np.dtype(code)) for name, code, data in columns}


def run(
    scenario: str | Path | Mapping[str, Any] | ResolvedScenario,
    out: str | Path | None = None,
    overrides: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None,
) -> Result:
    """Simulate a scenario (a TOML path or text, a dict, or an already
    resolved scenario), optionally with dotted-path ``overrides``
    (``{"bottleneck.rate": "50Mbit", "flow.1.rtt": "30ms"}``).

    With ``out``, the run directory (summary.json, timeseries.parquet,
    link.parquet, goodput.png; with workloads flows.parquet) is written
    there atomically; without it,
    nothing is written (call ``Result.save(dir)`` later if wanted).
    Raises :class:`ScenarioError` for a bad scenario, before simulating.
    """
    if isinstance(scenario, ResolvedScenario):
        if overrides:
            raise ScenarioError("overrides", "cannot override an already resolved scenario")
        resolved = scenario
    else:
        resolved = load_scenario(scenario, overrides)
    if out is not None:
        if not isinstance(out, str | Path):
            raise ScenarioError("out", f"expected a directory path, got {type(out).__name__}")
        check_target(Path(out))
    from .results import Result

    result = Result(resolved, simulate(resolved))
    if out is not None:
        result.save(out)
    return result
