"""The experiments `ccarena reproduce` knows, in the paper's order."""

from __future__ import annotations

from ..errors import ScenarioError
from . import (
    bbq_fairness_map,
    bbq_fig1,
    bbq_fig3_14,
    bbq_fig4_table1,
    bbq_fig5_15,
    bbq_fig6_16,
    bbq_fig7,
    bbq_fig8_11,
    bbq_fig12,
    bbq_fig13,
    bbq_fig17,
)
from .framework import Experiment

EXPERIMENTS: tuple[Experiment, ...] = (
    bbq_fig1.EXPERIMENT,
    bbq_fig3_14.EXPERIMENT,
    bbq_fig4_table1.EXPERIMENT,
    bbq_fig5_15.EXPERIMENT,
    bbq_fig6_16.EXPERIMENT,
    bbq_fig7.EXPERIMENT,
    bbq_fig8_11.EXPERIMENT,
    bbq_fig12.EXPERIMENT,
    bbq_fig13.EXPERIMENT,
    bbq_fig17.EXPERIMENT,
    bbq_fig7.EXPERIMENT_BBQ,
    bbq_fairness_map.EXPERIMENT,
)

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
