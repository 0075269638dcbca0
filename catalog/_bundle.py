"""Bundle external-file, URL and `$id`-relative `$ref`s into the root document, so that every ref is local.

It does what `redocly bundle` does (packages/core/src/bundle/bundle-visitor.ts), so that a multi-file API and its
redocly bundle load the same: the tree is walked in the order of the OpenAPI types, a ref is followed to its
final target, the target is walked first (refs inside it are bundled before it is named), and then

- a target in the root document stays where it is: the ref becomes (or stays) a local pointer to it;
- a schema, parameter, response, example, request body, header, security scheme, link or callback becomes the
  component `#/components/<section>/<name>`, named after the pointer's last token (`parameters.yml#/app_id` →
  `app_id`) or else the file's name (`models/app.yml` → `app`); a different target whose name is taken gets
  `-2`, `-3`, ... (an equal one shares the name);
- anything else (a path item, an operation, `info.description`, an extension value) is inlined, the ref's
  sibling keys winning over the target's.

Unlike redocly, an external ref written directly as a root component (`components/schemas/Pet: {$ref: pet.yml}`)
is inlined under that name rather than aliased. Refs inside example values are data and are left alone.
Unresolvable refs and reference cycles are left as they are and reported through `warn(pointer, message)`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import unquote, urldefrag, urljoin, urlsplit

from catalog._oas_kinds import DATA, MAPS, SECTIONS, children
from catalog._parse import parse_text
from catalog._pointer import MISSING, escape_token, join_pointer, lookup, split_fragment
from catalog._refs import MAX_REF_CHAIN
from catalog.errors import DocumentError, FetchLimitError
from catalog.fetched import Fetched, looks_like_html, uri_path

__all__ = ["Bundler", "Warn"]

Warn = Callable[[str, str], None]

_TEXT_SUFFIXES = frozenset({"", ".json", ".yaml", ".yml"})


@dataclass(frozen=True, slots=True)
class _Target:
    """A node a ref leads to, and where it is: its document's URI, its pointer tokens and its `$id` base."""

    node: Any
    uri: str
    tokens: tuple[str, ...]
    base: str

    @property
    def place(self) -> tuple[str, tuple[str, ...]]:
        return self.uri, self.tokens


class Bundler:
    """Bundles the refs of one root document (mutating it and the trees of the files it loads).

    `root_uri` is the root's `file:` or `http(s):` URI, or "" when it has no location (then only absolute URLs
    can be loaded). `schema_ids` turns on OpenAPI 3.1's `$id`/`$anchor` resolution. `fetch` reads each other
    document a ref names: the load's `catalog.fetched.Fetching`, whose FetchLimitError ends the whole load.
    """

    def __init__(
        self, root: dict[str, Any], *, root_uri: str, schema_ids: bool, warn: Warn, fetch: Callable[[str], Fetched]
    ) -> None:
        self.root = root
        self.fetch = fetch
        self.root_uri = root_uri
        self.schema_ids = schema_ids
        self.warn = warn
        self.documents: dict[str, Any] = {root_uri: root}
        self.seen: set[tuple[int, str]] = set()
        self.active: set[int] = set()
        self.claimed: dict[tuple[str, tuple[str, ...]], str] = {}
        self.homes: dict[int, _Target] = {}
        # Refs in other files that now point into the root (kept alive, so that their ids stay theirs).
        self.rewritten: dict[int, dict[str, Any]] = {}
        self._ids: dict[str, tuple[str, ...]] | None = None
        self._anchors: dict[str, tuple[str, ...]] = {}

    def bundle(self) -> None:
        """Walk the whole root document, bundling every ref reached from an OpenAPI position."""
        self._claim_root_components()
        self.walk(self.root, "root", self.root_uri, self.root_uri, (), (), None, None)

    # -- walking -------------------------------------------------------------------------------------------

    def walk(
        self,
        node: Any,
        kind: str,
        uri: str,
        base: str,
        tokens: tuple[str, ...],
        out: tuple[str, ...],
        parent: Any,
        key: Any,
    ) -> None:
        """Visit `node` as `kind`; `out` is where it sits in the bundled tree, for warnings."""
        if isinstance(node, dict):
            home = self.homes.get(id(node))
            if home is not None:  # a root component inlined from another file: its refs are relative to that
                uri, base, tokens = home.uri, home.base, home.tokens
            if "$ref" in node:
                ref = node["$ref"]
                if isinstance(ref, str):
                    self.on_ref(node, kind, uri, base, tokens, out, parent, key)
                    return
                if not isinstance(ref, dict) and kind not in MAPS:  # in a map, `$ref` may be a property's name
                    self.warn(join_pointer(out), _invalid_ref_message(ref, uri, tokens, self.root_uri))
                    return
            if kind == "mapping":
                self.on_mapping(node, uri, base, tokens, out)
                return
            mark = (id(node), kind)
            if mark in self.seen:
                return
            self.seen.add(mark)
            if self.schema_ids and kind == "schema" and isinstance(node.get("$id"), str):
                base = urldefrag(urljoin(base, node["$id"]))[0]
            for child_key, child_kind in children(kind, node):
                self.walk(
                    node[child_key], child_kind, uri, base, (*tokens, child_key), (*out, child_key), node, child_key
                )
        elif isinstance(node, list):
            if kind == "any":
                item = "any"
            elif kind.endswith("[]"):
                item = kind.removesuffix("[]").removesuffix("|")
            else:
                return
            mark = (id(node), kind)
            if mark in self.seen:
                return
            self.seen.add(mark)
            for index, value in enumerate(node):
                step = str(index)
                self.walk(value, item, uri, base, (*tokens, step), (*out, step), node, index)

    def on_ref(
        self,
        node: dict[str, Any],
        kind: str,
        uri: str,
        base: str,
        tokens: tuple[str, ...],
        out: tuple[str, ...],
        parent: Any,
        key: Any,
    ) -> None:
        """Bundle the ref `node` found at `out` (inside document `uri` at `tokens`)."""
        if id(node) in self.active:
            return  # reached again through a recursive schema while it is being bundled
        self.active.add(id(node))
        if id(node) in self.rewritten:
            uri = base = self.root_uri
        try:
            ref: str = node["$ref"]
            first = self.locate(ref, uri, base, tokens, out)
            target = self.follow(ref, first, _where(uri, tokens, self.root_uri), out) if first else None
            if first is None or target is None:
                return
            for child_key, child_kind in children(kind, node):  # siblings of `$ref`, relative to the ref
                self.walk(
                    node[child_key], child_kind, uri, base, (*tokens, child_key), (*out, child_key), node, child_key
                )
            # The target's refs are bundled before it is named or inlined; an `any` walk would add nothing.
            walk_kind = "any" if kind == "text" else kind
            if first.uri == self.root_uri and kind != "text":
                # A ref into the root stays a ref (the builder follows local chains itself).
                if not (ref == "#" or ref.startswith("#/")) or uri != self.root_uri:
                    self.rewrite(node, join_pointer(first.tokens))
                if first.tokens and kind != "any":
                    self.walk(first.node, kind, first.uri, first.base, first.tokens, first.tokens, None, None)
                return
            if target.uri == self.root_uri and kind != "text":
                self.rewrite(node, join_pointer(target.tokens))
                if kind != "any":
                    self.walk(target.node, kind, target.uri, target.base, target.tokens, target.tokens, None, None)
                return
            self.walk(target.node, walk_kind, target.uri, target.base, target.tokens, out, None, None)
            section = SECTIONS.get(kind)
            name = self.component_name(section, target) if section else None
            if section and name is not None:
                self.rewrite(node, f"#/components/{section}/{escape_token(name)}")
            elif parent is not None:
                siblings = {k: v for k, v in node.items() if k != "$ref"}
                parent[key] = {**target.node, **siblings} if isinstance(target.node, dict) else target.node
        finally:
            self.active.discard(id(node))

    def rewrite(self, node: dict[str, Any], local: str) -> None:
        """Point a ref at `local`, a pointer into the root, wherever the ref is written."""
        node["$ref"] = local
        self.rewritten[id(node)] = node

    def on_mapping(self, mapping: dict[str, Any], uri: str, base: str, tokens: tuple[str, ...], out: Any) -> None:
        """Rewrite discriminator mapping values that name schemas in other files to component refs."""
        for name, value in list(mapping.items()):
            if not isinstance(value, str) or (value.startswith("#") and uri == self.root_uri):
                continue
            if "/" not in value and "." not in value:  # a bare schema name, not a ref
                continue
            ref_node = {"$ref": value}
            self.on_ref(ref_node, "schema", uri, base, (*tokens, name), (*out, name), None, None)
            if ref_node["$ref"].startswith("#"):
                mapping[name] = ref_node["$ref"]

    # -- resolving -----------------------------------------------------------------------------------------

    def locate(self, ref: str, uri: str, base: str, tokens: tuple[str, ...], out: tuple[str, ...]) -> _Target | None:
        """One step: the node `ref` names when written in document `uri` under `$id` base `base`."""
        where = _where(uri, tokens, self.root_uri)
        if ref.startswith("#"):
            doc_uri, fragment, target_base = uri, ref[1:], base
        else:
            doc_uri, fragment = urldefrag(urljoin(base, ref))
            target_base = doc_uri
            if self.schema_ids:
                found = self._by_id(doc_uri, fragment)
                if found is None and base != uri:
                    doc_uri, fragment = urldefrag(urljoin(uri, ref))
                    target_base = doc_uri
                    found = self._by_id(doc_uri, fragment)
                if found is not None:
                    return found
            if urlsplit(doc_uri).scheme == "file" and urlsplit(uri).scheme != "file":
                # Only a document read from a file may read other files: not one from the web, text or an app.
                self.warn(join_pointer(out), f"{where}$ref {ref!r} would read a local file; left as it is")
                return None
        document = self.document(doc_uri, ref, where, out)
        if document is MISSING:
            return None
        pointer = split_fragment(fragment)
        if pointer is None:
            found = self._by_anchor(target_base, fragment) if self.schema_ids and doc_uri == self.root_uri else None
            if found is None:
                self.warn(join_pointer(out), f"{where}$ref {ref!r}: no schema has $anchor {fragment!r}; left as it is")
            return found
        node = lookup(document, pointer)
        if node is MISSING:
            self.warn(
                join_pointer(out),
                f"{where}$ref {ref!r} points at nothing ({join_pointer(pointer)} does not exist in "
                f"{_display(doc_uri, self.root_uri)}); left as it is",
            )
            return None
        return _Target(node, doc_uri, tuple(pointer), target_base)

    def follow(self, ref: str, first: _Target, where: str, out: tuple[str, ...]) -> _Target | None:
        """Follow a chain of refs (a target that is itself a ref) to its end, refusing cycles."""
        target = first
        visited = {first.place}
        for _ in range(MAX_REF_CHAIN):
            following = target.node.get("$ref") if isinstance(target.node, dict) else None
            if not isinstance(following, str):
                return target
            step = self.locate(following, target.uri, target.base, target.tokens, out)
            if step is None:
                return None
            if step.place in visited:
                self.warn(
                    join_pointer(out),
                    f"{where}$ref {ref!r} leads into a reference cycle through "
                    f"{_display(step.uri, self.root_uri)}{join_pointer(step.tokens)}; left as it is",
                )
                return None
            visited.add(step.place)
            target = step
        self.warn(
            join_pointer(out),
            f"{where}$ref {ref!r} starts a chain of more than {MAX_REF_CHAIN} refs (its {MAX_REF_CHAIN + 1}th target "
            f"is {_display(target.uri, self.root_uri)}{join_pointer(target.tokens)}); left as it is: point it at the "
            "chain's end",
        )
        return None

    def document(self, doc_uri: str, ref: str, where: str, out: tuple[str, ...]) -> Any:
        """The parsed document at `doc_uri` (loaded once), or MISSING after a warning."""
        if doc_uri in self.documents:
            document = self.documents[doc_uri]
            if document is MISSING:
                self.warn(join_pointer(out), f"{where}$ref {ref!r} cannot be resolved (see the earlier warning)")
            return document
        document = MISSING
        if urlsplit(doc_uri).scheme not in ("file", "http", "https"):
            self.warn(
                join_pointer(out),
                f"{where}$ref {ref!r} is relative but the document has no location; "
                "load it from its file or URL, or pass location=",
            )
        else:
            try:
                fetched = self.fetch(doc_uri)
                if looks_like_html(fetched):
                    raise DocumentError(f"{doc_uri} is an HTML page, not a document", location=doc_uri)
                data = fetched.content
                suffix = PurePosixPath(unquote(urlsplit(doc_uri).path)).suffix.lower()
                if suffix in _TEXT_SUFFIXES:
                    document = parse_text(data, _display(doc_uri, self.root_uri))[0]
                else:  # Markdown and other text files are strings, as redocly reads them
                    document = data.decode("utf-8", errors="replace")
            except FetchLimitError:
                raise
            except DocumentError as exc:
                self.warn(join_pointer(out), f"{where}$ref {ref!r} cannot be resolved: {exc}; left as it is")
        self.documents[doc_uri] = document
        return document

    def component_name(self, section: str, target: _Target) -> str | None:
        """The component name for `target` in `section`, saving it there; None when there is no such section."""
        components = self.root.setdefault("components", {})
        group = components.setdefault(section, {}) if isinstance(components, dict) else None
        if not isinstance(group, dict):
            return None
        claimed = self.claimed.get(target.place)
        if claimed is not None:
            return claimed
        stem = target.tokens[-1] if target.tokens and target.tokens[-1] else _file_stem(target.uri)
        name, serial = stem, 2
        while name in group and not self._same(group[name], target):
            name, serial = f"{stem}-{serial}", serial + 1
        group[name] = target.node
        return name

    @staticmethod
    def _same(existing: Any, target: _Target) -> bool:
        """Whether a component already saved under a name is this target (the same node or an equal one)."""
        return existing is target.node or bool(existing == target.node)

    def _claim_root_components(self) -> None:
        """Inline external refs written as root components, and keep their names for other refs to them."""
        components = self.root.get("components")
        if not isinstance(components, dict):
            return
        for section, group in components.items():
            if section not in SECTIONS.values() or not isinstance(group, dict):
                continue
            for name, value in group.items():
                if not isinstance(value, dict) or not isinstance(value.get("$ref"), str):
                    continue
                if value["$ref"].startswith("#"):
                    continue
                out = ("components", section, name)
                first = self.locate(value["$ref"], self.root_uri, self.root_uri, out, out)
                target = self.follow(value["$ref"], first, "", out) if first is not None else None
                if target is not None and target.uri != self.root_uri:
                    siblings = {k: v for k, v in value.items() if k != "$ref"}
                    inlined = {**target.node, **siblings} if isinstance(target.node, dict) else target.node
                    group[name] = inlined
                    self.claimed[target.place] = name
                    self.homes[id(inlined)] = target

    # -- OpenAPI 3.1 $id and $anchor -------------------------------------------------------------------------

    def _index(self) -> dict[str, tuple[str, ...]]:
        if self._ids is None:
            self._ids = {}
            _index_ids(self.root, self.root_uri, (), self._ids, self._anchors)
        return self._ids

    def _by_id(self, doc_uri: str, fragment: str) -> _Target | None:
        found = self._index().get(doc_uri)
        if found is None:
            return None
        pointer = split_fragment(fragment)
        if pointer is None:
            return self._by_anchor(doc_uri, fragment)
        node = lookup(self.root, [*found, *pointer])
        if node is MISSING:
            return None
        return _Target(node, self.root_uri, (*found, *pointer), doc_uri)

    def _by_anchor(self, base: str, anchor: str) -> _Target | None:
        self._index()
        found = self._anchors.get(f"{base}#{unquote(anchor)}")
        node = MISSING if found is None else lookup(self.root, list(found))
        return None if found is None or node is MISSING else _Target(node, self.root_uri, found, base)


def _index_ids(
    node: Any, base: str, tokens: tuple[str, ...], ids: dict[str, tuple[str, ...]], anchors: dict[str, tuple[str, ...]]
) -> None:
    """Record every `$id` (absolute, without fragment) and `$anchor` of the root document, outside data values."""
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            base = urldefrag(urljoin(base, node["$id"]))[0]
            ids.setdefault(base, tokens)
        for keyword in ("$anchor", "$dynamicAnchor"):
            if isinstance(node.get(keyword), str):
                anchors.setdefault(f"{base}#{node[keyword]}", tokens)
        for key, value in node.items():
            if key not in DATA and isinstance(value, dict | list):
                _index_ids(value, base, (*tokens, key), ids, anchors)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            if isinstance(value, dict | list):
                _index_ids(value, base, (*tokens, str(index)), ids, anchors)


def _file_stem(uri: str) -> str:
    """`models/app.yml` → `app` (redocly's refBaseName)."""
    name = unquote(urlsplit(uri).path).rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"\.[^.]+$", "", name) or "component"


def _display(uri: str, root_uri: str) -> str:
    """A file URI as a path relative to the root document's folder when it is inside it; other URIs as they are."""
    if not uri.startswith("file:"):
        return uri or "<document>"
    path = uri_path(uri)
    if root_uri.startswith("file:"):
        folder = str(PurePosixPath(uri_path(root_uri)).parent)
        if path.startswith(folder + "/"):
            return path[len(folder) + 1 :]
    return path


def _where(uri: str, tokens: tuple[str, ...], root_uri: str) -> str:
    """A message prefix naming where a ref is written when that is another file (`in models/x.yml#/a: `)."""
    return "" if uri == root_uri else f"in {_display(uri, root_uri)}{join_pointer(tokens)}: "


def _invalid_ref_message(ref: Any, uri: str, tokens: tuple[str, ...], root_uri: str) -> str:
    where = _where(uri, tokens, root_uri)
    if ref is None:
        return (
            f"{where}$ref is empty; in YAML an unquoted # starts a comment, so quote the value "
            "($ref: '#/components/...'); left as it is"
        )
    return f"{where}$ref must be a string, not {type(ref).__name__} {ref!r}; left as it is"
