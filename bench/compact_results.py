"""Tokens saved by the compact result encoding (`--compact-results`) on list results, against compact JSON.

Two sources: the demo shop's list functions, called in-process; and responses shaped like the corpus APIs' list
results, generated from each function's 2xx result schema (10 items per top-level array, 2 per nested one,
every documented field filled). A result is sent compact only when that saves at least 20% (`MIN_SAVING`);
the table shows what the agent would get. Tokens: tiktoken's o200k_base when its data can be loaded, else
characters / 4 (the header line says which).

    .venv/bin/python bench/compact_results.py
    .venv/bin/python bench/compact_results.py --docs stripe github --per-doc 50 --json /tmp/compact.json
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from catalog.builder import build_catalog
from catalog.loading import load_document
from catalog.model import Function
from gateway.tools._compact import MIN_SAVING, compact_text

DEFAULT_DOCS = (
    "stripe-spec3.yaml",
    "github-api.github.com.json",
    "atlassian-jira.json",
    "spotify-web-api.yaml",
    "asana-asana.yaml",
    "box-box.json",
    "pagerduty-rest.json",
    "discord-api.json",
    "twilio-api-v2010.yaml",
    "airflow-api-v2.json",
    "lnbits-api.json",
)


def tokenizer() -> tuple[str, Callable[[str], int]]:
    try:
        import tiktoken

        encoding = tiktoken.get_encoding("o200k_base")
        return "tiktoken o200k_base", lambda text: len(encoding.encode(text))
    except Exception:
        return "characters / 4 (tiktoken's data could not be loaded)", lambda text: (len(text) + 3) // 4


class Example:
    """Makes an example value of a JSON Schema 2020-12 (with `$defs`), every field filled, values varying by item."""

    def __init__(self, schema: Mapping[str, Any]) -> None:
        self.defs: Mapping[str, Any] = schema.get("$defs", {})

    def value(self, schema: Any, name: str, index: int, depth: int, top: bool = False) -> Any:
        if not isinstance(schema, Mapping) or depth > 6:
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            from urllib.parse import unquote

            return self.value(
                self.defs.get(unquote(ref[8:]).replace("~1", "/").replace("~0", "~")), name, index, depth + 1, top
            )
        for key in ("anyOf", "oneOf"):
            options = [
                part for part in schema.get(key) or [] if isinstance(part, Mapping) and part.get("type") != "null"
            ]
            if options:
                return self.value(options[0], name, index, depth + 1, top)
        if schema.get("allOf"):
            merged: dict[str, Any] = {"type": "object", "properties": {}}
            for part in schema["allOf"]:
                part_value = self.value(part, name, index, depth + 1, top)
                if isinstance(part_value, dict):
                    merged["properties"].update({k: {"const": v} for k, v in part_value.items()})
            return {k: v["const"] for k, v in merged["properties"].items()}
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return schema["enum"][index % len(schema["enum"])]
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = next((k for k in kind if k != "null"), "null")
        if kind is None:
            kind = "object" if "properties" in schema else "array" if "items" in schema else "string"
        if kind == "object":
            properties = schema.get("properties") or {}
            return {key: self.value(part, key, index, depth + 1) for key, part in properties.items()}
        if kind == "array":
            count = 10 if top else 2
            return [self.value(schema.get("items"), name, index * count + i, depth + 1) for i in range(count)]
        if kind == "integer":
            return 1000 + index
        if kind == "number":
            return 1.5 + index
        if kind == "boolean":
            return index % 2 == 0
        if kind == "null":
            return None
        fmt = schema.get("format")
        if fmt == "date-time":
            return f"2024-05-{index % 28 + 1:02d}T12:00:00Z"
        if fmt == "date":
            return f"2024-05-{index % 28 + 1:02d}"
        if fmt in ("uri", "url"):
            return f"https://api.example.com/{name}/{index}"
        if fmt == "email":
            return f"user{index}@example.com"
        return f"{name} {index}"


def list_results(function: Function) -> Any:
    """An example of the function's result when it is a list (an array, or an object holding an array), else None."""
    try:
        schema = function.output_schema()
    except Exception:
        return None
    if schema is None:
        raw = function.return_schema
        if not isinstance(raw, Mapping) or raw.get("type") != "array" or function._space is None:
            return None
        converted, refs = function._space.convert(raw)
        schema = function._space.standalone(converted, refs)
    example = Example(schema).value(schema, "item", 0, 0, top=True)
    if isinstance(example, list):
        return example
    if isinstance(example, dict) and any(isinstance(v, list) and len(v) >= 2 for v in example.values()):
        # An envelope (`{data: [...], has_more}`): its arrays at ten items, as a page of a listing would be.
        root = Example(schema)
        target = schema
        while isinstance(target, Mapping) and isinstance(target.get("$ref"), str):
            from urllib.parse import unquote

            target = root.defs.get(unquote(target["$ref"][8:]), {})
        for key, part in (target.get("properties") or {}).items():
            if isinstance(example.get(key), list):
                example[key] = root.value({"type": "array", "items": part.get("items", {})}, key, 0, 1, top=True)
        return example
    return None


def measure(results: list[Any], count: Callable[[str], int]) -> dict[str, Any]:
    json_tokens = chosen_tokens = compact_chosen = 0
    savings: list[float] = []
    for value in results:
        plain = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        compact = compact_text(value)
        plain_tokens = count(plain)
        json_tokens += plain_tokens
        if compact is not None:
            tokens = count(compact)
            savings.append(1 - tokens / plain_tokens)
            if tokens <= plain_tokens * (1 - MIN_SAVING):
                compact_chosen += 1
                chosen_tokens += tokens
                continue
        chosen_tokens += plain_tokens
    return {
        "results": len(results),
        "json_tokens": json_tokens,
        "chosen_tokens": chosen_tokens,
        "saving": 1 - chosen_tokens / json_tokens if json_tokens else 0.0,
        "compact_chosen": compact_chosen,
        "median_saving_when_compact": statistics.median(savings) if savings else 0.0,
    }


async def demo_results() -> list[Any]:
    from demo import ADMIN_KEY, create_app
    from gateway.gateway import Gateway
    from gateway.rest.lifespan import app_lifespan

    app = create_app()
    gateway = Gateway(app=app)
    results = []
    async with app_lifespan(app):
        headers = {"authorization": f"Bearer {ADMIN_KEY}"}
        for function in gateway.catalog.functions():
            if function.read_only and function.function_name.startswith("list_"):
                required = {arg.name for arg in function.args if arg.required}
                args = dict.fromkeys(required, 1)
                if any(arg.name == "limit" for arg in function.args):
                    args["limit"] = 20
                results.append(await gateway.call(headers, function.name, args))
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--corpus", default=str(Path(__file__).resolve().parents[2] / "shared" / "corpus" / "specs"))
    parser.add_argument("--docs", nargs="*", default=None, help="corpus file names containing these words")
    parser.add_argument("--per-doc", type=int, default=30, help="list functions measured per document")
    parser.add_argument("--json", help="write the figures here too")
    options = parser.parse_args()
    label, count = tokenizer()
    rows: list[tuple[str, dict[str, Any]]] = [("demo shop (called)", measure(asyncio.run(demo_results()), count))]
    names = (
        DEFAULT_DOCS
        if not options.docs
        else sorted(p.name for p in Path(options.corpus).iterdir() if any(word in p.name for word in options.docs))
    )
    for name in names:
        catalog = build_catalog(load_document(Path(options.corpus) / name))
        examples = []
        for function in catalog.functions():
            if not function.read_only:
                continue
            example = list_results(function)
            if example is not None:
                examples.append(example)
            if len(examples) >= options.per_doc:
                break
        rows.append((name, measure(examples, count)))
    print(f"tokens: {label}; compact sent where it saves >= {MIN_SAVING:.0%}, else JSON")
    print(f"{'source':32} {'results':>7} {'JSON tok':>9} {'sent tok':>9} {'saving':>7} {'compact':>8} {'median':>7}")
    total_json = total_sent = 0
    for name, row in rows:
        total_json += row["json_tokens"]
        total_sent += row["chosen_tokens"]
        print(
            f"{name[:32]:32} {row['results']:>7} {row['json_tokens']:>9} {row['chosen_tokens']:>9} "
            f"{row['saving']:>7.1%} {row['compact_chosen']:>4}/{row['results']:<3} "
            f"{row['median_saving_when_compact']:>7.1%}"
        )
    print(f"{'all':32} {'':>7} {total_json:>9} {total_sent:>9} {1 - total_sent / max(total_json, 1):>7.1%}")
    if options.json:
        Path(options.json).write_text(json.dumps({"tokenizer": label, "rows": dict(rows)}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
