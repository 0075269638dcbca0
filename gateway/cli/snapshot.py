"""`mcp-gateway snapshot check` (what agents see, against its committed file) and `mcp-gateway reference` (the
reference page for people)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Final, TextIO

from gateway.cli.gateways import build_gateway, gateway_flags

__all__ = ["configure_check", "configure_reference"]

EXIT_OK: Final = 0
EXIT_REFUSED: Final = 1


def configure_check(surface: argparse.ArgumentParser) -> None:
    """The `snapshot` command and its `check` action, with every option that changes what agents see."""
    surface.set_defaults(usage_of=surface)
    actions = surface.add_subparsers(metavar="ACTION")
    check = actions.add_parser(
        "check",
        help="compare the gateway's surface with SNAPSHOT; exit 1 on drift, with each change classified",
        description="Compare what agents see (instructions, tools, modules, functions, terms) with the committed "
        "SNAPSHOT file and print each change as breaking or non-breaking. Exit 1 when the --fail-on gate fails.",
    )
    check.add_argument("snapshot", type=Path, metavar="SNAPSHOT", help="the snapshot file, e.g. snapshots/api.json")
    gateway_flags(check, {"all", "http"})
    check.add_argument("--update", action="store_true", help="rewrite SNAPSHOT to match (after review)")
    check.add_argument(
        "--fail-on",
        choices=("breaking", "any"),
        default="any",
        help="fail on breaking changes only, or on any change (default: any)",
    )
    check.add_argument(
        "--format",
        choices=("text", "markdown", "github"),
        default="text",
        help="text for a terminal, markdown for a PR comment, github for workflow annotations (default: text)",
    )
    check.set_defaults(run=_snapshot_check)


def configure_reference(reference: argparse.ArgumentParser) -> None:
    """The `reference` command's flags."""
    gateway_flags(reference, {"all", "http"})
    reference.add_argument("-o", "--output", type=Path, default=None, help="HTML file to write (default: stdout)")
    reference.set_defaults(run=_reference)


def _snapshot_check(options: argparse.Namespace, out: TextIO) -> int:
    from gateway.snapshot.check import check_snapshot, render_check

    gateway, demo = build_gateway(options)
    if demo:
        print("mcp-gateway: no --spec or --app given: checking the bundled demo API", file=sys.stderr)
    check = check_snapshot(gateway, options.snapshot, update=options.update)
    accept = _accept_command(options.argv)
    print(render_check(check, options.format, fail_on=options.fail_on, accept=accept), file=out)
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if options.format == "github" and summary and (check.diff or check.missing):
        # GitHub Actions shows this file on the run's summary page: the same report, as Markdown.
        with open(summary, "a", encoding="utf-8") as file:
            file.write(render_check(check, "markdown", fail_on=options.fail_on, accept=accept) + "\n")
    return EXIT_REFUSED if check.failed(options.fail_on) else EXIT_OK


def _accept_command(argv: Sequence[str]) -> str:
    """The command that accepts a snapshot check's changes: the same check, with the options that chose the
    API and its surface, and --update instead of the report options."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
        elif word in ("--format", "--fail-on"):
            skip = True
        elif word != "--update" and not word.startswith(("--format=", "--fail-on=")):
            kept.append(word)
    return shlex.join(["mcp-gateway", *kept, "--update"])


def _reference(options: argparse.Namespace, out: TextIO) -> int:
    from gateway.reference import reference_page

    gateway, _ = build_gateway(options)
    page = reference_page(gateway)
    if options.output is None:
        out.write(page)
    else:
        options.output.parent.mkdir(parents=True, exist_ok=True)
        options.output.write_text(page, encoding="utf-8")
        print(f"wrote {options.output} ({len(page.encode()) // 1024} KiB)", file=sys.stderr)
    return EXIT_OK
