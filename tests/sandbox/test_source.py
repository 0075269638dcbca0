"""The implicit return: the last top-level expression statement of a script becomes its result."""

from __future__ import annotations

import pytest

from sandbox._source import last_statement, with_implicit_return


@pytest.mark.parametrize(
    ("source", "rewritten"),
    [
        ("1 + 1", "return (1 + 1);"),
        ("x;", "return (x);;"),
        ("a; b;  // done", "a; return (b);;  // done"),
        ("const x = await f();\nx.length", "const x = await f();\nreturn (x.length);"),
        (
            "const r = await f()\nr.items\n  .map(x => x.id)",
            "const r = await f()\nreturn (r.items\n  .map(x => x.id));",
        ),
        ("for (const o of os) { t += o }\nt", "for (const o of os) { t += o }\nreturn (t);"),
        ("const s = `a${ {b: 1}.b }c`\ns", "const s = `a${ {b: 1}.b }c`\nreturn (s);"),
        ("let y = /ab+c/g.test(s)\ny", "let y = /ab+c/g.test(s)\nreturn (y);"),
        ("x = a / b / c", "return (x = a / b / c);"),
        ("{a: 1}", "return ({a: 1});"),
        ("x\n// c; y", "return (x);\n// c; y"),
        ("f('a;b')\ng", "f('a;b')\nreturn (g);"),
        ("obj = {\n  a: 1 }\nobj", "obj = {\n  a: 1 }\nreturn (obj);"),
        ("await g()", "return (await g());"),
        ("a\n++b", "a\nreturn (++b);"),
        ("for (;;) { break } n", "for (;;) { break } return (n);"),
        ("if (a) { b() } else { c() } 'done'", "if (a) { b() } else { c() } return ('done');"),
    ],
)
def test_the_last_expression_statement_is_wrapped_in_a_return(source: str, rewritten: str) -> None:
    assert with_implicit_return(source) == rewritten


@pytest.mark.parametrize(
    "source",
    [
        "",
        "// only a comment",
        "return 5",
        "const x = 1",
        "if (x)\n  y",
        "function f() {}",
        "async function f() {}",
        "class A {}",
        "for (;;) {}",
        "'unterminated",
        "/* unterminated",
        "`unterminated ${",
        "a = (1",
        "a = 1)",
        ";;",
    ],
)
def test_a_script_that_does_not_end_in_an_expression_is_left_as_written(source: str) -> None:
    assert with_implicit_return(source) is None


@pytest.mark.parametrize(
    "source",
    ["foo\n(bar)", "a\n.b", "a\n+ b", "a\n[0]", "a\n`t`", "x = typeof\ny", "x = {a: 1}.a", "f(function () {} )"],
)
def test_a_line_that_continues_the_previous_one_is_not_a_new_statement(source: str) -> None:
    # JavaScript reads `foo\n(bar)` as a call, `a\n.b` as a member access, `a\n+ b` as a sum, and so on.
    assert last_statement(source) == (0, len(source))


def test_a_control_statement_head_does_not_end_a_statement() -> None:
    assert last_statement("while (a)\nb") is None
    assert last_statement("do {} while (a)\n42") is None
