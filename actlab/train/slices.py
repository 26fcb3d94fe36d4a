"""Training in slices: a callback that stops the loop once an arm has used a given amount of its budget.

Why: the studies interleave their arms (each trains a slice, then the next takes its turn, resuming from an
exact checkpoint), so load spikes hit every arm alike; each slice ends where the arm has used `amount` of the
budget's kind (steps, tokens, seconds, ...), however many steps that takes.
"""

from __future__ import annotations

from actlab.train.state import TrainState


class StopAt:
    """Ends a slice: stops the loop once the arm has used `amount` of the budget's `kind`."""

    def __init__(self, kind: str, amount: float) -> None:
        self.kind, self.amount = kind, amount

    def on_step_end(self, state: TrainState) -> None:
        if state.used.amount(self.kind) >= self.amount:
            state.stop = True
