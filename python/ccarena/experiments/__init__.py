"""Experiments: named sets of scenarios with an analysis that reproduces a
paper's figure or table ("paper vs ccarena"), run by `ccarena reproduce`.

    >>> from ccarena import experiments
    >>> experiments.names()                       # what --list shows
    >>> report = experiments.measure("bbq-fig1")  # numbers only, nothing written
    >>> report.numbers["bbq.short_share"]
    >>> experiments.reproduce(["bbq-fig1"], Path("runs/reproduce"))  # report.md, PNGs

See docs/experiments.md.
"""

from .framework import Comparison, Experiment, Figure, Outcome, Report, RunSpec
from .registry import ALL, EXPERIMENTS, get, names
from .reproduce import measure, reproduce, run_experiments

__all__ = [
    "ALL",
    "EXPERIMENTS",
    "Comparison",
    "Experiment",
    "Figure",
    "Outcome",
    "Report",
    "RunSpec",
    "get",
    "measure",
    "names",
    "reproduce",
    "run_experiments",
]
