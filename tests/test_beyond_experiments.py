"""Beyond the papers (experiments/beyond/): a parking lot and traffic both
ways, shown and not judged."""

from __future__ import annotations

import json

from ccarena.experiments import registry, report
from ccarena.experiments.beyond import parking_lot, reverse_traffic
from ccarena.experiments.reproduce import reproduce


def test_the_beyond_experiments_run_and_report_without_verdicts(tmp_path):
    names = ["beyond-parking-lot", "beyond-reverse-traffic", "beyond-short-flows"]
    reproduce(names, tmp_path, quick=True, jobs=1, index=False)
    for name in names:
        text = (tmp_path / name / "report.md").read_text()
        assert report.NO_CLAIMS in text
        results = json.loads((tmp_path / name / "results.json").read_text())
        assert results["comparisons"] == []
        assert all(fig["file"] and (tmp_path / name / fig["file"]).is_file() for fig in results["figures"])
    numbers = json.loads((tmp_path / "beyond-parking-lot" / "results.json").read_text())["numbers"]
    # Every algorithm's long flow gets less than its max-min share, and its
    # cross flows more (docs/experiments.md, "Beyond the papers").
    for v in ("bbr", "bbr3", "bbq", "bbr-cws", "cubic"):
        assert numbers[f"{v}.long.of_maxmin.1bdp"] < 1 < numbers[f"{v}.cross.of_maxmin.1bdp"]
    numbers = json.loads((tmp_path / "beyond-reverse-traffic" / "results.json").read_text())["numbers"]
    # A CUBIC flow the other way makes BBR retransmit where alone it loses nothing.
    assert numbers["bbr.alone.retransmits"] == 0 < numbers["bbr.reverse.retransmits"]
    # Its ACKs arrive compressed behind the reverse flow's data.
    assert numbers["bbr.alone.acks_compressed"] < 0.1 < numbers["bbr.reverse.acks_compressed"]
    # ... which raises BBR's own ACK-aggregation estimate; CUBIC has none (null).
    assert numbers["bbr.alone.extra_acked"] < numbers["bbr.reverse.extra_acked"]
    assert numbers["cubic.alone.extra_acked"] is None
    numbers = json.loads((tmp_path / "beyond-short-flows" / "results.json").read_text())["numbers"]
    # Next to bulk BBR short flows take longer than next to bulk CUBIC, which leaves them as fast as alone.
    assert numbers["bbr.small.slowdown_p50"] > 1.5 > numbers["cubic.small.slowdown_p50"]


def test_the_beyond_package_is_registered_without_a_paper_text():
    assert registry.paper_of(parking_lot.EXPERIMENT.name).file == ""
    assert registry.paper_of(reverse_traffic.EXPERIMENT.name).key == "beyond"
