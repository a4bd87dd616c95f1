"""report.md, results.json and index.md.

A report is a pure function of the experiment's numbers (no wall times,
dates or paths), so the same code and seeds give the same bytes; wall
times appear only on stderr and in index.md.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from .framework import Comparison, Experiment, Report

VERDICT = {True: "agrees", False: "**differs**", None: "-"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def comparison_table(rows: Sequence[Comparison]) -> str:
    """The "paper vs ccarena" table, Markdown."""
    lines = [
        "| quantity | paper | ccarena | ccarena range | verdict |",
        "| --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        cells = (row.quantity, row.paper, row.ours, row.spread or "-", VERDICT[row.agrees])
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def plain_table(rows: Sequence[Comparison]) -> str:
    """The same table for a terminal."""
    data = [("quantity", "paper", "ccarena", "range", "verdict")]
    data += [
        (r.quantity, r.paper, r.ours, r.spread or "-", {True: "agrees", False: "DIFFERS", None: "-"}[r.agrees])
        for r in rows
    ]
    widths = [max(len(row[c]) for row in data) for c in range(5)]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in data]
    out.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(out)


def markdown(experiment: Experiment, report: Report, quick: bool) -> str:
    parts = [f"# {experiment.name}: {experiment.figure}", "", experiment.summary, ""]
    if quick:
        parts += [
            "> **--quick run**: shortened runs and sweeps, one seed. A smoke test; the numbers "
            "below are not a reproduction of the paper.",
            "",
        ]
    if report.setup:
        parts += ["## Setup", ""] + [f"- {line}" for line in report.setup] + [""]
    parts += ["## Paper vs ccarena", "", comparison_table(report.comparisons), ""]
    agreed = sum(1 for c in report.comparisons if c.agrees is True)
    judged = sum(1 for c in report.comparisons if c.agrees is not None)
    parts += [f"{agreed} of {judged} judged rows agree (criterion: docs/experiments.md).", ""]
    differences = report.differences
    if differences:
        parts += ["### Where we differ, and why", ""]
        parts += [f"- **{c.quantity}**: {c.reason or 'no explanation recorded.'}" for c in differences]
        parts += [""]
    notes = [c for c in report.comparisons if c.agrees is None and c.reason]
    if notes:
        parts += ["### Notes on the rows", ""] + [f"- **{c.quantity}**: {c.reason}" for c in notes] + [""]
    if report.figures:
        parts += ["## Figures", ""]
        for fig in report.figures:
            parts += [f"![{fig.caption}]({fig.file})", "", f"*{fig.caption}*", ""]
    for heading, body in report.sections:
        parts += [f"## {heading}", "", body.rstrip(), ""]
    return "\n".join(parts).rstrip() + "\n"


def results_json(experiment: Experiment, report: Report, quick: bool) -> str:
    def clean(x: float) -> float | None:
        return None if not math.isfinite(x) else round(float(x), 6)

    doc = {
        "experiment": experiment.name,
        "figure": experiment.figure,
        "quick": quick,
        "numbers": {k: clean(v) for k, v in sorted(report.numbers.items())},
        "comparisons": [
            {"quantity": c.quantity, "paper": c.paper, "ours": c.ours, "range": c.spread, "agrees": c.agrees}
            for c in report.comparisons
        ],
    }
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


#: The first line of index.md, by which a later run knows the file is ours.
INDEX_TITLE = "# ccarena reproduce"


def index_markdown(
    entries: Sequence[tuple[Experiment, Report]], quick: bool, wall_s: float, runs: int, jobs: int
) -> str:
    lines = [
        f"{INDEX_TITLE}: the BBQ paper",
        "",
        "S. Ma, J. Jiang, W. Wang, B. Li, *Fairness of Congestion-Based Congestion Control: "
        "Experimental Evaluation and Analysis* (BBQ), every figure and table on the simulator, "
        "plus experiments beyond the paper.",
        "",
    ]
    if quick:
        lines += ["> **--quick run**: a smoke test, not a reproduction.", ""]
    lines += ["| experiment | paper | agrees / judged | report |", "| --- | --- | --- | --- |"]
    for exp, rep in entries:
        judged = [c for c in rep.comparisons if c.agrees is not None]
        agreed = sum(1 for c in judged if c.agrees)
        link = f"[{exp.name}/report.md]({exp.name}/report.md)"
        lines.append(f"| {exp.name} | {exp.figure} | {agreed} / {len(judged)} | {link} |")
    lines += ["", f"{runs} simulations on {jobs} processes; total wall time {wall_s:.1f} s.", ""]
    return "\n".join(lines)
