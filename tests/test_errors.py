"""The one finiteness check: which numbers are refused, and a message that names each of them and the fix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from actlab.errors import require_finite


def test_finite_numbers_of_any_numeric_type_pass():
    require_finite("here", "hint", a=1, b=-2.5, c=np.float64(3.0), d=np.int64(4), e=np.float32(0.5), f=True)
    require_finite("here", "hint")  # nothing to check


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan"), None, "0.5"])
def test_anything_not_a_finite_number_is_refused(bad):
    with pytest.raises(ValueError, match=r"^here: x is .*, not a finite number; how to fix$"):
        require_finite("here", "how to fix", ok=1.0, x=bad)


def test_the_message_names_every_bad_value_as_a_plain_float():
    with pytest.raises(ValueError) as error:
        require_finite("rule", "fix it", estimate=np.float64("nan"), ci_low=0.1, ci_high=math.inf)
    assert str(error.value) == "rule: estimate is nan, ci_high is inf, not a finite number; fix it"
