"""`make bench-memory`: peak memory of a long, fast run. One BBR flow on a
10 Gbit/s bottleneck (10 ms base RTT, a buffer of 1 BDP, the default 100 ms
output interval) for 60 s and for 600 s of simulated time, each in a fresh
child process, so that every figure is that run's alone.

The engine's memory must not grow with the number of packets simulated:
its statistics are streaming estimators and its queues are bounded by the
buffer and the windows, so only the telemetry (one row per interval) grows
with the duration. Targets: 60 s below 150 MB, 600 s below 200 MB.

Then the 10 Gbit/s case of Hock et al. (`hock-single`: 20 ms, a 160-ms
buffer = 8 BDP, 60 s), whose targets are issue 12's: under 30 s wall and
under 300 MiB peak on 2 cores. Printed, never asserted as a test.

Last, a link trace of 10 million lines (the engine's limit; ~8 lines a ms
at random, ~97 Mbit/s, a period of ~21 min) under one CUBIC flow for 3 s,
through the whole `ccarena run` command (the child's peak RSS from wait4):
issue 25's target is 200 MB (it was 1.27 GB when the trace crossed as a
list of numbers). `--trace` runs this case alone.

Per run the child prints, as peak RSS (ru_maxrss) high-water marks:
- before: the interpreter with ccarena imported and the scenario resolved;
- engine: after `_core.simulate` returned (the engine's peak, and the result
  counters JSON and telemetry buffers it hands over);
- decode: after `json.loads` of the counters (the telemetry arrives as raw buffers).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: Simulated durations, s.
DURATIONS_S = (60, 600)
#: Peak RSS targets, MB (10^6 bytes), per duration.
TARGET_MB = {60: 150, 600: 200}

CHILD = """
import json, resource, sys, time
from ccarena import _core, load_scenario

def peak_kib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss

scenario = load_scenario(json.loads(sys.argv[1]))
config = json.dumps(scenario.config)
before = peak_kib()
t0 = time.perf_counter()
text, flow_columns, link_columns = _core.simulate(config)
engine_s = time.perf_counter() - t0
engine = peak_kib()
raw = json.loads(text)
decode = peak_kib()
print(json.dumps({
    "engine_s": engine_s,
    "before_kib": before,
    "engine_kib": engine,
    "decode_kib": decode,
    "result_bytes": len(text) + sum(len(data) for cols in (flow_columns, link_columns) for _, _, data in cols),
    "packets": raw["link"]["tx_packets_total"],
    "events": raw["events"],
    "goodput_gbps": raw["flows"][0]["delivered_bytes_window"] * 8
        / ((scenario.config["measure_to_ns"] - scenario.config["measure_from_ns"]) / 1e9) / 1e9,
}))
"""


#: hock-single's 10 Gbit/s flow and its targets (issue 12).
HOCK_DURATION_S = 60
HOCK_TARGET_WALL_S = 30
HOCK_TARGET_MIB = 300


def scenario(duration_s: int) -> dict:
    return {
        "duration": f"{duration_s}s",
        "seed": 1,
        "bottleneck": {"rate": "10Gbit", "buffer": "1bdp", "aqm": "droptail"},
        "flow": [{"cc": "bbr", "rtt": "10ms"}],
    }


def hock_scenario() -> dict:
    """The scenario `hock-single` runs at 10 Gbit/s (seed 1)."""
    from ccarena.experiments import registry

    spec = next(s for s in registry.get("hock-single").runs(False) if "rate=10Gbit" in s.key)
    return dict(spec.scenario)


def run(duration_s: int, doc: dict | None = None) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(doc if doc is not None else scenario(duration_s))],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    return json.loads(proc.stdout)


#: The trace case: lines (the engine's max_trace_opportunities) and target.
TRACE_LINES = 10_000_000
TRACE_TARGET_MB = 200


def write_trace(path: Path, lines: int) -> None:
    """``lines`` opportunities, 0-16 in each ms (seeded), in mahimahi's format."""
    import random

    rng = random.Random(1)
    with open(path, "wb") as out:
        ms = 0
        while lines > 0:
            ms += 1
            count = min(rng.randint(0, 16), lines)
            out.write(b"%d\n" % ms * count)
            lines -= count


def trace_run() -> bool:
    """`ccarena run` of a 3-s scenario on a TRACE_LINES-line trace; True if
    its peak RSS missed the target."""
    import os
    import tempfile
    import time

    with tempfile.TemporaryDirectory(prefix="ccarena-bench-trace-") as tmp:
        trace = Path(tmp) / "big.trace"
        write_trace(trace, TRACE_LINES)
        toml = Path(tmp) / "trace.toml"
        toml.write_text(f'duration = "3s"\n[bottleneck]\ntrace = "{trace}"\nbuffer = "1bdp"\n'
                        '[[flow]]\ncc = "cubic"\nrtt = "20ms"\n')
        started = time.perf_counter()
        child = subprocess.Popen([sys.executable, "-m", "ccarena", "run", str(toml), "--out", str(Path(tmp) / "run")],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=REPO)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        stderr = child.stderr.read().decode() if child.stderr else ""
        if child.returncode != 0:
            raise SystemExit(f"ccarena run failed: {stderr}")
        peak = usage.ru_maxrss * 1024 / 1e6
        missed = peak >= TRACE_TARGET_MB
        print(f"{TRACE_LINES:,}-line trace ({trace.stat().st_size / 1e6:.0f} MB of text), 1 CUBIC flow, 3 s simulated, "
              f"`ccarena run`: {wall:.1f} s wall, peak RSS {peak:.1f} MB (target < {TRACE_TARGET_MB} MB: "
              f"{'MISSED' if missed else 'ok'})", flush=True)
        return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("durations", nargs="*", type=int, default=list(DURATIONS_S), help="simulated seconds")
    parser.add_argument("--trace", action="store_true", help="only the 10-million-line trace case")
    args = parser.parse_args()
    if args.trace:
        return 1 if trace_run() else 0
    print("scenario: 1 BBR flow, 10 Gbit/s, 10 ms RTT, 1 BDP droptail buffer, 100 ms output interval")
    failed = False
    for duration_s in args.durations:
        r = run(duration_s)
        mb = lambda kib: kib * 1024 / 1e6  # noqa: E731 - KiB (ru_maxrss on Linux) to MB
        peak = mb(r["decode_kib"])
        target = TARGET_MB.get(duration_s)
        verdict = "" if target is None else (f" (target < {target} MB: " + ("ok)" if peak < target else "MISSED)"))
        failed |= target is not None and peak >= target
        print(
            f"{duration_s:4d} s simulated: {r['engine_s']:6.1f} s wall, {r['packets']:,} packets, "
            f"{r['goodput_gbps']:.2f} Gbit/s goodput; peak RSS {peak:.1f} MB{verdict} "
            f"[interpreter + ccarena {mb(r['before_kib']):.1f} MB, after the engine {mb(r['engine_kib']):.1f} MB, "
            f"after decoding its {r['result_bytes'] / 1e3:,.0f} kB of result {peak:.1f} MB]",
            flush=True,
        )
    r = run(HOCK_DURATION_S, hock_scenario())
    peak_mib = r["decode_kib"] / 1024
    print(f"hock-single, 10 Gbit/s, 20 ms, 160-ms buffer, {HOCK_DURATION_S} s simulated: {r['engine_s']:.1f} s wall "
          f"(target < {HOCK_TARGET_WALL_S} s), peak RSS {peak_mib:.1f} MiB (target < {HOCK_TARGET_MIB} MiB), "
          f"{r['packets']:,} packets, {r['goodput_gbps']:.2f} Gbit/s goodput", flush=True)
    failed |= trace_run()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
