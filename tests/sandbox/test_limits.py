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


MIB = 1024 * 1024
KIB = 1024


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"timeout": 3600.5}, "timeout is in seconds; 3600.5 is over an hour, use e.g. 5.0"),
        ({"memory_bytes": 4 * MIB - 1}, f"memory_bytes must be at least 4 MiB, got {4 * MIB - 1}"),
        ({"stack_bytes": 64 * KIB - 1}, f"stack_bytes must be between 64 KiB and 4 MiB, got {64 * KIB - 1}"),
        ({"stack_bytes": 4 * MIB + 1}, f"stack_bytes must be between 64 KiB and 4 MiB, got {4 * MIB + 1}"),
        (
            {"memory_bytes": 64 * MIB, "worker_address_space": 192 * MIB - 1},
            f"must leave 128 MiB for the interpreter above memory_bytes ({64 * MIB}); got {192 * MIB - 1}, "
            f"use at least {192 * MIB}",
        ),
        ({"worker_gid": 2**32 - 1}, "worker_gid must be a user or group id below 4294967295, e.g. 65534"),
        ({"max_calls": 0}, "ScriptLimits.max_calls must be positive, got 0"),
        ({"max_calls": -1}, "ScriptLimits.max_calls must be positive, got -1"),
        ({"max_parallel_calls": 0}, "max_parallel_calls must be positive"),
        ({"max_log_bytes": 0}, "max_log_bytes must be positive"),
        ({"max_log_lines": 0}, "max_log_lines must be positive"),
        ({"max_result_bytes": 0}, "max_result_bytes must be positive"),
        ({"slot_wait": -0.001}, "ScriptLimits.slot_wait must be 0 or more seconds, got -0.001"),
        ({"slot_wait": "1"}, "ScriptLimits.slot_wait must be a number of seconds, got '1'"),
        ({"timeout": True}, "ScriptLimits.timeout must be a number of seconds, got True"),
        ({"memory_bytes": 64.0 * MIB}, "ScriptLimits.memory_bytes must be an integer, got 67108864.0"),
        ({"worker_uid": -1}, "ScriptLimits.worker_uid must be positive, got -1"),
        (
            {"worker_uid": 0},
            "ScriptLimits.worker_uid is the id a worker switches to when the gateway runs as root; it cannot be 0 "
            "(root): use an unprivileged one, e.g. 65534 (nobody)",
        ),
    ],
)
def test_a_limit_just_past_its_boundary_is_refused_with_the_value_and_a_fix(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(LimitsError) as raised:
        ScriptLimits(**changes)  # type: ignore[arg-type]
    assert message in str(raised.value)


@pytest.mark.parametrize(
    "changes",
    [
        {"timeout": 3600},
        {"timeout": 0.001},
        {"slot_wait": 0},
        {"slot_wait": 0.5},
        {"max_calls": 1},
        {"memory_bytes": 4 * MIB},
        {"stack_bytes": 64 * KIB},
        {"stack_bytes": 4 * MIB},
        {"memory_bytes": 64 * MIB, "worker_address_space": 192 * MIB},
        {"worker_uid": 2**32 - 2, "worker_gid": 1},
    ],
)
def test_a_limit_at_its_boundary_is_accepted(changes: dict[str, object]) -> None:
    limits = ScriptLimits(**changes)  # type: ignore[arg-type]
    assert all(getattr(limits, name) == value for name, value in changes.items())


def test_the_default_sizes_are_the_documented_ones() -> None:
    limits = ScriptLimits()
    assert (limits.max_source_bytes, limits.max_arg_bytes, limits.max_result_bytes) == (64 * KIB,) * 3
    assert (limits.max_response_bytes, limits.max_log_bytes, limits.max_log_lines) == (MIB, 16 * KIB, 200)
    assert (limits.memory_bytes, limits.stack_bytes, limits.worker_address_space) == (64 * MIB, MIB, 512 * MIB)
    assert (limits.slot_wait, limits.max_parallel_calls, limits.max_runs_per_worker) == (1.0, 8, 100)
    assert (limits.worker_uid, limits.worker_gid) == (65534, 65534)
