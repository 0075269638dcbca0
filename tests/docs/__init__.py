"""The documentation as tested text: every fenced block of README.md and docs/ runs (or is parsed, or is compared with
the file it quotes), and the generated reference pages match the code they are made from."""
