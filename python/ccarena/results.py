"""A finished run: its summary, its telemetry tables, and the files of a
run directory (summary.json, timeseries.parquet, link.parquet,
goodput.png, scenario.toml; with workloads flows.parquet)."""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import metrics, tables, units, workload_results
from .errors import ScenarioError
from .flow_groups import Group, flow_groups
from .rundir import atomic_dir
from .scenario import ResolvedScenario

if TYPE_CHECKING:
    import pyarrow as pa

SUMMARY = "summary.json"
SCENARIO = "scenario.toml"
TIMESERIES = "timeseries.parquet"
LINK = "link.parquet"
#: One row per workload flow (only with [[workload]]s).
FLOWS = "flows.parquet"
PLOT = "goodput.png"


class Result:
    """What :func:`ccarena.run` returns.

    ``summary`` is the summary.json document; ``timeseries`` and ``link``
    are pyarrow tables (the two parquet files); ``flows`` is
    ``summary["flows"]``; ``raw`` is the engine's result as decoded JSON
    (counters and columns, see crates/sim/src/result.rs); ``out`` is the
    run directory if one was written. With workloads, ``workload_flows``
    is flows.parquet's table.
    """

    def __init__(self, scenario: ResolvedScenario, raw: dict[str, Any], out: Path | None = None) -> None:
        self.scenario = scenario
        self.raw = raw
        self.out = out
        self.summary = metrics.summarize(scenario, raw)

    @property
    def flows(self) -> list[dict[str, Any]]:
        return self.summary["flows"]

    @cached_property
    def timeseries(self) -> "pa.Table":
        return tables.flow_table(self.scenario, self.raw)

    @cached_property
    def link(self) -> "pa.Table":
        return tables.link_table(self.scenario, self.raw)

    @cached_property
    def workload_flows(self) -> "pa.Table | None":
        """flows.parquet: one row per workload flow (None without workloads)."""
        if not self.scenario.config.get("workloads"):
            return None
        return workload_results.flow_table(self.scenario.config, self.raw)

    def save(self, out: str | Path) -> Path:
        """Write the run directory atomically (replacing an older run)."""
        if not isinstance(out, str | Path):
            raise ScenarioError("out", f"expected a directory path, got {type(out).__name__}")
        out = Path(out)
        with atomic_dir(out, "run") as tmp:
            self.write_files(tmp)
        self.out = out
        return out

    def write_files(self, directory: Path) -> None:
        """Write the run directory's files into ``directory`` (which the
        caller makes atomic: :meth:`save`, or a comparison's)."""
        from concurrent.futures import ThreadPoolExecutor

        import pyarrow.parquet as pq

        from .plots import plot_goodput

        (directory / SUMMARY).write_text(metrics.dumps(self.summary), encoding="utf-8")
        parquet = [(self.timeseries, TIMESERIES), (self.link, LINK)]
        if self.workload_flows is not None:
            parquet.append((self.workload_flows, FLOWS))
        # pyarrow encodes and writes without the GIL: on a thread, beside the
        # plot, which holds it (README, "Benchmark"). The tables are built
        # above, on this thread.
        with ThreadPoolExecutor(1, thread_name_prefix="ccarena-parquet") as pool:
            written = [pool.submit(pq.write_table, table, directory / name) for table, name in parquet]
            plot_goodput(self, directory / PLOT)
        for done in written:
            done.result()
        (directory / SCENARIO).write_text(scenario_toml(self.scenario), encoding="utf-8")

    def table(self) -> str:
        """The per-flow table and headline figures, as the CLI prints them:
        a row per flow, or beyond flow_groups.MAX_SHOWN flows a row per
        ``[[flow]]`` entry (as the plot draws them)."""
        s = self.summary
        lines: list[str] = []
        if s["flows"]:  # a scenario of workloads alone has none
            groups = flow_groups(self.scenario)
            rows = _flow_rows(s["flows"]) if groups is None else _group_rows(s["flows"], groups)
            widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
            # Text columns (flow or entry, cc, [path,] rtt) to the left, numbers to the right.
            texts = 4 if rows[0][2] == "path" else 3
            lines = ["  ".join(cell.rjust(w) if c >= texts else cell.ljust(w)
                               for c, (cell, w) in enumerate(zip(r, widths))) for r in rows]
            lines.insert(1, "  ".join("-" * w for w in widths))
            lines.append("")

        def num(value: float | None, fmt: str, unit: str = "") -> str:
            return "n/a" if value is None else format(value, fmt) + unit

        q = s["queue_delay_ms"]
        w = s["window"]
        goodput = (f"total goodput {s['goodput_total_mbps']:.2f} Mbit/s, Jain {num(s['jain'], '.4f')}, "
                   if s["flows"] else "")
        lines += [
            f"window {w['from_s']:g}-{w['to_s']:g} s: {goodput}"
            f"utilisation {num(None if s['utilization'] is None else 100 * s['utilization'], '.1f', '%')}",
        ]
        if "links" not in s:
            lines.append(f"queueing delay ms: mean {num(q['mean'], '.2f')}, p50 {num(q['p50'], '.2f')}, "
                         f"p95 {num(q['p95'], '.2f')}, p99 {num(q['p99'], '.2f')}; drops {s['drops']}")
        for link in s.get("links", []):
            lq = link["queue_delay_ms"]
            util = None if link["utilization"] is None else 100 * link["utilization"]
            lines.append(f"link {link['name']}: utilisation {num(util, '.1f', '%')}, queueing delay ms mean "
                         f"{num(lq['mean'], '.2f')}, p99 {num(lq['p99'], '.2f')}; drops {link['drops']}")
        lines += workload_results.lines(s)
        return "\n".join(lines)


def _share(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _fct(f: dict[str, Any]) -> str:
    """A sized flow's completion: "1.23 s to send 10MB", or "not done"."""
    if "size_bytes" not in f:
        return "-"
    done = f"{f['fct_ms'] / 1e3:.3f} s" if f["fct_ms"] is not None else "not done"
    slower = f", {f['slowdown']:.2f}x alone" if f.get("slowdown") is not None else ""
    return f"{done} ({units.format_size(f['size_bytes'])}{slower})"


def _flow_rows(flows: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """A row per flow; a topology's show each flow's path, its base RTT
    (links' delays included) and its goodput against its max-min share."""
    sized = any("size_bytes" in f for f in flows)
    routed = any("path" in f for f in flows)
    head = ("flow", "cc", "path", "rtt") if routed else ("flow", "cc", "rtt")
    rows = [head + ("goodput Mbit/s", "share", "retransmits") + (("of max-min",) if routed else ())
            + (("completion",) if sized else ())]
    for f in flows:
        route = (">".join(f["path"]),) if routed else ()
        rtt = f.get("base_rtt_ms", f["rtt_ms"])
        fair = (_share(f["of_maxmin"]),) if routed else ()
        rows.append((str(f["index"]), f["cc"], *route, f"{rtt:g} ms", f"{f['goodput_mbps']:.2f}",
                     _share(f["share"]), str(f["retransmits"]), *fair) + ((_fct(f),) if sized else ()))
    return rows


def _group_rows(flows: list[dict[str, Any]], groups: list[Group]) -> list[tuple[str, ...]]:
    """A row per group of flows: how many, their goodput (mean, min-max),
    the group's share of the total and its retransmits."""
    rows = [("entry", "cc", "rtt", "flows", "mean Mbit/s", "min-max Mbit/s", "share", "retransmits")]
    # A group's share from its goodput: summary.json's shares are rounded
    # (to 1e-6), and thousands of them added up drift by a percent.
    total = sum(f["goodput_mbps"] for f in flows)
    for g in groups:
        members = [flows[i] for i in g.flows]
        goodput = [f["goodput_mbps"] for f in members]
        shares = [f["share"] for f in members]
        ccs = sorted({f["cc"] for f in members})
        rtts = sorted({f.get("base_rtt_ms", f["rtt_ms"]) for f in members})  # as _flow_rows
        rows.append((
            "all" if g.entry is None else f"flow[{g.entry}]",
            ccs[0] if len(ccs) == 1 else "mixed",
            f"{rtts[0]:g} ms" if len(rtts) == 1 else f"{rtts[0]:g}-{rtts[-1]:g} ms",
            str(len(members)),
            f"{sum(goodput) / len(goodput):.2f}",
            f"{min(goodput):.2f}-{max(goodput):.2f}",
            "n/a" if None in shares else _share(sum(goodput) / total if total > 0 else sum(shares)),
            str(sum(f["retransmits"] for f in members)),
        ))
    return rows


def scenario_toml(scenario: ResolvedScenario) -> str:
    """scenario.toml of a run directory: the scenario as run, which
    ``ccarena run scenario.toml`` runs again (same seed: the same numbers;
    only the summary's scenario name is the file's)."""
    import tomli_w

    header = (f"# The scenario of this run ({scenario.name}), as given with any --set applied.\n"
              "# Run it again: ccarena run scenario.toml\n")
    return header + tomli_w.dumps(scenario.as_written())
