"""ScriptLimits: the defaults the issue names, and a clear error for every unusable value."""

from __future__ import annotations

import dataclasses

import pytest

from sandbox import LimitsError, ScriptLimits


def test_the_defaults_are_five_seconds_two_hundred_calls_four_scripts() -> None:
    limits = ScriptLimits()
    assert (limits.timeout, limits.max_calls, limits.max_concurrent) == (5.0, 200, 4)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"timeout": 0}, "timeout must be positive"),
        ({"timeout": "5"}, "timeout must be a number of seconds"),
        ({"timeout": 7200}, "over an hour"),
        ({"max_calls": 1.5}, "max_calls must be an integer"),
        ({"max_calls": True}, "max_calls must be an integer"),
        ({"max_concurrent": 0}, "max_concurrent must be positive"),
        ({"slot_wait": -1}, "slot_wait must be 0 or more"),
        ({"memory_bytes": 1024}, "at least 4 MiB"),
        ({"stack_bytes": 1024}, "between 64 KiB and 4 MiB"),
        ({"worker_address_space": 64 * 1024 * 1024}, "must leave 128 MiB"),
        ({"worker_uid": 0}, "cannot be 0 \\(root\\)"),
        ({"worker_gid": 0}, "cannot be 0 \\(root\\)"),
        ({"worker_uid": 2**32 - 1}, "below 4294967295"),
    ],
)
def test_an_unusable_limit_is_refused_with_the_field_and_a_fix(changes: dict[str, object], message: str) -> None:
    with pytest.raises(LimitsError, match=message):
        ScriptLimits(**changes)  # type: ignore[arg-type]


def test_limits_vary_with_replace() -> None:
    assert dataclasses.replace(ScriptLimits(), slot_wait=0).slot_wait == 0
