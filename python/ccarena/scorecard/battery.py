"""The scorecard's standard battery: which scenarios every algorithm runs,
and the criteria computed from them.

Every family is one sweep (so it is cached, resumable and can run on
Ray) over the algorithms and the seeds, at 100 Mbit/s with 60-s runs
measured over 20-60 s unless said otherwise. "X" is the algorithm under
test.

| family | flows | swept |
| --- | --- | --- |
| rtt | X vs X, base RTTs as pairs | (10, 20), (10, 50), (10, 100), (50, 100), (50, 250) ms: ratios 2-10, differences 10-200 ms; 2 BDP of the longer |
| cubic | X vs CUBIC, 40 ms each | buffer 0.5, 1, 2, 4, 8 BDP |
| single | one X flow, 40 ms, 1 BDP | 1% random loss |
| convergence | X vs X, 40 ms; the second joins at 10 s and leaves at 40 s | - (telemetry: sweep/derive.py) |
| fq_codel | X 10 ms vs X 50 ms behind fq_codel (Linux defaults), 2 BDP | - |
| short_flows | beyond-short-flows' scenario: one X flow, 10 ms, 1 Gbit/s, 1 BDP, next to CUBIC web-search flows at 0.5 load, 30 s measured over 5-30 s | - |
| parking_lot | beyond-parking-lot's scenario at 1 BDP: three links of 5 ms, one X flow across all three, one per link (hosts 10 ms) | - |

The criteria, each a number per algorithm and seed ("better" is its
direction), are defined in :data:`CRITERIA`. Each has a resolution: the
difference below which two algorithms are practically equal — 0.01 of
Jain's index, 0.5 points of utilisation (1 under random loss, whose runs
vary more), 2 ms of queueing delay, 0.05 retransmits per 100 segments,
0.5 s of convergence (what 100-ms telemetry smoothed over 1 s resolves),
1 point of share. Ranks do not order what the battery cannot tell apart
(see ``scorecard.rank``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import units
from ..experiments import variants
from ..experiments.beyond import parking_lot, short_flows

#: Simulated seconds of each run and the start of its measurement window.
DURATION = "60s"
MEASURE_FROM = "20s"
RATE = "100Mbit"
#: RTT pairs of the rtt family (ms): ratios 2 to 10 and absolute
#: differences 10 to 200 ms, the two dimensions the RTT-tuning blog
#: argues unfairness depends on.
RTT_PAIRS = ((10, 20), (10, 50), (10, 100), (50, 100), (50, 250))
#: Buffers of the cubic family (BDP of the 40-ms path).
CUBIC_BUFFERS = ("0.5bdp", "1bdp", "2bdp", "4bdp", "8bdp")
#: The pair of the latency-cheating incentive (BBQ paper, Fig. 7): a
#: 10 ms flow that adds 40 ms of delay to its own path, against an honest
#: 10 ms flow, is the 50 ms flow of the (10, 50) pair.
CHEAT_PAIR = (10, 50)
#: The parking lot's flows: one across every link, one per link.
PARKING_LOT_FLOWS = 1 + len(parking_lot.LINKS)


def _flow(cc: str, rtt_ms: int, **extra: Any) -> dict[str, Any]:
    return {"cc": cc, "rtt": f"{rtt_ms}ms", **extra}


def family_docs(ccs: Sequence[str], seeds: Sequence[int]) -> dict[str, dict[str, Any]]:
    """Each family as a sweep document (a scenario with its [sweep] table)."""
    base = {"duration": DURATION, "measure": {"from": MEASURE_FROM}}
    placeholder = ccs[0]
    return {
        "rtt": {
            **base,
            "bottleneck": {"rate": RATE, "buffer": "2bdp"},
            "flow": [_flow(placeholder, 10), _flow(placeholder, 50)],
            "sweep": {
                "flow.0.cc,flow.1.cc": [[cc, cc] for cc in ccs],
                "flow.0.rtt,flow.1.rtt": [[f"{a}ms", f"{b}ms"] for a, b in RTT_PAIRS],
                "seeds": list(seeds),
            },
        },
        "cubic": {
            **base,
            "bottleneck": {"rate": RATE, "buffer": "1bdp"},
            "flow": [_flow(placeholder, 40), _flow("cubic", 40)],
            "sweep": {"flow.0.cc": list(ccs), "bottleneck.buffer": list(CUBIC_BUFFERS), "seeds": list(seeds)},
        },
        "single": {
            **base,
            "bottleneck": {"rate": RATE, "buffer": "1bdp"},
            "flow": [_flow(placeholder, 40)],
            "sweep": {"flow.0.cc": list(ccs), "bottleneck.loss": [0.01], "seeds": list(seeds)},
        },
        "convergence": {
            **base,
            "bottleneck": {"rate": RATE, "buffer": "2bdp"},
            "flow": [_flow(placeholder, 40), _flow(placeholder, 40, start="10s", stop="40s")],
            "sweep": {"flow.0.cc,flow.1.cc": [[cc, cc] for cc in ccs], "seeds": list(seeds), "derive": ["convergence"]},
        },
        "fq_codel": {
            **base,
            "bottleneck": {"rate": RATE, "buffer": "2bdp", "aqm": "fq_codel"},
            "flow": [_flow(placeholder, 10), _flow(placeholder, 50)],
            "sweep": {"flow.0.cc,flow.1.cc": [[cc, cc] for cc in ccs], "seeds": list(seeds)},
        },
        # The beyond-* experiments' scenarios, one definition: the sweep
        # sets every flow's algorithm (and the seed) over the placeholder's.
        "short_flows": {
            **short_flows.scenario(variants.BBR.name, seed=seeds[0], duration=short_flows.DURATION_S),
            "sweep": {"flow.0.cc": list(ccs), "seeds": list(seeds)},
        },
        "parking_lot": {
            **parking_lot.scenario(variants.BBR, 1.0, seed=seeds[0], duration=units.parse_time(DURATION) / 1e9),
            "sweep": {",".join(f"flow.{i}.cc" for i in range(PARKING_LOT_FLOWS)):
                      [[cc] * PARKING_LOT_FLOWS for cc in ccs], "seeds": list(seeds)},
        },
    }


#: rows of one family's points.parquet for one algorithm and seed.
Rows = Sequence[Mapping[str, Any]]


def _mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs)


def _retransmit_pct(row: Mapping[str, Any]) -> float:
    """Flow 0's retransmitted segments per 100 it delivered in the window."""
    window_s = float(row["duration_s"]) - units.parse_time(MEASURE_FROM) / 1e9
    delivered = row["flow.0.goodput_mbps"] * 1e6 / 8 * window_s / units.MSS_BYTES
    return 100 * row["flow.0.retransmits"] / delivered if delivered > 0 else float("nan")


def _maxmin_jain(row: Mapping[str, Any]) -> float:
    """Jain's index of the parking lot's flows' goodputs, each over its
    max-min fair share (Jain, Chiu and Hawe 1984 normalise by the fair
    allocation): 1 when every flow gets its share."""
    x = [row[f"flow.{i}.of_maxmin"] for i in range(PARKING_LOT_FLOWS)]
    return sum(x) ** 2 / (len(x) * sum(v * v for v in x))


def _small_flow_slowdown(row: Mapping[str, Any]) -> float:
    """The workload's median slowdown of flows of at most 100 KB."""
    bins = row["workloads"][0]["bins"]
    value = next(b for b in bins if b["bin"] == "<=100KB")["slowdown"]["p50"]
    return float("nan") if value is None else float(value)


def _pair(rows: Rows, pair: tuple[int, int]) -> Mapping[str, Any]:
    return next(r for r in rows if (r["flow.0.rtt_ms"], r["flow.1.rtt_ms"]) == pair)


@dataclass(frozen=True)
class Criterion:
    key: str
    label: str
    #: +1: higher is better; -1: lower is better.
    better: int
    unit: str
    family: str
    #: (this algorithm's rows of the family at one seed) -> value
    value: Callable[[Rows], float]
    meaning: str
    #: Differences below this are practically equal (they tie in the
    #: ranking, as do means within their 95% intervals): see ranking.
    resolution: float
    #: The values the quantity can take (None: unbounded): a drawn
    #: interval is clipped to them. Student t over 2 seeds is wide, and a
    #: delay's bar reaching below 0 ms says nothing.
    bounds: tuple[float | None, float | None] = (0.0, None)


CRITERIA: tuple[Criterion, ...] = (
    Criterion("rtt_fairness", "RTT fairness (Jain)", +1, "", "rtt",
              lambda rows: _mean([r["jain"] for r in rows]),
              "Jain's index of two flows of the algorithm, mean over the five RTT pairs", 0.01, (0.0, 1.0)),
    Criterion("cubic_fairness", "fairness vs CUBIC (Jain)", +1, "", "cubic",
              lambda rows: _mean([r["jain"] for r in rows]),
              "Jain's index against one CUBIC flow (40 ms each), mean over buffers of 0.5-8 BDP", 0.01, (0.0, 1.0)),
    Criterion("utilization", "utilisation", +1, "%", "rtt",
              lambda rows: 100 * _mean([r["utilization"] for r in rows]),
              "bottleneck utilisation, mean over the RTT pairs", 0.5, (0.0, 100.0)),
    Criterion("queue_delay", "queueing delay p95", -1, "ms", "rtt",
              lambda rows: _mean([r["queue_delay_ms.p95"] for r in rows]),
              "95th percentile of the queueing delay, mean over the RTT pairs (2-BDP buffer)", 2.0),
    Criterion("retransmits", "retransmissions", -1, "%", "cubic",
              lambda rows: _retransmit_pct(next(r for r in rows if r["bottleneck.buffer"] == CUBIC_BUFFERS[0])),
              "retransmitted segments per 100 delivered, against CUBIC in a 0.5-BDP buffer", 0.05),
    Criterion("converge_join", "convergence after a join", -1, "s", "convergence",
              lambda rows: rows[0]["derived.convergence.join_s"],
              "seconds from the second flow's start until Jain >= 0.95 (1-s goodput) holds for 2 s; 30 if never", 0.5),
    Criterion("converge_leave", "convergence after a leave", -1, "s", "convergence",
              lambda rows: rows[0]["derived.convergence.leave_s"],
              "seconds from the second flow's stop until the first carries >= 90% of the earlier total for 2 s", 0.5),
    Criterion("random_loss", "utilisation under 1% loss", +1, "%", "single",
              lambda rows: 100 * rows[0]["utilization"],
              "utilisation of one flow with 1% random loss, 1-BDP buffer", 1.0, (0.0, 100.0)),
    Criterion("fq_codel", "utilisation behind FQ-CoDel", +1, "%", "fq_codel",
              lambda rows: 100 * rows[0]["utilization"],
              "utilisation of a 10 ms and a 50 ms flow behind fq_codel", 0.5, (0.0, 100.0)),
    Criterion("parking_lot", "multi-bottleneck fairness (Jain)", +1, "", "parking_lot",
              lambda rows: _maxmin_jain(rows[0]),
              "Jain's index of a parking lot's four flows over their max-min fair shares (one flow across three "
              "links, one per link)", 0.01, (0.0, 1.0)),
    Criterion("short_flows", "short-flow slowdown", -1, "x", "short_flows",
              lambda rows: _small_flow_slowdown(rows[0]),
              "median slowdown (FCT over FCT alone) of web-search flows of at most 100 KB at 0.5 load next to one "
              "X flow, 1 Gbit/s", 0.05),
    Criterion("cheating", "latency-cheating gain", -1, "pp", "rtt",
              lambda rows: 100 * (_pair(rows, CHEAT_PAIR)["flow.1.share"] - 0.5),
              "share above 50% a 10 ms flow gains by adding 40 ms to its own path (BBQ paper, Fig. 7)", 1.0,
              (-50.0, 50.0)),
)


def rows_of(family_rows: Rows, cc: str, seed: int) -> list[Mapping[str, Any]]:
    """One algorithm's rows of a family at one seed."""
    return [r for r in family_rows if r["flow.0.cc"] == cc and r["seed"] == seed]
