"""Budgets: counts of what callers have running, per caller (its person) and overall, refused past their limit.

A `Budget` hands out `Lease`s; a lease is released exactly once, when what it counts ends (a task may outlive the
request that started it). Everything runs on one event loop, so the counts need no lock.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from gateway.errors import LimitError
from gateway.limits import option_name

__all__ = ["Budget", "Lease"]


@dataclass(eq=False)
class Lease:
    """One counted thing; `release()` gives its place back (again is a no-op)."""

    budget: Budget
    person: str
    released: bool = field(default=False)

    def release(self) -> None:
        """Give the place back to the budget."""
        if not self.released:
            self.released = True
            self.budget._give_back(self.person)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


class Budget:
    """At most `per_caller` of one kind of thing per person and `overall` in all (None: no overall bound).

    `what` names the thing in refusals, singular and plural (`("task running", "tasks running")`),
    `per_caller_option` and `overall_option` the `Limits` fields, and `advice` what the caller can do about it.
    """

    def __init__(
        self,
        what: tuple[str, str],
        *,
        per_caller: int,
        per_caller_option: str,
        advice: str,
        overall: int | None = None,
        overall_option: str = "",  # pragma: no mutate
        overall_advice: str = "retry shortly",
    ) -> None:
        self.what = what
        self.per_caller = per_caller
        self.per_caller_option = per_caller_option
        self.overall = overall
        self.overall_option = overall_option
        self.advice = advice
        self.overall_advice = overall_advice
        self._held: Counter[str] = Counter()
        self._total = 0

    def held(self, person: str) -> int:
        """How many `person` holds now."""
        return self._held[person]

    @property
    def total(self) -> int:
        """How many are held in all."""
        return self._total

    def take(self, person: str) -> Lease:
        """A lease for one more of `person`'s; LimitError naming the limit when either bound is reached."""
        if self._held[person] >= self.per_caller:
            raise LimitError(
                f"you already have {self._counted(self._held[person])}, the most one caller may have "
                f"({option_name(self.per_caller_option)} is {self.per_caller}); {self.advice}",
                limit=self.per_caller_option,
                value=self.per_caller,
            )
        if self.overall is not None and self._total >= self.overall:
            raise LimitError(
                f"the server already has {self._counted(self._total)}, the most it allows in all "
                f"({option_name(self.overall_option)} is {self.overall}); {self.overall_advice}",
                limit=self.overall_option,
                value=self.overall,
            )
        self._held[person] += 1
        self._total += 1
        return Lease(self, person)

    def _counted(self, count: int) -> str:
        return f"{count} {self.what[0] if count == 1 else self.what[1]}"

    def _give_back(self, person: str) -> None:
        self._held[person] -= 1
        if self._held[person] <= 0:
            del self._held[person]
        self._total -= 1
