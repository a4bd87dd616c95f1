"""What an experiment is: a named set of scenarios and an analysis.

An :class:`Experiment` turns ``quick`` into a list of :class:`RunSpec`
(scenario documents, each with the telemetry columns its figures need),
and turns the finished runs (:class:`Outcome`, keyed by ``RunSpec.key``)
into a :class:`Report`: the numbers it measured, the "paper vs ccarena"
rows, notes on the setup, and the figures it drew. Running the specs is
:mod:`.runner`'s job; :class:`Result` is the record of one finished
experiment, which :mod:`.report` renders (report.md, results.json,
index.md). An experiment module only says what to simulate and what to
make of it.

A :class:`Variant` is an algorithm as an experiment runs it (a cc plus
per-flow parameters, e.g. BBQ's first cut, BBR under Linux 4.9's
settings); a :class:`Paper` is the publication a package of experiments
reproduces (``experiments/bbq/`` for the BBQ paper; see docs/experiments.md).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from .. import units


@dataclass(frozen=True)
class Variant:
    """An algorithm as an experiment runs it: the congestion control
    ``cc`` (a name ``ccarena ccs`` lists) with per-flow ``params`` (the
    scenario's ``[flow.params]``). ``name`` is what run keys, numbers and
    tables call it ("bbq-first-cut"); ``label`` how legends show it.

        >>> BBQ = Variant("bbq", "bbq", label="BBQ")
        >>> FIRST_CUT = BBQ.derive("bbq-first-cut", {"first_cut": 1}, label="first cut")
        >>> FIRST_CUT.flow_fields()
        {'cc': 'bbq', 'params': {'first_cut': 1}}
    """

    name: str
    cc: str
    params: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""

    def __post_init__(self) -> None:
        # Read-only, so that a variant shared by many experiments cannot be
        # changed by one of them.
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))
        if not self.label:
            object.__setattr__(self, "label", self.name)

    def __hash__(self) -> int:
        return hash((self.name, self.cc, tuple(sorted(self.params.items()))))

    def derive(self, name: str, params: Mapping[str, Any], *, label: str = "") -> Variant:
        """The same cc with ``params`` added to (and overriding) this one's."""
        return Variant(name, self.cc, {**self.params, **params}, label or name)

    def flow_fields(self) -> dict[str, Any]:
        """``cc`` and, if any, ``params`` of a scenario's ``[[flow]]`` entry."""
        fields: dict[str, Any] = {"cc": self.cc}
        if self.params:
            fields["params"] = dict(self.params)
        return fields


@dataclass(frozen=True)
class Paper:
    """A publication whose figures a package of experiments reproduces.

    ``key`` names the package (``experiments/<key>/``) and the experiments'
    prefix (``bbq-fig1``); ``file`` is the paper's text under
    ``../shared/papers/``.
    """

    key: str
    title: str
    citation: str
    file: str


@dataclass(frozen=True)
class RunSpec:
    """One simulation of an experiment.

    ``key`` is unique within the experiment (e.g. ``"bbr/rate=100Mbit/seed=1"``);
    ``scenario`` a scenario document as a TOML file would give it;
    ``flow_columns`` / ``link_columns`` the timeseries.parquet /
    link.parquet columns the analysis needs (none: the summary only, which
    keeps sweeps small); ``out``, if set, a run directory to write (with
    its telemetry and plot) where the run happens; ``name`` the scenario's
    name in its summary (a sweep's points carry the sweep file's);
    ``derive`` derived metrics (:mod:`ccarena.sweep.derive`) to compute
    from the telemetry where the run happens, into ``summary["derived"]``.
    """

    key: str
    scenario: Mapping[str, Any]
    flow_columns: tuple[str, ...] = ()
    link_columns: tuple[str, ...] = ()
    out: str | None = None
    name: str = "scenario"
    derive: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        """The run's simulated (or live) length, s."""
        return units.parse_time(self.scenario["duration"]) / 1e9

    @property
    def cost(self) -> float:
        """Relative cost, for scheduling the longest runs first: packets the
        run's links can carry (rate x duration), in millions."""
        links = self.scenario.get("link") or [self.scenario["bottleneck"]]
        # A trace's link has no rate: count it at 100 Mbit/s (an ordering hint only).
        rate = sum(units.parse_rate(link["rate"]) if "rate" in link else 100_000_000 for link in links)
        flows = sum(int(f.get("count", 1)) for f in self.scenario.get("flow", []))
        return rate * self.duration_s / 8 / units.PACKET_WIRE_BYTES / 1e6 * (1 + 0.02 * flows)


@dataclass
class Outcome:
    """A finished run, reduced to what the analysis asked for.

    ``summary`` is the run's summary.json document. ``flow[col]`` is an
    array of shape (flows, intervals) and ``t_s`` the intervals' end times;
    ``link[col]`` is an array over the same intervals. ``wall_s`` is how
    long the run took, ``engine_s`` the part spent in the engine (progress
    lines and benchmarks only, never in reports).
    """

    key: str
    summary: dict[str, Any]
    t_s: np.ndarray
    flow: dict[str, np.ndarray]
    link: dict[str, np.ndarray]
    wall_s: float
    engine_s: float = 0.0

    @property
    def flows(self) -> list[dict[str, Any]]:
        return self.summary["flows"]

    def share(self, index: int) -> float:
        return float(self.flows[index]["share"])

    def goodput(self, index: int) -> float:
        return float(self.flows[index]["goodput_mbps"])

    @property
    def queue_delay_mean_ms(self) -> float:
        value = self.summary["queue_delay_ms"]["mean"]
        return float("nan") if value is None else float(value)

    @property
    def utilization(self) -> float:
        value = self.summary["utilization"]
        return float("nan") if value is None else float(value)


# --- Verdict rules: experiments/verdict.py applies them to a paper's claims
# table (docs/experiments.md, "When a row agrees"); what they share with
# the experiment modules is here.

#: Seeds a number needs before it is judged.
MIN_SEEDS = 5


def fair_distance(share: float, n: int = 2) -> float:
    """How far a flow's share is from its fair share 1/n: what "fairer"
    compares (never "more for the shorter flow")."""
    return abs(share - 1.0 / n)


@dataclass(frozen=True)
class LinuxCell:
    """A judged row's real-Linux column (linux.py, verdict.linux_cell):
    what Linux gave, its verdict against the paper by the same rule, and
    whether the simulator and Linux agree."""

    #: Linux's mean (or members) as the row shows numbers; "-" when not run.
    ours: str = "-"
    spread: str = ""
    #: Linux against the paper: "agrees", "differs", "-" (not judged).
    verdict: str = "-"
    #: The simulator against Linux: "consistent", "differ", or why not
    #: compared ("not run live", "cannot carry", ...).
    status: str = "not run live"
    #: The rule applied (or the reason), in words and numbers.
    rule: str = ""
    #: Which results file it comes from (docs/linux/DATE.json).
    source: str = ""

    @property
    def differs_from_sim(self) -> bool:
        return self.status == "differ"


@dataclass(frozen=True)
class Comparison:
    """One row of the "paper vs ccarena" table.

    ``paper`` is the paper's claim in its own words (or its number);
    ``agrees`` is None for a row that cannot be judged (the paper gives no
    number, the row is ours only, or too few seeds); when it is False,
    ``reason`` says why we believe we differ, from numbers the same run
    measured (rule 5).
    """

    quantity: str
    paper: str
    ours: str
    spread: str = ""
    agrees: bool | None = None
    reason: str = ""
    #: The rule the verdict applied, in words and numbers (rows judged by
    #: :mod:`.verdict` from a claims table; empty for older rows).
    rule: str = ""
    #: The claim's id in the paper's claims.toml ("" for rows not from one).
    claim: str = ""
    #: Another reasonable metric flips the verdict: the row is neither
    #: agrees nor differs (``agrees`` is None) but "depends on the metric".
    metric_dependent: bool = False
    #: Real Linux for the same claim (judged rows only; None elsewhere).
    linux: LinuxCell | None = None

    @property
    def verdict(self) -> str:
        if self.metric_dependent:
            return "depends on the metric"
        return {True: "agrees", False: "differs", None: "-"}[self.agrees]

    @property
    def unexplained(self) -> bool:
        """Rule 5 broken: the row differs and says not why (tests check
        that no experiment produces one; report.md flags it)."""
        return self.agrees is False and not self.reason.strip()


@dataclass(frozen=True)
class Figure:
    file: str
    caption: str


@dataclass
class Report:
    """What an experiment found: the text of report.md and results.json."""

    comparisons: list[Comparison] = field(default_factory=list)
    #: Flat name -> number map (results.json; what tests pin).
    numbers: dict[str, float] = field(default_factory=dict)
    #: Setup bullets: the paper's settings we used, and what we chose where it is silent.
    setup: list[str] = field(default_factory=list)
    #: Further Markdown sections: (heading, body).
    sections: list[tuple[str, str]] = field(default_factory=list)
    figures: list[Figure] = field(default_factory=list)
    #: Claim id -> what was measured for it (per seed): the framework
    #: judges these against the paper's claims table (:mod:`.verdict`);
    #: an experiment module never decides a verdict itself.
    measured: dict[str, Any] = field(default_factory=dict)

    @property
    def differences(self) -> list[Comparison]:
        return [c for c in self.comparisons if c.agrees is False]


@dataclass(frozen=True)
class Result:
    """One finished experiment, everything its reports show: which
    experiment and paper, whether --quick, the setup, the rows (with their
    reasons), the figures, further sections and the numbers. report.md,
    results.json and index.md are renderings of this record
    (:mod:`.report`); an HTML report renders the same record.
    """

    experiment: str
    #: The paper's figure/table, or "beyond the paper".
    figure: str
    summary: str
    #: The :class:`Paper`'s key.
    paper: str
    quick: bool
    setup: tuple[str, ...]
    rows: tuple[Comparison, ...]
    figures: tuple[Figure, ...]
    sections: tuple[tuple[str, str], ...]
    numbers: Mapping[str, float]
    #: Live runs measured in this run (``--live``): their keys. Such a
    #: report is not reproducible byte for byte (real Linux is not
    #: deterministic); the rest of it is.
    live_runs: tuple[str, ...] = ()

    @classmethod
    def of(cls, experiment: Experiment, paper: str, report: Report, quick: bool,
           live_runs: Sequence[str] = ()) -> Result:
        """The record of a finished experiment: the paper's claims for it
        (its claims table) judged on what it measured, first, then the
        rows it shows without a claim."""
        return cls(
            experiment=experiment.name,
            figure=experiment.figure,
            summary=experiment.summary,
            paper=paper,
            quick=quick,
            setup=tuple(report.setup),
            rows=tuple(all_rows(experiment, paper, report, quick)),
            figures=tuple(report.figures),
            sections=tuple(report.sections),
            numbers=MappingProxyType(dict(report.numbers)),
            live_runs=tuple(live_runs),
        )

    @property
    def judged(self) -> list[Comparison]:
        return [c for c in self.rows if c.agrees is not None]

    @property
    def agreed(self) -> list[Comparison]:
        return [c for c in self.rows if c.agrees is True]

    @property
    def differences(self) -> list[Comparison]:
        """Rows that differ; each carries its reason."""
        return [c for c in self.rows if c.agrees is False]

    @property
    def notes(self) -> list[Comparison]:
        """Unjudged rows with a note."""
        return [c for c in self.rows if c.agrees is None and c.reason]


def all_rows(experiment: Experiment, paper: str, report: Report, quick: bool = False) -> list[Comparison]:
    """An experiment's rows: the paper's claims for it (its paper's
    claims.toml), judged by :mod:`.verdict` on what it measured
    (``report.measured``), real Linux beside each (the newest record in
    docs/linux/, :mod:`.linux`), then the rows it shows without a claim."""
    from . import claims, linux, verdict

    claimed = claims.of_experiment(paper, experiment.name)
    record = linux.latest().get(experiment.name)
    return verdict.rows(claimed, report.measured, experiment.name, record, quick) + list(report.comparisons)


#: analyse(outcomes, figure_dir or None, quick) -> Report. With a
#: figure_dir the analysis draws its PNGs there; without, numbers only.
Analyse = Callable[[Mapping[str, Outcome], Path | None, bool], Report]


@dataclass(frozen=True)
class Experiment:
    name: str
    #: The paper's figure/table it reproduces ("Fig. 3, Fig. 14"), or "beyond the paper".
    figure: str
    #: One line for `ccarena reproduce --list`.
    summary: str
    runs: Callable[[bool], Sequence[RunSpec]]
    analyse: Analyse
    #: The runs to repeat on the live engine (real Linux TCP, our
    #: algorithms as BPF) when ``ccarena reproduce --live`` asks (rule 5):
    #: their outcomes reach ``analyse`` under ``LIVE_PREFIX + key``, and
    #: never otherwise, so that reports without --live stay byte-identical.
    live: Callable[[bool], Sequence[RunSpec]] | None = None

    def specs(self, quick: bool) -> list[RunSpec]:
        return _unique(self.name, self.runs(quick))

    def live_specs(self, quick: bool) -> list[RunSpec]:
        return _unique(self.name, self.live(quick)) if self.live is not None else []


#: Where live outcomes sit among an experiment's outcomes: ``outcomes["live/" + key]``.
LIVE_PREFIX = "live/"


def _unique(name: str, specs: Sequence[RunSpec]) -> list[RunSpec]:
    specs = list(specs)
    keys = [s.key for s in specs]
    if len(set(keys)) != len(keys):
        raise ValueError(f"{name}: duplicate run keys")
    return specs
