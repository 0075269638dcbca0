"""Where calls go and who may make them, compared between two catalog snapshots, each difference classified.

Breaking: the server calls go to (the first absolute one, as a gateway without an upstream of its own picks it)
moves to another scheme or host, or is gone; a function gets a server of its own, or its own server moves to
another scheme or host; a function's security admits fewer callers (a requirement, scheme or scope added).
Non-breaking: another path on the same host, a first server where there was none, other servers of the list, a
function back on the API's servers, security that admits more callers, an argument's style or explode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit

from catalog.servers import first_absolute_server

__all__ = ["own_server_change", "security_change", "servers_changes", "style_change"]

#: (breaking, message)
Found = tuple[bool, str]


def servers_changes(old: Any, new: Any) -> list[Found]:
    """The changes of the catalog's `servers` list: where calls go first, then the list itself."""
    before = [str(url) for url in old] if isinstance(old, list) else []
    after = [str(url) for url in new] if isinstance(new, list) else []
    if before == after:
        return []
    found: list[Found] = []
    old_target, new_target = first_absolute_server(before), first_absolute_server(after)
    if old_target != new_target:
        if new_target is None:
            found.append((True, f"calls no longer go to {old_target}: the document names no absolute server"))
        elif old_target is None:
            found.append((False, f"calls now go to {new_target} (the document named no absolute server)"))
        else:
            moved = _moved(old_target, new_target)
            where = f" ({moved})" if moved else ""
            found.append((bool(moved), f"calls now go to {new_target}, not {old_target}{where}"))
    else:
        found.append((False, f"API servers changed from {_listed(before)} to {_listed(after)}"))
    return found


def own_server_change(old: Any, new: Any) -> Found | None:
    """The change of a function's own server (None: it is called at the API's servers)."""
    if old == new:
        return None
    if old is None:
        return True, f"now called at {new}, not at the API's servers"
    if new is None:
        return False, f"now called at the API's servers, not at {old}"
    moved = _moved(str(old), str(new))
    return bool(moved), f"now called at {new}, not at {old}" + (f" ({moved})" if moved else "")


def security_change(old: Any, new: Any) -> Found | None:
    """The change of a function's security requirements; breaking when a caller that met them may not now."""
    before, after = _requirements(old), _requirements(new)
    if before == after:
        return None
    # Looser when whoever met a requirement before meets one now; with none before, anyone could call it.
    looser = not after or (bool(before) and all(any(_within(need, had) for need in after) for had in before))
    verb = "loosened" if looser else "tightened"
    return not looser, f"security {verb} from {_shown(before)} to {_shown(after)}"


def style_change(key: str, old: Mapping[str, Any], new: Mapping[str, Any]) -> Found | None:
    """The change of how an argument is sent (its style and explode; absent: its location's defaults)."""
    if (old.get("style"), old.get("explode")) == (new.get("style"), new.get("explode")):
        return None
    return False, f"arg {key!r} now sent in {_style(new)}, not {_style(old)}"


def _moved(old: str, new: str) -> str:
    """`another host`, `plain http` or both when `new` is not on `old`'s scheme and host; "" when it is."""
    before, after = urlsplit(old), urlsplit(new)
    reasons = []
    if (before.hostname, before.port) != (after.hostname, after.port):
        reasons.append("another host")
    if before.scheme != after.scheme:
        reasons.append("plain http" if after.scheme == "http" else f"now {after.scheme}")
    return ", ".join(reasons)


def _listed(urls: Sequence[str]) -> str:
    return "[" + ", ".join(urls) + "]" if urls else "none"


def _requirements(value: Any) -> list[dict[str, frozenset[str]]]:
    """Security requirements as scheme → scopes, as the snapshot lists them."""
    listed = value if isinstance(value, list) else []
    return [
        {str(scheme): frozenset(map(str, scopes or ())) for scheme, scopes in requirement.items()}
        for requirement in listed
        if isinstance(requirement, Mapping)
    ]


def _within(need: Mapping[str, frozenset[str]], had: Mapping[str, frozenset[str]]) -> bool:
    """True when whoever met `had` meets `need`: each of its schemes is in `had`, with no scope more."""
    return all(scheme in had and scopes <= had[scheme] for scheme, scopes in need.items())


def _shown(requirements: Sequence[Mapping[str, frozenset[str]]]) -> str:
    """`oauth [admin, read] or api_key`; `none` for a function anyone may call."""
    if not requirements:
        return "none"
    return " or ".join(
        " and ".join(
            f"{scheme} [{', '.join(sorted(scopes))}]" if scopes else scheme for scheme, scopes in sorted(need.items())
        )
        or "no credential"
        for need in requirements
    )


def _style(arg: Mapping[str, Any]) -> str:
    if "style" not in arg:
        return f"{arg.get('in')}'s default style"
    return f"style {arg.get('style')} (explode {'true' if arg.get('explode') else 'false'})"
