"""`make bench`: how fast the simulator runs the judged 120-s scenario
(BBR 10 ms vs 50 ms, 100 Mbit/s, 2 MB droptail), and how that compares with
ns-3.44 on the same dumbbell when ns-3 is installed (`make bench-ns3-setup`).

Figures:
- engine: the `_core.simulate` call alone, in a child process that imports
  nothing else, so its peak RSS is the engine's (plus a bare interpreter);
- CLI: `ccarena run` end to end (validation, simulation, parquet, PNG), and
  where its wall time goes (run_split.py: imports, simulation, summary,
  parquet, plot, exit), against the engine alone run as often, in
  between; ccarena's modules byte-compiled first, as an installed
  package has them;
- ns-3.44: ../shared/peers/ns3/dumbbell.cc under /usr/bin/time -v.
Simulated bottleneck packets per wall second is the speed measure common
to both simulators.

Then two cases beyond the dumbbell, through the engine alone as
the headline: a parking lot of three 1 Gbit/s links with 100 long BBR
flows for 60 s (packets: every link's), and 100,000 short flows arriving
by a Poisson process at half of 1 Gbit/s (flows per wall second).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import run_split

REPO = Path(__file__).resolve().parent.parent
SCENARIO = REPO / "examples" / "bbr-rtt-unfairness.toml"
NS3_VENV = REPO / ".ns3venv"
NS3_BIN = REPO / "bench" / "ns3-build" / "dumbbell344"
NS3_SRC = REPO.parent / "shared" / "peers" / "ns3" / "dumbbell.cc"
#: `ccarena run`s whose split is printed, each after a run of the engine
#: alone (medians: the machine may be shared, and its speed drifts).
SPLIT_RUNS = 7
#: The scenario in dumbbell.cc's options; --measure covers our 20-120 s window.
NS3_ARGS = ["--rtts=10ms,50ms", "--btlRate=100Mbps", "--bufBytes=2000000", "--simTime=120", "--measure=100"]

ENGINE_CHILD = """
import json, resource, sys, time
from ccarena import _core
config = sys.stdin.read()
baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
counters, _flow, _link, _workload = _core.simulate(config)
wall = time.perf_counter() - t0
result = json.loads(counters)
print(json.dumps({
    "wall_s": wall,
    "packets": sum(link["tx_packets_total"] for link in [result["link"], *result.get("links", [])]),
    "flows": sum(w["arrived"] for w in result.get("workloads", [])),
    "events": result["events"],
    "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
    "baseline_kib": baseline,
    "delivered": [f["delivered_bytes_window"] for f in result["flows"]],
}))
"""


def run_engine(config_json: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", ENGINE_CHILD], input=config_json, capture_output=True, text=True, check=True
    )
    return json.loads(proc.stdout)


def run_cli() -> tuple[float, int]:
    out = Path(tempfile.mkdtemp(prefix="ccarena-bench-"))
    try:
        t0 = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "ccarena", "run", str(SCENARIO), "--out", str(out / "run")],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - t0
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


#: Engine runs per host model for the cost line (alternating; medians).
COST_RUNS = 3


def host_cost(path: Path) -> str:
    """What the default host model costs: the engine's packets per wall
    second with ``host = "linux"`` (the default) against ``"ideal"``
    (docs/host.md, "Cost"; the target is at most 10%)."""
    from ccarena import load_scenario

    rates: dict[str, list[float]] = {"linux": [], "ideal": []}
    for _ in range(COST_RUNS):
        for host in rates:
            engine = run_engine(json.dumps(load_scenario(path, {"host": host}).config))
            rates[host].append(engine["packets"] / engine["wall_s"])
    linux, ideal = (sorted(rates[h])[len(rates[h]) // 2] for h in ("linux", "ideal"))
    return (f"host model:     {linux:,.0f} packets/wall-s with host = \"linux\" against {ideal:,.0f} with \"ideal\" "
            f"(medians of {COST_RUNS}): costs {100 * (1 - linux / ideal):.1f}% (target <= 10%)")


#: A parking lot: three 1 Gbit/s links of 5 ms in a row, 1 BDP
#: of buffer each; 100 BBR flows of 10 ms between their hosts, 25 across
#: all three links and 25 on each link alone; 60 s.
PARKING_LOT = {
    "duration": "60s",
    "seed": 1,
    "link": [{"name": n, "rate": "1Gbit", "buffer": "1bdp", "delay": "5ms"} for n in "abc"],
    "flow": [{"cc": "bbr", "rtt": "10ms", "count": 25, "path": path} for path in (["a", "b", "c"], ["a"], ["b"], ["c"])],
}

#: Short flows: 10 KB CUBIC flows arriving by a Poisson process
#: at a load of 0.5 of a 1 Gbit/s bottleneck (6,250 a second), for the 16 s
#: that make 100,000 of them on average, then 1 s to finish.
SHORT_FLOWS = {
    "duration": "17s",
    "seed": 1,
    "bottleneck": {"rate": "1Gbit", "buffer": "1bdp"},
    "workload": [{"cc": "cubic", "rtt": "1ms", "size": "10KB", "load": 0.5, "stop": "16s"}],
}


def beyond_the_dumbbell() -> list[str]:
    """Beyond the dumbbell: the parking lot's and the short flows' wall time,
    speed and peak RSS (the engine alone, as the headline)."""
    from ccarena import load_scenario

    mib = lambda kib: kib / 1024  # noqa: E731 - ru_maxrss is KiB on Linux
    lot = run_engine(json.dumps(load_scenario(PARKING_LOT).config))
    short = run_engine(json.dumps(load_scenario(SHORT_FLOWS).config))
    return [
        f"parking lot:    {lot['wall_s']:.3f} s wall for 60 s of 3 x 1 Gbit/s links, 100 BBR flows (25 across all three, "
        f"25 per link): {lot['packets']:,} link packets, {lot['packets'] / lot['wall_s']:,.0f} packets/wall-s, "
        f"{lot['events'] / lot['wall_s']:,.0f} events/wall-s, peak RSS {mib(lot['maxrss_kib']):.1f} MiB",
        f"short flows:    {short['wall_s']:.3f} s wall for {short['flows']:,} Poisson arrivals of 10 KB CUBIC flows at a "
        f"load of 0.5 of 1 Gbit/s (17 s): {short['flows'] / short['wall_s']:,.0f} flows/wall-s, "
        f"{short['packets'] / short['wall_s']:,.0f} packets/wall-s, peak RSS {mib(short['maxrss_kib']):.1f} MiB",
    ]


def ns3_binary() -> Path | None:
    """The built ns-3 peer, building it if ns-3 is installed but not built."""
    if NS3_BIN.exists():
        return NS3_BIN
    if (NS3_VENV / ".installed").exists():
        subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "bench-ns3-setup"], check=True)
        return NS3_BIN
    return None


def run_ns3(binary: Path) -> dict:
    proc = subprocess.run(
        ["/usr/bin/time", "-v", str(binary), *NS3_ARGS], capture_output=True, text=True, check=True
    )
    wall = re.search(r"Elapsed \(wall clock\) time.*: (?:(\d+):)?(\d+):([\d.]+)", proc.stderr)
    hours, minutes, seconds = wall.groups()
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    packets = re.search(r"bottleneck_tx_pkts=(\d+)", proc.stdout)
    shares = re.findall(r"flow (\d+) cc=(\S+) rtt=(\S+) goodput=([\d.]+) Mbit/s share=([\d.]+)%", proc.stdout)
    return {
        "wall_s": int(hours or 0) * 3600 + int(minutes) * 60 + float(seconds),
        "maxrss_kib": int(rss.group(1)),
        "packets": int(packets.group(1)),
        "shares": shares,
    }


def compile_package() -> None:
    """Byte-compile ccarena's modules, as installing a package does (and
    as Python does on a first import, unless PYTHONDONTWRITEBYTECODE is
    set, as it is in some sandboxes): every run measured here would
    otherwise compile them from source again (~50 ms of a `ccarena run`
    on a 2-core machine)."""
    import compileall

    import ccarena

    compileall.compile_dir(Path(ccarena.__file__).parent, quiet=1)


def main() -> int:
    from ccarena import load_scenario

    compile_package()

    scenario = load_scenario(SCENARIO)
    config = json.dumps(scenario.config)
    print(f"scenario: {SCENARIO.relative_to(REPO)} (120 s simulated, BBR 10 ms vs 50 ms, 100 Mbit/s, 2 MB)")

    engine = run_engine(config)
    pps = engine["packets"] / engine["wall_s"]
    total = sum(engine["delivered"]) or 1
    shares = " / ".join(f"{100 * d / total:.1f}%" for d in engine["delivered"])
    print(
        f"ccarena engine: {engine['wall_s']:.3f} s wall, {engine['packets']:,} bottleneck packets, "
        f"{pps:,.0f} packets/wall-s, {engine['events'] / engine['wall_s']:,.0f} events/wall-s, "
        f"peak RSS {engine['maxrss_kib'] / 1024:.1f} MiB "
        f"(of which {engine['baseline_kib'] / 1024:.1f} MiB interpreter before the run); shares {shares}"
    )
    print(host_cost(SCENARIO))
    cli_wall, cli_rss = run_cli()
    print(f"ccarena CLI:    {cli_wall:.3f} s wall end to end (parse, simulate, parquet, PNG), peak RSS {cli_rss / 1024:.1f} MiB")
    split = run_split.split(SCENARIO, SPLIT_RUNS, lambda: run_engine(config)["wall_s"])
    print(run_split.describe(split, SPLIT_RUNS))
    for line in beyond_the_dumbbell():
        print(line, flush=True)

    binary = ns3_binary()
    if binary is None:
        print(
            "ns-3.44: not installed. `make bench-ns3-setup` installs ns3==3.44.post0 from PyPI into .ns3venv and "
            f"builds {os.path.relpath(NS3_SRC, REPO)} into {NS3_BIN.relative_to(REPO)}; then run `make bench` again."
        )
        return 0
    ns3 = run_ns3(binary)
    ns3_pps = ns3["packets"] / ns3["wall_s"]
    ns3_shares = " / ".join(f"{share}%" for *_, share in ns3["shares"])
    print(
        f"ns-3.44:        {ns3['wall_s']:.3f} s wall, {ns3['packets']:,} bottleneck packets, "
        f"{ns3_pps:,.0f} packets/wall-s, peak RSS {ns3['maxrss_kib'] / 1024:.1f} MiB; shares {ns3_shares}"
    )
    print(f"speed-up: {pps / ns3_pps:.1f}x ns-3.44's packets per wall second (target >= 30x, aim 100x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
