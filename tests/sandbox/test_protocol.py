"""The frames between host and worker: here, how a `view` frame names the functions a run sees."""

from __future__ import annotations

import json

import pytest

from sandbox._protocol import ProtocolError, bitmap, selection

CATALOG = tuple(f"module_{index // 20}.function_number_{index}" for index in range(1000))


def test_a_view_selects_its_functions_in_the_catalogs_order_whatever_order_they_were_given_in() -> None:
    chosen = list(reversed(CATALOG[::7] + CATALOG[3::11]))
    assert selection(CATALOG, bitmap(CATALOG, set(chosen))) == tuple(name for name in CATALOG if name in chosen)


def test_a_view_of_a_thousand_functions_takes_one_bit_each_not_their_names() -> None:
    assert len(json.dumps(CATALOG)) > 30_000  # half of what a frame header may hold
    assert len(bitmap(CATALOG, CATALOG[::2])) == 125


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [((), ()), (CATALOG[:1], CATALOG[:1]), (CATALOG[-1:], CATALOG[-1:]), (CATALOG, CATALOG)],
    ids=["none", "the first", "the last", "all, as bits"],
)
def test_a_view_selects_exactly_the_chosen_functions_at_the_edges(
    chosen: tuple[str, ...], expected: tuple[str, ...]
) -> None:
    assert selection(CATALOG, bitmap(CATALOG, chosen)) == expected


def test_an_empty_view_is_every_function_and_one_of_another_length_is_refused() -> None:
    assert selection(CATALOG, b"") is None
    with pytest.raises(ProtocolError, match="a view of 124 bytes for 1000 functions"):
        selection(CATALOG, bytes(124))
