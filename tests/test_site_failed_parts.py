"""A claim its rule reads in several parts is told by the parts that failed: its own estimate may be a part that
held (Flex-Act App. B: Sigmoid selected at every alpha, 1.0 [0.929, 1] against 0.8, while the regularised fits are
worse than alpha = 0), and quoting that alone under "failed" told readers the opposite of the verdict."""

from __future__ import annotations

from actlab.claim import Claim, Part
from actlab.site import claim_text

BASE = dict(study="s", statement="x", source="", budget="", rule="r", rule_name="r", kind="experiment")
SELECTED = Part("Sigmoid selected", 1.0, (0.929, 1.0), 0.8, "above", "selection accuracy")
PLATEAU = Part("plateau", 0.0075, (0.0035, 0.0116), 0.0, units="log10 MSE", margin=0.301)
GAIN = Part("gain over alpha = 0", -0.7, (-0.784, -0.616), 0.0, "above", "log10 MSE")


def _claim(verdict: str, parts: tuple[Part, ...], **fields) -> Claim:
    values = {"title": "App. B", "units": "P(Sigmoid)", "n": 50, "estimate": 1.0, "ci": (0.929, 1.0),
              "threshold": 0.8, "supports": "above", "paper_value": 1.0, **BASE, **fields}  # fmt: skip
    return Claim(claim_id="appendix-b", verdict=verdict, parts=parts, **values)


def test_the_line_quotes_the_failed_part_not_the_estimate_that_held():
    claim = _claim("not supported", (SELECTED, PLATEAU, GAIN))
    assert "0.929" not in claim_text.failed_line(claim)  # the part that held
    assert claim_text.failed_line(claim) == "what failed: gain over alpha = 0: -0.7 log10 MSE [-0.784, -0.616], " \
        "needed above 0"  # fmt: skip


def test_only_a_not_supported_claim_with_several_parts_is_told_by_its_parts():
    assert claim_text.failed_line(_claim("supported", (SELECTED, PLATEAU))) is None
    assert claim_text.failed_line(_claim("inconclusive", (SELECTED, GAIN), mde=0.2)) is None  # not decided against
    single = _claim("not supported", (), estimate=0.3, ci=(0.2, 0.45))
    assert claim_text.failed_line(single) is None
