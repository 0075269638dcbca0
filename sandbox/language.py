"""What JavaScript scripts may use, as the run_script tool's description promises it, and how each word of that
promise is checked against the engine (tests/sandbox/test_language.py runs every probe in a real worker).

Kept apart from `sandbox.engine` so that the gateway can quote it without loading the QuickJS binding.
"""

from __future__ import annotations

__all__ = ["LANGUAGE", "LANGUAGE_PROBES"]

#: What scripts may use, as the run_script description says it: every backquoted name and the edition are
#: checked by LANGUAGE_PROBES (tests/sandbox/test_language.py runs them in a worker).
LANGUAGE = "ES2024, e.g. `Object.groupBy`, `findLast`, `toSorted`, `at`; no `Intl`"

#: For each claim of LANGUAGE, JavaScript expressions that are true in the engine.
LANGUAGE_PROBES: dict[str, tuple[str, ...]] = {
    # What ES2022, ES2023 and ES2024 added (everything before them is older QuickJS's too), less Atomics and
    # SharedArrayBuffer, which the sandbox removes.
    "ES2024": (
        "[1, 2, 3].at(-1) === 3 && 'abc'.at(0) === 'a'",
        "Object.hasOwn({a: 1}, 'a')",
        "new Error('x', {cause: 7}).cause === 7",
        "(() => { class A { #x = 1; static s; static { A.s = 2 } static has(o) { return #x in o } } "
        "return A.s === 2 && A.has(new A()) })()",
        "/b/d.exec('ab').indices[0][0] === 1",
        "[1, 2, 3].findLast((n) => n < 3) === 2 && [1, 2, 3].findLastIndex((n) => n < 3) === 1",
        "[3, 1, 2].toSorted().join() === '1,2,3' && [1, 2].toReversed()[0] === 2",
        "[1, 2, 3].toSpliced(0, 1).length === 2 && [1, 2].with(0, 5)[0] === 5",
        "(() => { const k = Symbol('k'); return new WeakMap([[k, 1]]).get(k) === 1 })()",
        "Object.groupBy([1, 2, 3], (n) => (n % 2 ? 'odd' : 'even')).odd.length === 2",
        "Map.groupBy([1, 2, 3], (n) => n % 2).get(1).length === 2",
        "typeof Promise.withResolvers().resolve === 'function'",
        "'a'.isWellFormed() && '\\uD800'.toWellFormed() === '\\uFFFD'",
        "new ArrayBuffer(1, {maxByteLength: 4}).resizable && new ArrayBuffer(2).transfer(4).byteLength === 4",
        "/[\\p{L}--[a-z]]/v.test('A')",
    ),
    "Object.groupBy": ("Object.groupBy(['a', 'bb'], (s) => s.length)[2][0] === 'bb'",),
    "findLast": ("[{n: 1}, {n: 2}].findLast((o) => o.n > 0).n === 2",),
    "toSorted": ("(() => { const a = [2, 1]; return a.toSorted()[0] === 1 && a[0] === 2 })()",),
    "at": ("[1, 2, 3].at(-1) === 3",),
    "Intl": ("typeof Intl === 'undefined'",),
}
