"""Claims as data (experiments/<paper>/claims.toml) and the one verdict
engine (experiments/verdict.py): the rule is applied as stated and
printed beside the row, every quote is where its line says, and no
migrated experiment module holds a threshold or decides a verdict."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from ccarena.experiments import claims, registry, verdict
from ccarena.experiments.claims import ClaimsError
from ccarena.experiments.framework import Report, Result
from ccarena.experiments.verdict import Measured

EXPERIMENTS_DIR = Path(claims.__file__).parent

#: Paper packages whose claims are data. The others still build their rows
#: with experiments/compare.py (to be moved, package by package).
MIGRATED = ("hock", "bbr", "cws", "bbq", "blog")


def _claim(paper: str, **extra: object) -> claims.Claim:
    body = "\n".join(f"{k} = {v}" for k, v in extra.items())
    text = f"""
[[claim]]
id = "x"
experiment = "e"
quote = "q"
line = 1
quantity = "share"
metric = "m"
unit = "%"
scale = 100
format = ".1f"
{body}
[claim.paper]
{paper}
"""
    return claims.parse(text, "test")[0]


def test_a_number_agrees_within_the_larger_of_the_papers_spread_and_our_half_range():
    c = _claim('value = 0.9\nexact = "t"\nsource = "L1"')
    row = verdict.judge(c, Measured([0.86, 0.87, 0.88, 0.89, 0.90]))  # mean 0.88, half-range 0.02
    assert row.agrees is True
    assert "distance 2.0% <= 2.0% = max(paper spread 0.0%, our half-range 2.0%): agrees" in row.rule
    row = verdict.judge(c, Measured([0.87, 0.875, 0.88, 0.88, 0.885]))  # mean 0.878, half-range 0.0075
    assert row.agrees is False and row.rule.endswith("differs") and row.reason == row.rule
    c = _claim('value = 0.9\nspread = 0.05\nsource = "L1: +-5%"')
    assert verdict.judge(c, Measured([0.87, 0.875, 0.88, 0.88, 0.885])).agrees is True


def test_a_number_the_paper_writes_is_taken_to_its_last_digit():
    # "roughly 2 percent": 2.0% +-0.5%, as printed; "2.0" would be +-0.05%.
    c = _claim('value = 0.02\nwritten = "2"\nsource = "L1"')
    assert c.spread == pytest.approx(0.005) and c.written == "2"
    row = verdict.judge(c, Measured([0.0226, 0.0227, 0.0227, 0.0227, 0.0228]))
    assert row.agrees is True
    assert 'max(paper spread 0.5%, "2" to its last digit, our half-range 0.0%): agrees' in row.rule
    assert _claim('value = 0.02\nwritten = "2.0"\nsource = "L1"').spread == pytest.approx(0.0005)
    assert verdict.judge(_claim('value = 0.02\nwritten = "2.0"\nsource = "L1"'),
                         Measured([0.0226, 0.0227, 0.0227, 0.0227, 0.0228])).agrees is False
    assert [claims.half_unit(w) for w in ("6.3", "50", "1.8412")] == pytest.approx([0.05, 0.5, 0.00005])
    # A constant of the design (cwnd_gain 2's cap) has no digits to round.
    exact = _claim('value = 2\nexact = "cwnd_gain 2"\nsource = "L1"')
    assert exact.spread == 0 and verdict.judge(exact, Measured([2.09] * 5)).agrees is False


def test_a_range_and_a_bound_use_the_same_rule():
    between = _claim('between = [1.0, 1.5]\nsource = "L1"')
    assert verdict.judge(between, Measured([1.2] * 5)).agrees is True
    at_least = _claim('at_least = 0.9\nsource = "L1"')
    assert verdict.judge(at_least, Measured([0.893] * 5)).agrees is False  # 89.3% against "> 90%", no spread
    assert verdict.judge(at_least, Measured([0.88, 0.89, 0.90, 0.91, 0.92])).agrees is True
    assert verdict.judge(at_least, Measured([15.0] * 5)).agrees is True
    ten_times = _claim('value = 10\nexact = "t"\nsource = "L1"')
    assert verdict.judge(ten_times, Measured([15.0] * 5)).agrees is False  # "10 times" is not ">= 10"


def test_the_range_claim_above_differs_by_its_distance():
    between = _claim('between = [1.0, 1.5]\nsource = "L1"')
    row = verdict.judge(between, Measured([1.55, 1.6, 1.6, 1.6, 1.65]))
    assert row.agrees is False and "distance 10.0% > 5.0%" in row.rule


def test_too_few_seeds_are_not_judged():
    row = verdict.judge(_claim('value = 0.5\nexact = "t"\nsource = "L1"'), Measured([0.5]))
    assert row.agrees is None and "not judged: 1 seed(s)" in row.rule


def test_a_set_is_judged_whole_or_by_the_papers_count():
    c = _claim('at_least = 0.9\nsource = "L1"', members='"all"')
    good, bad = [0.95] * 5, [0.5] * 5
    assert verdict.judge(c, Measured(members={"a": good, "b": good})).agrees is True
    row = verdict.judge(c, Measured(members={"a": good, "b": bad}))
    assert row.agrees is False and "1 of 2 do" in row.rule
    count = _claim('at_least = 0.9\nsource = "L1"', members="2", members_source='"L1: in two of three"')
    assert verdict.judge(count, Measured(members={"a": good, "b": good, "c": bad})).agrees is True


def test_an_order_is_the_rule_on_each_steps_per_seed_differences():
    c = _claim('order = "increasing"\nsource = "L1"')
    rising = {"10 ms": [0.1] * 5, "20 ms": [0.2] * 5, "40 ms": [0.7] * 5}
    assert verdict.judge(c, Measured(members=rising)).agrees is True
    noisy = {"10 ms": [0.30, 0.31, 0.32, 0.33, 0.34], "20 ms": [0.34, 0.33, 0.32, 0.31, 0.30]}
    # The differences (+0.04 ... -0.04) have mean 0: within their half-range of ">= 0".
    assert verdict.judge(c, Measured(members=noisy)).agrees is True
    falling = {"10 ms": [0.5] * 5, "20 ms": [0.4] * 5}
    assert verdict.judge(c, Measured(members=falling)).agrees is False


def test_constant_is_the_rule_on_each_steps_differences_against_zero():
    c = _claim('order = "constant"\nsource = "L1"')
    flat = {"10 kB": [1.0, 1.1, 0.9, 1.0, 1.0], "20 kB": [1.05, 1.0, 1.0, 0.95, 1.0]}
    # The differences (+0.05 ... -0.1) have mean 0 and half-range 0.1: within it of "= 0".
    row = verdict.judge(c, Measured(members=flat))
    assert row.agrees is True and "paper = 0" in row.rule
    rising = {"10 kB": [1.0] * 5, "20 kB": [2.0] * 5, "50 kB": [2.0] * 5}
    row = verdict.judge(c, Measured(members=rising))
    assert row.agrees is False and "1 of 2 do" in row.rule and row.ours.startswith("100.0% -> 200.0% -> 200.0%")


def test_a_point_the_run_did_not_measure_is_neither_judged_nor_an_error():
    # A --quick run leaves some of the paper's points out (bbq-fig3-14 runs no 400 Mbit/s).
    row = verdict.judge(_claim('value = 6.14\nexact = "t"\nsource = "L1"'), Measured([]))
    assert row.agrees is None and row.rule == "not measured in this run" and row.ours == "-"
    row = verdict.judge(_claim('order = "decreasing"\nsource = "L1"'), Measured(members={}))
    assert row.agrees is None and row.rule == "not measured in this run"
    row = verdict.judge(_claim('shown = "no number"'), Measured([]))
    assert row.agrees is None and row.rule.startswith("not measured in this run; shown, not judged")


def test_a_word_without_a_number_is_shown_not_judged():
    c = _claim('shown = "no number for close"')
    row = verdict.judge(c, Measured([0.4, 0.5, 0.6, 0.5, 0.5]))
    assert row.agrees is None and row.rule == "shown, not judged: no number for close" and row.ours == "50.0%"


def test_an_alternative_metric_that_flips_the_verdict_makes_the_row_depend_on_it():
    c = _claim('at_least = 0.9\nsource = "L1"')
    row = verdict.judge(c, Measured([0.95] * 5, alternatives={"Jain per 0.1 s": Measured([0.5] * 5)}))
    assert row.agrees is None and row.metric_dependent and row.verdict == "depends on the metric"
    same = verdict.judge(c, Measured([0.95] * 5, alternatives={"whole run": Measured([0.97] * 5)}))
    assert same.agrees is True and not same.metric_dependent


@pytest.mark.parametrize("paper, problem", [
    ("", "exactly one of"),
    ('value = 1\nbetween = [0, 2]\nsource = "L1"', "exactly one of"),
    ("value = 1", "cites its number's source"),
    ('order = "up"\nsource = "L1"', "order must be one of"),
    ('between = [2, 1]\nsource = "L1"', "interval is empty"),
    # How precise a value is: said once, and checked.
    ('value = 0.02\nsource = "L1"', "exactly one of written"),
    ('value = 0.02\nwritten = "2"\nexact = "x"\nsource = "L1"', "exactly one of written"),
    ('value = 0.02\nwritten = "3"\nsource = "L1"', "is not the value shown"),
    ('value = 0.02\nwritten = 2\nsource = "L1"', "a string of digits"),
    ('value = 0.02\nwritten = "2 %"\nsource = "L1"', "a string of digits"),
    ('value = 0.02\nexact = ""\nsource = "L1"', "says why"),
    ('at_least = 0.9\nwritten = "90"\nsource = "L1"', "taken as stated"),
    ('between = [0.5, 0.6]\nspread = 0.05\nsource = "L1"', "taken as stated"),
])
def test_a_malformed_claim_is_refused_with_its_id(paper, problem):
    with pytest.raises(ClaimsError, match=f"claim 'x'.*{problem}"):
        _claim(paper)


def test_measurements_and_claims_must_match_one_to_one():
    c = _claim('value = 1\nexact = "t"\nsource = "L1"')
    with pytest.raises(ValueError, match="claims not measured"):
        verdict.rows([c], {}, "e")
    with pytest.raises(ValueError, match="not in its claims table"):
        verdict.rows([c], {"x": Measured([1.0]), "y": Measured([1.0])}, "e")


@pytest.mark.parametrize("paper", [p for p in registry.PAPERS if p.file], ids=lambda p: p.key)
def test_every_quote_is_the_papers_own_words_at_its_line(paper):
    text_file = claims.PAPERS_DIR / paper.file
    if not text_file.exists():
        pytest.skip(f"the papers' texts are not on this machine ({claims.PAPERS_DIR})")
    text = text_file.read_text()
    wrong = [(c.id, c.line, c.quote) for c in claims.of_paper(paper.key) if not claims.quote_found(c, text)]
    assert not wrong


@pytest.mark.parametrize("paper", [p for p in registry.PAPERS if p.file], ids=lambda p: p.key)
def test_every_written_number_is_as_its_quote_or_source_writes_it(paper):
    """The digits that set a number's precision are the paper's own: the
    quote or the cited source writes them ("16,945" as 16945), or, for a
    ratio the paper states as an improvement, (x - 1) in percent ("55.2%"
    for 1.552x)."""
    def found(digits: str, text: str) -> bool:
        text = re.sub(r"(?<=\d),(?=\d{3})", "", text)
        return re.search(r"(?<![\d.])" + re.escape(digits) + r"(?!\d)", text) is not None

    missing = []
    for c in claims.of_paper(paper.key):
        if not c.written:
            continue
        text = f"{c.quote} {c.source}"
        decimals = len(c.written.partition(".")[2])
        as_improvement = f"{(float(c.written) - 1) * 100:.{max(decimals - 2, 0)}f}%"
        if not (found(c.written, text) or found(as_improvement, text)):
            missing.append((c.id, c.written))
    assert not missing


def test_a_package_without_a_paper_has_no_claims_to_judge():
    # Beyond the papers: nothing to quote, so nothing judged (shown only).
    for paper in (p for p in registry.PAPERS if not p.file):
        assert not claims.of_paper(paper.key), paper.key


@pytest.mark.parametrize("key", MIGRATED)
def test_every_claim_names_an_experiment_of_its_paper(key):
    names = {e.name for e in registry.EXPERIMENTS if registry.paper_of(e.name).key == key}
    table = claims.of_paper(key)
    assert table and {c.experiment for c in table} <= names


#: What an experiment module of a migrated paper may not do: build a
#: verdict (compare.numeric/share/relative/claim/bound, Comparison(...,
#: agrees=...)) or define a module-level threshold next to a claim.
FORBIDDEN_CALLS = {"numeric", "share", "relative", "claim", "bound", "within_spread", "fairer"}


@pytest.mark.parametrize("key", MIGRATED)
def test_no_experiment_module_of_a_migrated_paper_decides_a_verdict(key):
    offenders = []
    for path in sorted((EXPERIMENTS_DIR / key).glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
                owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
                if (owner == "compare" and name in FORBIDDEN_CALLS) or name in ("within_spread", "fairer"):
                    offenders.append(f"{path.name}:{node.lineno} {owner}.{name}")
                if name == "Comparison" and any(k.arg == "agrees" for k in node.keywords):
                    offenders.append(f"{path.name}:{node.lineno} Comparison(agrees=...)")
            if isinstance(node, ast.ImportFrom) and node.module == "compare":
                bad = {a.name for a in node.names} & FORBIDDEN_CALLS
                if bad:
                    offenders.append(f"{path.name}:{node.lineno} imports {sorted(bad)}")
    assert not offenders


def test_no_report_or_experiment_cites_an_issue():
    pattern = re.compile(r"\bissue[s]? ?#?\d+", re.IGNORECASE)
    offenders = [f"{p.relative_to(EXPERIMENTS_DIR)}:{i}" for p in sorted(EXPERIMENTS_DIR.rglob("*"))
                 if p.suffix in (".py", ".toml")
                 for i, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not offenders


def _hock_rtt_result() -> Result:
    """hock-rtt's record on hand-made values: its order agrees, its
    in-flight cap (2.1 and 1.9 against exactly 2, no spread) differs."""
    rep = Report(measured={"rtt.order": Measured(members={"20 ms": [0.01] * 5, "40 ms": [0.03] * 5,
                                                          "80 ms": [0.96] * 5}),
                           "rtt.inflight-cap": Measured(members={"20 ms": [2.0] * 5, "40 ms": [2.1] * 5,
                                                                 "80 ms": [1.9] * 5})})
    return Result.of(registry.get("hock-rtt"), "hock", rep, quick=False)


def test_the_framework_puts_the_judged_claims_first_with_their_rule():
    result = _hock_rtt_result()
    assert [r.claim for r in result.rows] == ["rtt.order", "rtt.inflight-cap"]
    assert all(r.rule for r in result.rows)
    assert result.rows[0].agrees is True and result.rows[1].agrees is False  # 2.1 and 1.9 against exactly 2


def test_an_order_over_several_chains_judges_every_step_of_each_and_none_across():
    c = _claim('order = "decreasing"\nsource = "L1"')
    falling = {"1.5 BDP": [0.9] * 5, "3 BDP": [0.8] * 5}
    rising = {"1.5 BDP": [0.6] * 5, "3 BDP": [0.7] * 5}
    row = verdict.judge(c, Measured(chains={"10 ms": falling, "40 ms": dict(falling)}))
    # 40 ms starts above where 10 ms ends: no step across the chains.
    assert row.agrees is True and "10 ms: 1.5 BDP -> 3 BDP" in row.rule and "3 BDP -> 1.5" not in row.rule
    row = verdict.judge(c, Measured(chains={"10 ms": falling, "40 ms": rising}))
    assert row.agrees is False and "1 of 2 do" in row.rule


def test_a_seed_that_did_not_measure_a_number_leaves_it_unjudged():
    c = _claim('value = 10\nexact = "t"\nsource = "L1"')
    row = verdict.judge(c, Measured([10.0, 10.0, float("nan"), 10.0, 10.0]))
    assert row.agrees is None and "1 of 5 seeds did not measure it" in row.rule and row.ours == "1000.0%"
    assert verdict.judge(c, Measured([float("nan")] * 5)).ours == "not measured"


def test_a_reports_counts_add_up():
    from ccarena.experiments import report

    text = report.markdown(_hock_rtt_result())
    agreed, judged = map(int, re.search(r"(\d+) of (\d+) judged rows agree", text).groups())
    verdicts = re.findall(r"\| (agrees|\*\*differs\*\*|-|\*depends on the metric\*) \|", text)
    assert (agreed, judged) == (verdicts.count("agrees"), verdicts.count("agrees") + verdicts.count("**differs**"))
    assert (agreed, judged) == (1, 2)
