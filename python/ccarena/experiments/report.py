"""report.md, results.json and index.md: renderings of :class:`Result`.

A report is a pure function of the experiment's numbers (no wall times,
dates or paths), so the same code and seeds give the same bytes; wall
times appear only on stderr and in index.md.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Sequence

from .framework import MIN_SEEDS, Comparison, Figure, LinuxCell, Paper, Result
from .verdict import MIN_REPS

#: How report.md shows a row's :attr:`Comparison.verdict`.
VERDICT = {"agrees": "agrees", "differs": "**differs**", "-": "-", "depends on the metric": "*depends on the metric*"}

#: The rule, in words, under every table (verdict.py applies it; docs/experiments.md).
RULE = (f"A number agrees when the distance from our mean over the seeds (at least {MIN_SEEDS}) to what the paper "
        "states (its value, range or bound) is at most the larger of the paper's spread (for a number it writes "
        "without one, half a unit of its last digit), half our seed range and, for a number counted on a grid, half "
        "its step; an order "
        "applies that rule to each step, a claim about a set to every member (or the count the paper states); a "
        "word the paper gives no number for is shown, not judged.")


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def linux_text(row: Comparison) -> str:
    """A row's Linux column: what Linux gave and its verdict, or why none."""
    cell = row.linux
    if cell is None:
        return "-"
    if cell.ours == "-":
        return cell.status if cell.status in ("not run live", "cannot carry") else "not measured"
    return f"{cell.ours}" + (f" ({cell.spread})" if cell.spread else "") + f": {cell.verdict}"


def sim_linux_text(row: Comparison) -> str:
    cell = row.linux
    if cell is None or cell.ours == "-":
        return "-"
    return {"differ": "**differ**"}.get(cell.status, cell.status)


def comparison_table(rows: Sequence[Comparison]) -> str:
    """The "paper vs ccarena" table, Markdown: paper, simulator and, where
    the rows have one, real Linux (docs/linux/)."""
    ruled = any(row.rule for row in rows)
    linux = any(row.linux is not None for row in rows)
    lines = [
        "| quantity | paper | ccarena | ccarena range | verdict |" + (" rule applied |" if ruled else "")
        + (" Linux | simulator vs Linux |" if linux else ""),
        "| --- | --- | --- | --- | --- |" + (" --- |" if ruled else "") + (" --- | --- |" if linux else ""),
    ]
    for row in rows:
        cells = (row.quantity, row.paper, row.ours, row.spread or "-", VERDICT[row.verdict]) + (
            (row.rule or "-",) if ruled else ()) + ((linux_text(row), sim_linux_text(row)) if linux else ())
        lines.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(lines)


#: What the Linux column is, under every table that has one.
LINUX_RULE = ("Linux: the same runs on the live engine (the kernel's BBR and CUBIC, ours as BPF; each seed a "
              f"repetition), measured by the same analysis and judged against the paper by the same rule once "
              f"there are at least {MIN_SEEDS} repetitions (a pass makes {MIN_REPS} unless given --live-reps; with fewer "
              "the Linux numbers are shown, not judged, and compared with the simulator's). The "
              "simulator and Linux differ when their means are further apart than the largest of the two "
              "half-ranges, the paper's spread and half a grid step where a number is counted on one (at least "
              f"{MIN_REPS} seeds and {MIN_REPS} repetitions each; numbers that "
              "would print alike are printed with the digits that tell them apart).")


def linux_section(result: Result) -> list[str]:
    """Markdown lines: where the Linux column comes from, and each row's
    rule (or why it has no Linux numbers)."""
    cells = [(c, c.linux) for c in result.rows if c.linux is not None]
    if not cells:
        return []
    sources = sorted({cell.source for _, cell in cells if cell.source})
    lines = ["### Real Linux", ""]
    if not sources:
        lines += [f"No live pass of {result.experiment} is recorded in docs/linux/ (`ccarena reproduce "
                  f"{result.experiment} --live`, root). {LINUX_RULE}", ""]
        return lines
    lines += [f"From {', '.join(f'`{s}`' for s in sources)}. {LINUX_RULE}", ""]
    lines += [f"- **{c.quantity}**: {cell.rule}" for c, cell in cells]
    return lines + [""]


def plain_table(rows: Sequence[Comparison]) -> str:
    """The same table for a terminal."""
    linux = any(r.linux is not None for r in rows)
    data = [("quantity", "paper", "ccarena", "range", "verdict") + (("Linux", "sim vs Linux") if linux else ())]
    data += [(r.quantity, r.paper, r.ours, r.spread or "-", r.verdict.replace("differs", "DIFFERS"))
             + ((linux_text(r), sim_linux_text(r).replace("**differ**", "DIFFER")) if linux else ()) for r in rows]
    widths = [max(len(row[c]) for row in data) for c in range(len(data[0]))]
    out = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in data]
    out.insert(1, "  ".join("-" * w for w in widths))
    # Each judged row's rule under it, indented.
    for i in reversed(range(len(rows))):
        if rows[i].rule:
            out.insert(i + 3, "    rule: " + rows[i].rule)
    return "\n".join(out)


#: What a report without claims says where the table would be.
NO_CLAIMS = ("No paper states a number for this experiment: its results below are shown, not judged (no row, so "
             "no verdict).")


def markdown(result: Result) -> str:
    """report.md of one experiment."""
    parts = [f"# {result.experiment}: {result.figure}", "", result.summary, ""]
    if result.quick:
        parts += [
            "> **--quick run**: shortened runs and sweeps, one seed. A smoke test; the numbers "
            "below are not a reproduction of the paper.",
            "",
        ]
    if result.live_runs:
        parts += [
            f"> **Includes {len(result.live_runs)} live run(s)** (`--live`: real Linux TCP, our algorithms as "
            "BPF, measured by this command): the rows that cite them will differ from run to run; the "
            "simulated rows do not.",
            "",
        ]
    if result.setup:
        parts += ["## Setup", ""] + [f"- {line}" for line in result.setup] + [""]
    if not result.rows:
        parts += ["## Paper vs ccarena", "", NO_CLAIMS, ""]
    else:
        parts += ["## Paper vs ccarena", "", comparison_table(result.rows), ""]
        depends = _depending([result])
        parts += [f"{len(result.agreed)} of {len(result.judged)} judged rows agree"
                  + (f"; {depends}" if depends else "") + f". {RULE}", ""]
    if result.differences:
        parts += ["### Where we differ, and why", ""]
        parts += [f"- **{c.quantity}**: {c.reason or 'no explanation recorded.'}" for c in result.differences]
        parts += [""]
    parts += linux_section(result)
    if result.notes:
        parts += ["### Notes on the rows", ""] + [f"- **{c.quantity}**: {c.reason}" for c in result.notes] + [""]
    if result.figures:
        parts += ["## Figures", ""]
        for fig in result.figures:
            parts += [f"![{fig.caption}]({fig.file})", "", f"*{fig.caption}*", ""]
    for heading, body in result.sections:
        parts += [f"## {heading}", "", body.rstrip(), ""]
    return "\n".join(parts).rstrip() + "\n"


def results_json(result: Result) -> str:
    """results.json of one experiment: the whole record (everything
    report.md shows, the reasons, figures and sections included), from
    which :func:`result_from_json` gives the :class:`Result` back, so that
    ``ccarena report`` renders the same record as report.md."""

    def clean(x: float) -> float | None:
        return None if not math.isfinite(x) else round(float(x), 6)

    doc = {
        "experiment": result.experiment,
        "figure": result.figure,
        "summary": result.summary,
        "paper": result.paper,
        "quick": result.quick,
        **({"live_runs": list(result.live_runs)} if result.live_runs else {}),
        "setup": list(result.setup),
        "numbers": {k: clean(v) for k, v in sorted(result.numbers.items())},
        "comparisons": [
            {"quantity": c.quantity, "paper": c.paper, "ours": c.ours, "range": c.spread, "agrees": c.agrees,
             "reason": c.reason, **({"claim": c.claim, "rule": c.rule} if c.claim or c.rule else {}),
             **({"metric_dependent": True} if c.metric_dependent else {}),
             **({"linux": dataclasses.asdict(c.linux)} if c.linux is not None else {})}
            for c in result.rows
        ],
        "figures": [{"file": f.file, "caption": f.caption} for f in result.figures],
        "sections": [{"heading": h, "body": b} for h, b in result.sections],
    }
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def result_from_json(text: str) -> Result:
    """The :class:`Result` a results.json records (ValueError if it is not one)."""
    doc = json.loads(text)
    try:
        return Result(
            experiment=doc["experiment"],
            figure=doc["figure"],
            summary=doc["summary"],
            paper=doc["paper"],
            quick=doc["quick"],
            setup=tuple(doc["setup"]),
            rows=tuple(
                Comparison(c["quantity"], c["paper"], c["ours"], c["range"], c["agrees"], c["reason"],
                           rule=c.get("rule", ""), claim=c.get("claim", ""),
                           metric_dependent=bool(c.get("metric_dependent", False)),
                           linux=LinuxCell(**c["linux"]) if c.get("linux") else None)
                for c in doc["comparisons"]
            ),
            figures=tuple(Figure(f["file"], f["caption"]) for f in doc["figures"]),
            sections=tuple((s["heading"], s["body"]) for s in doc["sections"]),
            numbers={k: (math.nan if v is None else v) for k, v in doc["numbers"].items()},
            live_runs=tuple(doc.get("live_runs", ())),
        )
    except (KeyError, TypeError) as err:
        raise ValueError(f"not an experiment's results.json (missing {err})") from None


def _depending(results: Sequence[Result]) -> str:
    """"N depend(s) on the metric" over the results' rows (neither agree
    nor differ, so counted in neither), or "" when none does."""
    n = sum(c.metric_dependent for r in results for c in r.rows)
    return f"{n} depend{'s' if n == 1 else ''} on the metric" if n else ""


def _sim_counts(results: Sequence[Result]) -> str:
    """"agreed / judged" of the simulator's rows, and how many depend on the
    metric."""
    depends = _depending(results)
    return (f"{sum(len(r.agreed) for r in results)} / {sum(len(r.judged) for r in results)}"
            + (f", {depends}" if depends else ""))


def _linux_counts(results: Sequence[Result]) -> str:
    """"agreed / judged" of the Linux column over the rows Linux measured."""
    cells = [c.linux for r in results for c in r.judged if c.linux is not None and c.linux.ours != "-"]
    judged = [cell for cell in cells if cell.verdict in ("agrees", "differs")]
    # Fewer repetitions than a verdict needs (--live-reps 3): measured, not judged.
    return f"{sum(cell.verdict == 'agrees' for cell in judged)} / {len(judged)}" if judged else "-"


def _linux_status(results: Sequence[Result]) -> str:
    """"consistent / differ" over the experiments' rows, or why no Linux."""
    cells = [c.linux for r in results for c in r.rows if c.linux is not None]
    if not cells:
        return "-"
    if all(cell.ours == "-" for cell in cells):
        return cells[0].status
    return (f"{sum(cell.status == 'consistent' for cell in cells)} / "
            f"{sum(cell.status == 'differ' for cell in cells)}")


#: The first line of index.md, by which a later run knows the file is ours.
INDEX_TITLE = "# ccarena reproduce"


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def index_markdown(
    papers: Sequence[Paper], results: Sequence[Result], quick: bool, wall_s: float, runs: int, jobs: int
) -> str:
    """index.md: a section per paper (in ``papers``' order) with its verdict
    summary and a row per experiment; papers without results are left out."""
    shown = [p for p in papers if any(r.paper == p.key for r in results)]
    lines = [f"{INDEX_TITLE}: {_count(len(shown), 'paper')}, {_count(len(results), 'experiment')}", ""]
    if quick:
        lines += ["> **--quick run**: a smoke test, not a reproduction.", ""]
    lines += ["| paper | experiments | simulator: agrees / judged | Linux: agrees / judged | simulator vs Linux: "
              "consistent / differ |", "| --- | --- | --- | --- | --- |"]
    for paper in shown:
        mine = [r for r in results if r.paper == paper.key]
        lines.append(f"| {paper.key}: {paper.title} | {len(mine)} | {_sim_counts(mine)} | {_linux_counts(mine)} "
                     f"| {_linux_status(mine)} |")
    lines += ["", f"{LINUX_RULE} Rows with no Linux numbers say why in their report (not run live yet, or the "
              "testbed cannot carry the runs).", ""]
    for paper in shown:
        mine = [r for r in results if r.paper == paper.key]
        agreed = sum(len(r.agreed) for r in mine)
        judged = sum(len(r.judged) for r in mine)
        depends = _depending(mine)
        text = f" Text: `../shared/papers/{paper.file}`." if paper.file else ""
        lines += [f"## {paper.key}: {paper.title}", "", f"{paper.citation}.{text}", ""]
        lines += [f"{agreed} of {judged} judged rows agree over {_count(len(mine), 'experiment')}"
                  + (f"; {depends} (neither agree nor differ)" if depends else "") + f". {RULE}", ""]
        lines += ["| experiment | paper | simulator: agrees / judged | Linux: agrees / judged | simulator vs Linux | "
                  "report |", "| --- | --- | --- | --- | --- | --- |"]
        for r in mine:
            link = f"[{r.experiment}/report.md]({r.experiment}/report.md)"
            lines.append(f"| {r.experiment} | {r.figure} | {_sim_counts([r])} | {_linux_counts([r])} "
                         f"| {_linux_status([r])} | {link} |")
        lines += [""]
    differ = [(r, c) for r in results for c in r.rows if c.linux is not None and c.linux.differs_from_sim]
    lines += ["## Simulator defects to investigate", ""]
    if differ:
        lines += ["Rows where the simulator and real Linux differ by more than their spreads (each report's "
                  "\"Real Linux\" section gives the numbers):", ""]
        lines += [f"- {r.experiment}: {c.quantity}" for r, c in differ]
    else:
        lines += ["None among the rows measured on Linux."]
    lines += [""]
    lines += [f"{runs} simulations on {jobs} processes; total wall time {wall_s:.1f} s.", ""]
    return "\n".join(lines)
