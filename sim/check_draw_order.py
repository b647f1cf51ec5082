#!/usr/bin/env python3
"""A seed must give the same run under every compiler. C++ leaves the order of evaluation of a
call's arguments and of a binary operator's operands to the compiler, so one expression that
draws twice from the same kvchaos::Rng (`SimClock(Duration(r.UniformInt(..)), r.UniformInt(..))`,
`r.UniformInt(..) + r.UniformInt(..)`) draws in gcc's order under gcc and clang's under clang,
and the trace hashes differ. This check finds such expressions in the source tree: each draw must
be a statement of its own (or on another branch of a `?:`, or in its own declarator).
ci/compilers-agree.sh is the full check (it runs both builds); this one is cheap and needs none.

  sim/check_draw_order.py ROOT      exit 1 naming file:line of each expression that draws twice
"""
import pathlib
import re
import sys

DIRS = ["core", "sim", "harness", "faultfs", "tools", "bench", "property_tests", "testing"]
# A draw: `receiver.Method(` with Rng's drawing methods (core/common/rng.h).
DRAW = re.compile(r"\b([A-Za-z_][A-Za-z_0-9]*)\s*(?:\.|->)\s*"
                  r"(NextU64|Uniform|UniformInt|UniformDouble|UniformReal|Exponential|Bernoulli)\s*\(")
# Between two draws, these sequence them or evaluate only one: a `?:` branch, a new declarator.
SEQUENCED = re.compile(r"\?|(?<!:):(?!:)|,\s*[A-Za-z_][A-Za-z_0-9]*\s*=[^=]|&&|\|\|")


def strip_comments_and_strings(text):
    """Comments and literals blanked (newlines kept, so line numbers stay)."""
    pattern = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    return pattern.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def findings(path):
    text = strip_comments_and_strings(path.read_text(errors="replace"))
    start = 0
    for end in re.finditer(r"[;{}]", text):
        statement = text[start:end.start()]
        draws = list(DRAW.finditer(statement))
        for a, b in zip(draws, draws[1:]):
            if a.group(1) == b.group(1) and not SEQUENCED.search(statement[a.end():b.start()]):
                line = text.count("\n", 0, start + a.start()) + 1
                yield f"{path}:{line}: '{a.group(1)}' is drawn twice in one expression, in an order the compiler picks"
                break
        start = end.end()


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = [f for d in DIRS for p in sorted((root / d).rglob("*"))
                if p.suffix in (".cc", ".h") for f in findings(p)]
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} expression(s) draw twice: make each draw a statement of its own")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
