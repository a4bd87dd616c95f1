"""Experiments: named sets of scenarios with an analysis that reproduces a
paper's figure or table ("paper vs ccarena"), run by `ccarena reproduce`.

    >>> from ccarena import experiments
    >>> experiments.names()                       # what --list shows
    >>> report = experiments.measure("bbq-fig1")  # numbers only, nothing written
    >>> report.numbers["bbq.short_share"]
    >>> experiments.reproduce(["bbq-fig1"], Path("runs/reproduce"))  # report.md, PNGs

One package per paper (``experiments/bbq/`` for the BBQ paper); see
docs/experiments.md.
"""

from .framework import Comparison, Experiment, Figure, Outcome, Paper, Report, Result, RunSpec, Variant
from .registry import ALL, EXPERIMENTS, PAPERS, get, names, paper_of
from .reproduce import measure, reproduce, run_experiments

__all__ = [
    "ALL",
    "EXPERIMENTS",
    "Comparison",
    "Experiment",
    "Figure",
    "Outcome",
    "PAPERS",
    "Paper",
    "Report",
    "Result",
    "RunSpec",
    "Variant",
    "get",
    "measure",
    "names",
    "paper_of",
    "reproduce",
    "run_experiments",
]
