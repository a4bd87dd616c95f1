"""The experiments `ccarena reproduce` knows: one package per paper
(``experiments/<key>/``, exporting ``PAPER`` and ``EXPERIMENTS``), in the
order of :data:`PACKAGES`, each paper's experiments in its own order.
Adding a paper is adding its package and one line here."""

from __future__ import annotations

from types import ModuleType

from ..errors import ScenarioError
from . import bbq, beyond, bbr, blog, cws, hock
from .framework import Experiment, Paper

#: The paper packages.
PACKAGES: tuple[ModuleType, ...] = (
    bbq,
    cws,
    bbr,
    hock,
    blog,
    beyond,
)

PAPERS: tuple[Paper, ...] = tuple(pkg.PAPER for pkg in PACKAGES)
EXPERIMENTS: tuple[Experiment, ...] = tuple(exp for pkg in PACKAGES for exp in pkg.EXPERIMENTS)
_PAPER_OF: dict[str, Paper] = {exp.name: pkg.PAPER for pkg in PACKAGES for exp in pkg.EXPERIMENTS}

if len(_PAPER_OF) != len(EXPERIMENTS):
    raise ValueError("two experiments share a name")

#: The name that runs every experiment.
ALL = "all"


def names() -> list[str]:
    return [exp.name for exp in EXPERIMENTS]


def get(name: str) -> Experiment:
    for exp in EXPERIMENTS:
        if exp.name == name:
            return exp
    raise ScenarioError(
        "reproduce", f"unknown experiment '{name}' (known: {', '.join(names())}, {ALL}; see ccarena reproduce --list)"
    )


def paper_of(name: str) -> Paper:
    """The paper an experiment belongs to."""
    get(name)
    return _PAPER_OF[name]
