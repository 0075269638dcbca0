"""Pausing Python's cyclic garbage collector around work that allocates millions of objects and makes no cycles."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["collector_paused"]


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector for the block (it is enabled again after, if it was).

    Parsing a big document or indexing its catalog allocates millions of small objects; each allocation burst
    would trigger collections over all of them (0.1 s while parsing GitHub's document, 0.3 s while indexing it)
    that find nothing, since neither makes cycles.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
