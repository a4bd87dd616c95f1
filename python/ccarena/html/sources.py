"""What `ccarena report` can read, and each as a section of the page.

A directory is, by what ccarena wrote in it:

- a **run** (``ccarena run`` / ``ccarena live run``): summary.json,
  goodput.png, scenario.toml;
- a **comparison** (``ccarena compare``): the runs ``sim/`` and ``live/``;
- a **sweep** (``ccarena sweep``): .ccarena-sweep, sweep.json,
  points.parquet;
- a **scorecard** (``ccarena scorecard``): scorecard.json and its figure;
- an **experiment** (``ccarena reproduce NAME``): results.json, the
  structured record report.md is rendered from, and its figures;
- a **reproduction** (``ccarena reproduce ... --out DIR``): experiment
  directories under it, one section each, grouped by paper.

Anything else is refused (one line naming the directory).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import ScenarioError
from . import page as h


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    kind: str
    html: str


def load(directory: Path) -> list[Section]:
    """The sections of one directory (see the module's docstring). A record
    that is not what ccarena writes (not JSON, the wrong shape, a broken
    table) is refused with one line naming the file."""
    d = Path(directory)
    if not d.is_dir():
        raise ScenarioError(str(d), "not a directory (a run, sweep, scorecard or reproduction's)" if d.exists()
                            else "no such directory")
    from ..rundir import kind_of
    from ..sweep.cache import MARKER as SWEEP_MARKER

    if (d / SWEEP_MARKER).is_file() and (d / "sweep.json").is_file():
        return [_read(d / "sweep.json", sweep_section, d)]
    if (d / "scorecard.json").is_file():
        from ..scorecard.render import html_section

        return [_read(d / "scorecard.json", html_section, d)]
    if (d / "results.json").is_file():
        return [_read(d / "results.json", experiment_section, d)]
    if (d / "summary.json").is_file():
        return [_read(d / "summary.json", run_section, d)]
    if kind_of(d) == "compare":
        return [_read(d / run / "summary.json", run_section, d / run) for run in ("sim", "live")]
    experiments = sorted(p for p in d.iterdir() if p.is_dir() and (p / "results.json").is_file())
    if experiments:
        return [_read(p / "results.json", experiment_section, p) for p in experiments]
    raise ScenarioError(str(d), "not a ccarena run, comparison, sweep, scorecard or experiment directory")


def _read(record: Path, section: Callable[[Path], Section], d: Path) -> Section:
    """``section(d)``; a record it cannot read is the input's fault: one
    line naming the file."""
    try:
        return section(d)
    except ScenarioError:
        raise
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as err:
        # pyarrow's errors are ValueError/OSError subclasses; json's too.
        detail = " ".join(str(err).split())[:120] or type(err).__name__
        what = "not JSON" if isinstance(err, json.JSONDecodeError) else f"not what ccarena writes ({type(err).__name__}: {detail})"
        raise ScenarioError(str(record), f"{what}; cannot render it") from None


def _anchor(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _num(x: Any, fmt: str = ".2f", scale: float = 1.0, unit: str = "") -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x * scale:{fmt}}{unit}"


# -- a run ------------------------------------------------------------------


def run_section(d: Path) -> Section:
    s = json.loads((d / "summary.json").read_text(encoding="utf-8"))
    name = s["scenario"]["name"]
    engine = s.get("engine", "sim")
    rows = [
        (f["index"], f["cc"], f"{f['rtt_ms']:g} ms", _num(f["goodput_mbps"]), _num(f["share"], ".1f", 100, "%"),
         f["retransmits"], _num(f.get("rtt_mean_ms")))
        for f in s["flows"]
    ]
    q = s["queue_delay_ms"]
    w = s["window"]
    head = h.table(
        ["window", "goodput total", "Jain", "utilisation", "queueing delay p50 / p95", "drops"],
        [(f"{w['from_s']:g}-{w['to_s']:g} s", _num(s["goodput_total_mbps"], ".2f", 1, " Mbit/s"), _num(s["jain"], ".4f"),
          _num(s["utilization"], ".1f", 100, "%"), f"{_num(q['p50'])} / {_num(q['p95'])} ms", s["drops"])],
        numeric=(1, 2, 3, 5),
    )
    flows = h.table(["flow", "cc", "base RTT", "goodput Mbit/s", "share", "retransmits", "mean RTT ms"], rows,
                    numeric=(3, 4, 5, 6))
    parts = [f'<p class="meta">{h.esc(d)} — engine: {h.esc(engine)}</p>', head, flows]
    if (d / "goodput.png").is_file():
        parts.append(h.image(d / "goodput.png", f"{name}: goodput per flow and queueing delay over time"))
    command = "ccarena run scenario.toml" if engine == "sim" else "ccarena live run scenario.toml"
    if (d / "scenario.toml").is_file():
        parts += ["<h3>Scenario</h3>", h.code((d / "scenario.toml").read_text(encoding="utf-8"))]
        parts.append(f"<p>Run it again: <code>{h.esc(command)}</code> (with the scenario above as scenario.toml).</p>")
    else:
        parts += ["<h3>Scenario (resolved)</h3>", h.code(json.dumps(s["scenario"]["input"], indent=1))]
    title = f"Run {d.name}: {name}"
    return Section(_anchor(f"run-{d.name}"), title, "run", "".join(parts))


# -- a sweep ----------------------------------------------------------------


def sweep_section(d: Path) -> Section:
    import pyarrow.parquet as pq

    from ..stats import mean_ci95

    index = json.loads((d / "sweep.json").read_text(encoding="utf-8"))
    rows = pq.read_table(d / "points.parquet").to_pylist()
    # Columns of the table: every swept path (a zipped axis names several).
    axes = [path for a in index["axes"] if a != "seed" for path in a.split(",")]
    n_flows = max(int(k.split(".")[1]) for r in rows for k in r if k.startswith("flow.") and k.endswith(".share")) + 1
    metrics = [(f"flow.{i}.share", f"flow {i} share", 100, ".1f", "%") for i in range(n_flows)]
    metrics += [("jain", "Jain", 1, ".3f", ""), ("utilization", "utilisation", 100, ".1f", "%"),
                ("queue_delay_ms.p95", "queue p95 ms", 1, ".1f", "")]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[a] for a in axes), []).append(r)
    table_rows = []
    for combo, members in groups.items():
        cells: list[Any] = list(combo) + [len(members)]
        for col, _, scale, fmt, unit in metrics:
            m, ci = mean_ci95([r.get(col) for r in members])
            cells.append(_num(m, fmt, scale, unit) + ("" if not math.isfinite(ci) else f" ± {ci * scale:{fmt}}"))
        table_rows.append(cells)
    header = axes + ["seeds"] + [label for _, label, *_ in metrics]
    numeric = range(len(axes), len(header))
    parts = [
        f'<p class="meta">{h.esc(d)} — {len(rows)} points over '
        + h.esc(", ".join(f"{k} ({len(v)})" for k, v in index["axes"].items())) + "</p>",
        "<p>Mean over seeds ± the half-width of the 95% confidence interval (Student t).</p>",
        h.table(header, table_rows, numeric=numeric),
    ]
    if axes and n_flows:
        parts.append(_sweep_figure(rows, axes, n_flows))
    if index.get("sweep_file"):
        parts.append(f"<p>Run it again (finished points come from the cache): "
                     f"<code>{h.esc('ccarena sweep ' + index['sweep_file'] + ' --out ' + str(d))}</code>; one point alone: "
                     f"<code>{h.esc('ccarena run ' + index['sweep_file'] + ' --point N')}</code>.</p>")
    return Section(_anchor(f"sweep-{d.name}"), f"Sweep {d.name}: {index['name']}", "sweep", "".join(parts))


def _sweep_figure(rows: Sequence[dict], axes: Sequence[str], n_flows: int) -> str:
    """Flow 0's share against the first axis, a line per value of the
    others, mean over seeds with the 95% interval as error bars."""
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ..stats import mean_ci95

    first, rest = axes[0], axes[1:]
    xs = list(dict.fromkeys(r[first] for r in rows))
    lines: dict[tuple, dict[Any, list[float]]] = {}
    for r in rows:
        lines.setdefault(tuple(r[a] for a in rest), {}).setdefault(r[first], []).append(r["flow.0.share"])
    fig, ax = plt.subplots(figsize=(7.5, 3.6), dpi=100)
    for combo, by_x in lines.items():
        stats = [mean_ci95(by_x.get(x, [])) for x in xs]
        label = ", ".join(f"{a}={v}" for a, v in zip(rest, combo)) or "all"
        ax.errorbar(range(len(xs)), [100 * m for m, _ in stats],
                    yerr=[0 if not math.isfinite(c) else 100 * c for _, c in stats], marker="o", capsize=3, label=label)
    ax.axhline(100 / n_flows, color="grey", linestyle=":", linewidth=1, label="fair share")
    ax.set_xticks(range(len(xs)), [str(x) for x in xs])
    ax.set_xlabel(first)
    ax.set_ylabel("flow 0 share (%)")
    ax.set_ylim(0, 100)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    plt.close(fig)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    caption = f"flow 0's share against {first}: mean over seeds, bars the 95% interval"
    return f'<figure><img alt="{h.esc(caption)}" src="data:image/png;base64,{data}"><figcaption>{h.esc(caption)}</figcaption></figure>'


# -- an experiment ------------------------------------------------------------


def experiment_section(d: Path) -> Section:
    from ..experiments.report import result_from_json

    try:
        result = result_from_json((d / "results.json").read_text(encoding="utf-8"))
    except ValueError as err:
        raise ScenarioError(str(d / "results.json"), str(err)) from None
    verdict = {"agrees": '<span class="agrees">agrees</span>', "differs": '<span class="differs">differs</span>',
               "-": '<span class="none">-</span>', "depends on the metric": '<span class="none">depends on the metric</span>'}
    from ..experiments.report import NO_CLAIMS, linux_text, sim_linux_text

    ruled = any(c.rule for c in result.rows)
    linux = any(c.linux is not None for c in result.rows)
    rows = [(h.inline_markdown(c.quantity), h.esc(c.paper), h.esc(c.ours), h.esc(c.spread or "-"), verdict[c.verdict])
            + ((h.esc(c.rule or "-"),) if ruled else ())
            + ((h.esc(linux_text(c)), h.inline_markdown(sim_linux_text(c))) if linux else ()) for c in result.rows]
    parts = [f'<p class="meta">{h.esc(d)} — paper {h.esc(result.paper)}, {h.esc(result.figure)}'
             + (" — <b>--quick run</b>: a smoke test, not a reproduction" if result.quick else "") + "</p>",
             f"<p>{h.inline_markdown(result.summary)}</p>"]
    if result.setup:
        parts.append("<h3>Setup</h3><ul>" + "".join(f"<li>{h.inline_markdown(s)}</li>" for s in result.setup) + "</ul>")
    parts.append("<h3>Paper vs ccarena</h3>")
    if not result.rows:
        parts.append(f"<p>{h.esc(NO_CLAIMS)}</p>")
    else:
        parts.append(h.table(["quantity", "paper", "ccarena", "ccarena range", "verdict"]
                             + (["rule applied"] if ruled else []) + (["Linux", "simulator vs Linux"] if linux else []),
                             rows, raw=(0, 1, 2, 3, 4, 5, 6, 7)))
        parts.append(f"<p>{len(result.agreed)} of {len(result.judged)} judged rows agree.</p>")
    if result.differences:
        parts.append("<h3>Where we differ, and why</h3><ul>" + "".join(
            f"<li><b>{h.inline_markdown(c.quantity)}</b>: {h.inline_markdown(c.reason or 'no explanation recorded.')}</li>"
            for c in result.differences) + "</ul>")
    if result.notes:
        parts.append("<h3>Notes on the rows</h3><ul>" + "".join(
            f"<li><b>{h.inline_markdown(c.quantity)}</b>: {h.inline_markdown(c.reason)}</li>" for c in result.notes) + "</ul>")
    for fig in result.figures:
        path = d / fig.file
        if not path.is_file():
            raise ScenarioError(str(path), "a figure results.json lists is missing")
        parts.append(h.image(path, fig.caption))
    for heading, body in result.sections:
        parts.append(f"<h3>{h.esc(heading)}</h3>{h.markdown(body)}")
    command = f"ccarena reproduce {result.experiment}" + (" --quick" if result.quick else "")
    parts.append(f"<p>Run it again: <code>{h.esc(command)}</code></p>")
    title = f"{result.experiment}: {result.figure}"
    return Section(_anchor(f"exp-{result.experiment}"), title, "experiment", "".join(parts))
