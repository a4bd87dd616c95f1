"""Helpers shared by the experiment modules: run keys, per-seed
aggregation, the per-point data table."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from .. import units
from .framework import LIVE_PREFIX, Outcome, Report, RunSpec, fair_distance

#: Telemetry the time-series figures use.
GOODPUT_COLUMNS = ("goodput_mbps",)
DEEP_COLUMNS = ("goodput_mbps", "cwnd", "inflight", "rtt_ms", "min_rtt_ms", "queue_bytes", "cc_mode",
                "pacing_gain", "bw_estimate_mbps")


def key(cc: str, seed: int, **point: object) -> str:
    """``cc/name=value/.../seed=N``: one run of a sweep point (``cc`` is
    the variant's name)."""
    parts = [cc] + [f"{name}={value}" for name, value in point.items()] + [f"seed={seed}"]
    return "/".join(parts)


def runs_of(outcomes: Mapping[str, Outcome], cc: str, seeds: Sequence[int], **point: object) -> list[Outcome]:
    return [outcomes[key(cc, seed, **point)] for seed in seeds]


def live_of(outcomes: Mapping[str, Outcome], cc: str, seed: int, **point: object) -> Outcome | None:
    """The live run of a point (``reproduce --live``), or None without --live."""
    return outcomes.get(LIVE_PREFIX + key(cc, seed, **point))


def summary_only(specs: Sequence[RunSpec], cc: str, seed: int) -> list[RunSpec]:
    """The specs of ``cc`` at ``seed`` with no telemetry columns: what an
    experiment repeats live (``Experiment.live``) when its live rows need
    only the summary."""
    wanted = [s for s in specs if s.key == key(cc, seed)]
    return [RunSpec(s.key, s.scenario) for s in wanted]


def values(runs: Sequence[Outcome], measure: Callable[[Outcome], float]) -> list[float]:
    return [float(measure(run)) for run in runs]


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def fair_gap(shares: Sequence[float], than: Sequence[float], n: int = 2) -> list[float]:
    """Per seed, how much further ``shares`` lie from the fair share 1/n
    than ``than`` do (seed i against seed i): negative where ``shares``
    are fairer (framework.fair_distance, never "more for the shorter
    flow")."""
    return [fair_distance(a, n) - fair_distance(b, n) for a, b in zip(shares, than, strict=True)]


def retransmit_rate(run: Outcome, flows: list[int] | None = None) -> float:
    """Retransmitted segments over all segments the ``flows`` (default:
    all) sent in the window: retransmits / (retransmits + delivered)."""
    idx = range(len(run.flows)) if flows is None else flows
    window = run.summary["window"]
    span = float(window["to_s"]) - float(window["from_s"])
    retx = sum(float(run.flows[i]["retransmits"]) for i in idx)
    delivered = sum(run.goodput(i) for i in idx) * 1e6 / 8 * span / units.MSS_BYTES
    return retx / (retx + delivered) if retx + delivered > 0 else 0.0



def markdown_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def cwnd_limited_fraction(run: Outcome, flow: int, lo: float, hi: float) -> float:
    """Fraction of the flow's samples in (lo, hi] where in-flight is at
    cwnd (needs the cwnd and inflight columns)."""
    from . import traces

    sel = traces.window(run.t_s, lo, hi)
    return traces.fraction(traces.cwnd_limited(run.flow["cwnd"][flow], run.flow["inflight"][flow]), sel)


#: Columns a sweep keeps so that its report can say why a point differs.
EVIDENCE_COLUMNS = ("cwnd", "inflight")


def finish(rep: Report, quick: bool) -> Report:
    """A --quick run (one seed, short runs) gives no verdicts: its rows
    keep their numbers and lose their verdicts."""
    if quick:
        rep.comparisons = [replace(c, agrees=None, reason=c.reason if c.agrees is None else "")
                           for c in rep.comparisons]
    return rep
