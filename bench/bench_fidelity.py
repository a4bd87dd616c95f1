"""`make bench-fidelity`: the simulator's runs against repeated runs on real
Linux, flow by flow, as distributions.

A battery of scenarios (RTT ratios 2 to 8, three flows, BBR against CUBIC
from 0.5 to 16 BDP, CUBIC against CUBIC, 10 and 100 Mbit/s, and our
algorithms loaded into the kernel through BPF: bbq, bbr_cws, bbr3), each
run on the live engine several times and on the simulator over several
seeds, with the default host model and, for comparison, without one
(``host = "ideal"``). For each flow it prints the live mean and standard
deviation of its share, the simulator's, and the difference, and checks
the targets:

- the simulator's mean within TARGET_PP percentage points of the live mean;
- where the live standard deviation is at least SPREAD_FLOOR_PP, the
  simulator's within a factor SPREAD_FACTOR of it.

A second battery (QUEUE_SCENARIOS) runs one BBR flow alone at 100, 250
and 500 Mbit/s on the userspace bottleneck and prints its mean queueing
delay, live and simulated: the check that decided how the host model
counts the turnaround's tail (docs/host.md).

A live run whose CPUs the hypervisor gave to others for more than
MAX_STEAL of its time is kept in the file but not counted, and repeated:
on a virtual machine such runs are measurements of the hypervisor. Each
scenario's row also says how many of its counted runs had a stalling
path (hostmodel.path_stalled: the delay line wrote over
STALLING_LATE_PER_S packets a second more than 1 ms late), the testbed
that `host = "linux-stalls"` models (docs/host.md).

The live runs take ~80 minutes; they are cached in a dated results file
under docs/ (``docs/fidelity-live-DATE.json``, committed), and the bench
uses each scenario's newest runs (a later file may repeat some scenarios
only) unless asked to run them again:

    python bench/bench_fidelity.py                # the simulator against each scenario's newest live results
    python bench/bench_fidelity.py --live         # run the live part again (root), then compare
    python bench/bench_fidelity.py --only bbr-10-50,cubic-10-50
    python bench/bench_fidelity.py --live --fresh "REASON" --only bbq-10-50   # today's runs of it anew
    python bench/bench_fidelity.py --live --bottleneck userspace --only cubic-10-50   # live on the simulator's queue

``--bottleneck userspace`` runs (and compares against) the live runs on
the delay line's per-packet queue, the one the simulator models, instead
of the live engine's default for a plain droptail link (the kernel's TBF
and bfifo); they are recorded as ``NAME@userspace``, beside the default's.

``--fresh`` starts today's runs of a scenario anew (after a change to
what runs live, such as our BPF algorithms' clock); the runs it replaces
stay in the file, under ``superseded``, with the reason given.

A benchmark, not a test: it fails only if a run does.
"""

from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# A live run whose CPUs the hypervisor gave to others for more than
# MAX_STEAL of its time (/proc/stat's steal) is not a measurement of Linux
# (the host measurement's rule): on this virtual machine runs with 27-41%
# stolen gave BBR's 10 ms flow 40-58% of the link against 4-9% in runs with
# under 1% stolen. Such runs are kept in the results file, marked, and
# repeated.
from ccarena.live.hostmodel import MAX_ATTEMPTS_PER_RUN, MAX_STEAL, cpu_times, path_stalled, steal_fraction
from ccarena.units import parse_time

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: The targets, per flow's share against the live runs: mean within 2 pp,
#: spread within a factor 2 where real runs spread by at least 0.5 pp.
TARGET_PP = 2.0
SPREAD_FACTOR = 2.0
SPREAD_FLOOR_PP = 0.5
LIVE_RUNS = 5
#: Forty seeds: ten seeds' mean moves by a point or two from one set of
#: seeds to the next where runs spread by 3-4 pp (CUBIC 10/50, CUBIC at
#: 10 Mbit/s), the scale of the 2-pp target (docs/host.md).
SIM_SEEDS = tuple(range(1, 41))
#: Every scenario's length and window.
TIMING = {"duration": "40s", "measure": {"from": "10s"}}


def _flow(cc: str, rtt: str, **extra: Any) -> dict[str, Any]:
    return {"cc": cc, "rtt": rtt, **extra}


def _scenario(rate: str, buffer: str, *flows: dict[str, Any]) -> dict[str, Any]:
    return {**TIMING, "bottleneck": {"rate": rate, "buffer": buffer}, "flow": list(flows)}


#: name -> scenario (without seed and host).
SCENARIOS: dict[str, dict[str, Any]] = {
    "bbr-10-20": _scenario("100Mbit", "2MB", _flow("bbr", "10ms"), _flow("bbr", "20ms")),
    "bbr-10-50": _scenario("100Mbit", "2MB", _flow("bbr", "10ms"), _flow("bbr", "50ms")),
    "bbr-10-80": _scenario("100Mbit", "2MB", _flow("bbr", "10ms"), _flow("bbr", "80ms")),
    "bbr-three": _scenario("100Mbit", "2MB", _flow("bbr", "10ms"), _flow("bbr", "30ms"), _flow("bbr", "50ms")),
    "bbr-cubic-0.5bdp": _scenario("100Mbit", "0.5bdp", _flow("bbr", "40ms"), _flow("cubic", "40ms")),
    "bbr-cubic-2bdp": _scenario("100Mbit", "2bdp", _flow("bbr", "40ms"), _flow("cubic", "40ms")),
    "bbr-cubic-8bdp": _scenario("100Mbit", "8bdp", _flow("bbr", "40ms"), _flow("cubic", "40ms")),
    "bbr-cubic-16bdp": _scenario("100Mbit", "16bdp", _flow("bbr", "40ms"), _flow("cubic", "40ms")),
    "cubic-10-50": _scenario("100Mbit", "2MB", _flow("cubic", "10ms"), _flow("cubic", "50ms")),
    "cubic-10mbit": _scenario("10Mbit", "1bdp", _flow("cubic", "20ms"), _flow("cubic", "40ms")),
    "bbr-10mbit": _scenario("10Mbit", "2bdp", _flow("bbr", "10ms"), _flow("bbr", "50ms")),
    "bbq-10-50": _scenario("100Mbit", "2MB", _flow("bbq", "10ms"), _flow("bbq", "50ms")),
    "bbr_cws-cubic": _scenario("20Mbit", "0.5bdp",
                               _flow("bbr_cws", "40ms", params={"beta": 0.9, "delta": 0.01, "floor": 0.2,
                                                                "wait_rtts": 3, "cut_divisor": 3}),
                               _flow("cubic", "40ms")),
    "bbr3-cubic-2bdp": _scenario("100Mbit", "2bdp", _flow("bbr3", "40ms"), _flow("cubic", "40ms")),
}


#: A second battery: one BBR flow alone as the rate grows, on the delay
#: line's per-packet (userspace) bottleneck, the queue the simulator
#: models; what is compared is the mean queueing delay (ms). It decided
#: how the host model counts the turnaround's tail (docs/host.md, "A lone
#: BBR flow's queue"): drawn per ACK, its holds grew with the packet rate.
QUEUE_SCENARIOS: dict[str, dict[str, Any]] = {
    f"bbr-alone-{rate}": {"duration": "30s", "measure": {"from": "10s"},
                          "bottleneck": {"rate": rate, "buffer": "20MB"}, "flow": [_flow("bbr", "20ms")]}
    for rate in ("100Mbit", "250Mbit", "500Mbit")
}
QUEUE_BOTTLENECK = "userspace"


def live_results() -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Each scenario's live entry from the newest results file that has it
    (a later day may repeat some scenarios only), and that file's name."""
    results: dict[str, dict[str, Any]] = {}
    where: dict[str, str] = {}
    for path in sorted(DOCS.glob("fidelity-live-*.json")):  # dated names: oldest first
        for name, entry in json.loads(path.read_text())["results"].items():
            results[name], where[name] = entry, path.name
    return results, where


def runs_of(entry: dict[str, Any]) -> list[dict[str, Any]]:
    """A scenario's live runs, each {"shares": [...], "steal": x} (also from
    the first results file's form: parallel lists)."""
    if "runs" in entry:
        return entry["runs"]
    return [{"shares": sh, "steal": st} for sh, st in zip(entry["shares"], entry["steal"], strict=True)]


def stalling(entry: dict[str, Any]) -> str:
    """How many of a scenario's counted runs had a stalling path
    (hostmodel.path_stalled), of those whose delay line's statistics were
    recorded (the first runs of 2026-11-27 have none)."""
    seconds = parse_time(entry["scenario"]["duration"]) / 1e9
    known = [r["late_over_1ms"] for r in runs_of(entry) if r["steal"] <= MAX_STEAL and "late_over_1ms" in r]
    return f"{sum(path_stalled(n, seconds) for n in known)} of {len(known)} on a stalling path"


def clean(entry: dict[str, Any]) -> list[list[float]]:
    """The shares of a scenario's runs with at most MAX_STEAL stolen."""
    return [r["shares"] for r in runs_of(entry) if r["steal"] <= MAX_STEAL]


def entry_key(name: str, bottleneck: str) -> str:
    """A scenario's name in the results file: its runs on the live engine's
    default bottleneck under its own name, those on another as
    NAME@BOTTLENECK (the queue battery always runs on QUEUE_BOTTLENECK)."""
    return name if bottleneck == "auto" or name in QUEUE_SCENARIOS else f"{name}@{bottleneck}"


def run_live(name: str, entry: dict[str, Any] | None, runs: int, bottleneck: str = "auto") -> dict[str, Any]:
    """Live runs of scenario ``name`` (on ``bottleneck``) until it has
    ``runs`` clean ones (MAX_STEAL; at most MAX_ATTEMPTS_PER_RUN x ``runs``
    in all: runs with stolen CPU are repeated, but not without end), added
    to ``entry``'s."""
    from ccarena.live.engine import load_live_scenario, run_live as live

    queue = name in QUEUE_SCENARIOS
    scenario = QUEUE_SCENARIOS[name] if queue else SCENARIOS[name]
    bottleneck = QUEUE_BOTTLENECK if queue else bottleneck
    done = runs_of(entry) if entry else []
    attempts = MAX_ATTEMPTS_PER_RUN * runs
    while len(clean({"runs": done})) < runs and len(done) < attempts:
        k = len(done) + 1
        print(f"bench-fidelity: live {name} run {k} ({len(clean({'runs': done}))} of {runs} clean so far)",
              file=sys.stderr, flush=True)
        before = cpu_times()
        result = live(load_live_scenario({**scenario, "seed": k}, bottleneck=bottleneck), bottleneck=bottleneck,
                      wait=300)
        steal = round(steal_fraction(before, cpu_times()), 4)
        dl = result.summary["live"]["delay_line"]
        # The path's own stalls in this run (the host model's `stalls`): how
        # often the delay line wrote a packet over 1 ms late, and its worst.
        done.append({"shares": shares(result.summary), "steal": steal, "queue_ms": mean_queue_ms(result.summary),
                     "late_over_1ms": dl["late_over_1ms"], "lateness_p99_us": dl["lateness_p99_us"],
                     "lateness_max_us": dl["lateness_max_us"]})
        if steal > MAX_STEAL:
            print(f"bench-fidelity: {100 * steal:.0f}% of that run's CPU time was stolen by the hypervisor: "
                  "not counted", file=sys.stderr, flush=True)
    if len(clean({"runs": done})) < runs:
        print(f"bench-fidelity: {name}: {len(clean({'runs': done}))} clean runs of {runs} after {len(done)} attempts; "
              "stopped", file=sys.stderr, flush=True)
    return {"scenario": scenario, "runs": done, **({"bottleneck": bottleneck} if bottleneck != "auto" else {})}


def shares(summary: dict[str, Any]) -> list[float]:
    return [f["share"] for f in summary["flows"]]


def mean_queue_ms(summary: dict[str, Any]) -> float:
    return summary["queue_delay_ms"]["mean"]


def run_sim(names: list[str], host: str, scenarios: dict[str, dict[str, Any]] = SCENARIOS,
            metric: Callable[[dict[str, Any]], Any] = shares) -> dict[str, list[Any]]:
    """Each scenario over SIM_SEEDS on the simulator: ``metric`` of each
    seed's summary (the flows' shares, or the queue battery's mean queue)."""
    from ccarena.api import simulate
    from ccarena.metrics import summarize
    from ccarena.scenario import load_scenario

    out = {}
    for name in names:
        out[name] = []
        for seed in SIM_SEEDS:
            scenario = load_scenario({**scenarios[name], "seed": seed, "host": host})
            out[name].append(metric(summarize(scenario, simulate(scenario, series=False))))
    return out


def queue_table(live: dict[str, list[float]], sims: dict[str, dict[str, list[float]]]) -> str:
    """The queue battery's Markdown table: live and simulated mean ± sd, ms."""
    hosts = list(sims)
    lines = ["| scenario | live mean ± sd | " + " | ".join(f"sim ({h}) mean ± sd | sim / live ({h})" for h in hosts)
             + " |", "|" + " --- |" * (2 + 2 * len(hosts))]
    for name, xs in live.items():
        lm, ls = statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)
        cells = [f"{name} ({len(xs)} runs)", f"{lm:.1f} ± {ls:.1f}"]
        for h in hosts:
            ys = sims[h][name]
            sm, ss = statistics.fmean(ys), statistics.stdev(ys)
            cells += [f"{sm:.1f} ± {ss:.1f}", f"{sm / lm:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _stats(runs: list[list[float]], flow: int) -> tuple[float, float]:
    xs = [100 * r[flow] for r in runs]
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0)


def table(live: dict[str, Any], sims: dict[str, dict[str, list[list[float]]]]) -> tuple[str, dict[str, str]]:
    """The Markdown table, and per host model a line of how many flows meet
    each target."""
    hosts = list(sims)
    head = "| scenario | flow | live mean ± sd | " + " | ".join(f"sim ({h}) mean ± sd | Δ ({h})" for h in hosts) + " |"
    lines = [head, "|" + " --- |" * (3 + 2 * len(hosts))]
    means = dict.fromkeys(hosts, 0)
    spreads = dict.fromkeys(hosts, 0)
    judged_spreads = total = 0
    for name, rec in live.items():
        flows = rec["scenario"]["flow"]
        for i, f in enumerate(flows):
            lm, ls = _stats(rec["shares"], i)
            n_clean = (f" ({len(rec['shares'])} of {rec['runs']} runs, {rec['stalling']})"
                       if i == 0 else "")
            cells = [name + n_clean if i == 0 else "", f"{f['cc']} {f['rtt']}", f"{lm:.1f} ± {ls:.1f}"]
            for h in hosts:
                sm, ss = _stats(sims[h][name], i)
                mean_ok = abs(sm - lm) <= TARGET_PP
                spread_ok = ls < SPREAD_FLOOR_PP or (ls / SPREAD_FACTOR <= ss <= ls * SPREAD_FACTOR)
                mark = ("" if mean_ok else " ✗mean") + ("" if spread_ok else " ✗sd")
                cells += [f"{sm:.1f} ± {ss:.1f}", f"{sm - lm:+.1f}{mark}"]
                means[h] += mean_ok
                spreads[h] += spread_ok and ls >= SPREAD_FLOOR_PP
            total += 1
            judged_spreads += ls >= SPREAD_FLOOR_PP
            lines.append("| " + " | ".join(cells) + " |")
    verdicts = {h: (f"{means[h]} of {total} flows' means within {TARGET_PP:g} pp of live; "
                    f"{spreads[h]} of the {judged_spreads} spreads of at least {SPREAD_FLOOR_PP:g} pp within a factor "
                    f"{SPREAD_FACTOR:g}") for h in hosts}
    return "\n".join(lines), verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--live", action="store_true",
                        help="run the live part (root, ~80 min): add runs to today's results file until each "
                             "scenario has --runs clean ones")
    parser.add_argument("--runs", type=int, default=LIVE_RUNS, help=f"live runs per scenario (default {LIVE_RUNS})")
    parser.add_argument("--only", metavar="A,B", help="these scenarios only")
    parser.add_argument("--bottleneck", choices=("auto", "userspace"), default="auto",
                        help="the live runs' bottleneck: auto (the live engine's default, the kernel's TBF + bfifo "
                             "for these scenarios) or userspace (the delay line's queue, the simulator's), recorded "
                             "and compared as NAME@userspace")
    parser.add_argument("--fresh", metavar="REASON",
                        help="with --live: start today's runs of each scenario anew, keeping the old ones "
                             "under 'superseded' with this reason")
    args = parser.parse_args()
    known = [*SCENARIOS, *QUEUE_SCENARIOS]
    names = known if not args.only else args.only.split(",")
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"unknown scenario(s) {', '.join(unknown)} (known: {', '.join(known)})")
    if args.fresh is not None and not (args.live and args.fresh.strip()):
        parser.error("--fresh needs --live and a reason")
    started = time.perf_counter()
    if args.live:
        date = datetime.date.today().isoformat()
        path = DOCS / f"fidelity-live-{date}.json"
        # Added to (or replacing scenarios of) today's file, scenario by
        # scenario, so that an interrupted run keeps what it measured.
        record = json.loads(path.read_text()) if path.exists() else {"date": date, "runs": args.runs, "results": {}}
        keys = [entry_key(name, args.bottleneck) for name in names]
        if args.fresh:
            for key in keys:
                if key in record["results"]:
                    record.setdefault("superseded", []).append(
                        {"scenario": key, "reason": args.fresh, "entry": record["results"].pop(key)})
        for name, key in zip(names, keys, strict=True):
            record["results"][key] = run_live(name, record["results"].get(key), args.runs, args.bottleneck)
            path.write_text(json.dumps(record, indent=1) + "\n")
        print(f"live results: {path}", file=sys.stderr)
    everything, where = live_results()
    if not everything:
        print("no live results under docs/ (run with --live as root)", file=sys.stderr)
        return 1
    # The scenarios' entries on the bottleneck asked for, by scenario name.
    results = {n: everything[entry_key(n, args.bottleneck)] for n in names
               if entry_key(n, args.bottleneck) in everything and clean(everything[entry_key(n, args.bottleneck)])}
    live = {n: {"scenario": r["scenario"], "shares": clean(r), "runs": len(runs_of(r)), "stalling": stalling(r)}
            for n, r in results.items() if n in SCENARIOS}
    queues = {n: [run["queue_ms"] for run in runs_of(r) if run["steal"] <= MAX_STEAL]
              for n, r in results.items() if n in QUEUE_SCENARIOS}
    files = {}
    for name in results:
        files.setdefault(where[entry_key(name, args.bottleneck)], []).append(name)
    print("live: each scenario's newest results file ("
          + "; ".join(f"{file}: {len(ns)} scenarios" for file, ns in sorted(files.items(), reverse=True))
          + f"), runs with at most {100 * MAX_STEAL:g}% of their CPU time stolen by the hypervisor; "
          f"simulator: seeds {SIM_SEEDS[0]}-{SIM_SEEDS[-1]}")
    if live:
        sims = {host: run_sim(list(live), host) for host in ("linux", "ideal")}
        text, verdicts = table(live, sims)
        print("\nShare of the window, %" + (f" (live on the {args.bottleneck} bottleneck)" if args.bottleneck != "auto"
                                           else "") + ":\n")
        print(text)
        print()
        for host, line in verdicts.items():
            print(f"host = \"{host}\": {line}")
    if queues:
        print(f"\nOne BBR flow alone, the {QUEUE_BOTTLENECK} bottleneck: mean queueing delay, ms:\n")
        print(queue_table(queues, {host: run_sim(list(queues), host, QUEUE_SCENARIOS, mean_queue_ms)
                                   for host in ("linux", "ideal")}))
    print(f"({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
