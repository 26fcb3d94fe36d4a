"""The one way user text becomes a SymPy expression: a whitelist over Python's `ast`, never `eval`.

Why not `sympy.sympify` or `parse_expr`: both evaluate Python, so `__import__('os').system(...)` typed as a
"formula" runs, and formulas come from the command line, notebook parameters and saved files that travel.

The grammar: numbers, `x`, named parameters the caller allows, `+ - * / **`, unary `+`/`-`, positional calls of
`FUNCTIONS`, the constants `pi` and `E`, and (inside `Piecewise`) tuples `(expr, condition)` whose conditions are
comparisons, `True`, or `&`/`|` of those. Anything else fails with one error naming the token and its position.

Bounds, because a short string can ask for unbounded work: length, nesting depth and node count; a constant
exponent is at most `MAX_EXPONENT`, and a power of two constants at most `MAX_NUMBER_BITS` bits (SymPy computes
`9**9**9` in one C call that no signal interrupts, so it is refused before it starts); and `time_bound` stops
SymPy work on a formula that runs longer than a few seconds.
"""

from __future__ import annotations

import ast
import contextlib
import math
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import sympy as sp

from actlab.errors import ActlabError

MAX_LENGTH = 2000
MAX_DEPTH = 60
MAX_NODES = 400  # syntax-tree nodes; real activations take tens (Piecewise with a few pieces: under 100)
MAX_EXPONENT = 100  # |n| of a constant exponent, as in x**n or 9**n
MAX_NUMBER_BITS = 4096  # size of a constant computed by a power, as in 9**99 (about 1,200 digits)
PARSE_SECONDS = 5.0  # building the expression from its tree; with the bounds above it takes milliseconds

# The functions a formula may call: SymPy's, by the names users type.
FUNCTIONS: dict[str, Callable[..., sp.Basic]] = {
    "exp": sp.exp,
    "log": sp.log,
    "sqrt": sp.sqrt,
    "sin": sp.sin,
    "cos": sp.cos,
    "tan": sp.tan,
    "sinh": sp.sinh,
    "cosh": sp.cosh,
    "tanh": sp.tanh,
    "asinh": sp.asinh,
    "atan": sp.atan,
    "arctan": sp.atan,
    "erf": sp.erf,
    "erfc": sp.erfc,
    "Abs": sp.Abs,
    "abs": sp.Abs,
    "sign": sp.sign,
    "Max": sp.Max,
    "Min": sp.Min,
    "Heaviside": sp.Heaviside,
    "Piecewise": sp.Piecewise,
}
CONSTANTS: dict[str, sp.Basic] = {"pi": sp.pi, "E": sp.E}

_BINARY = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.Pow: lambda a, b: a**b,
}
_COMPARE = {ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Lt: sp.Lt, ast.LtE: sp.Le}


class ExpressionError(ActlabError, ValueError):
    """A formula that is not in actlab's expression grammar; the message names the offending token."""


def parse_expression(text: str, parameters: Iterable[str] = (), *, symbol: sp.Symbol | None = None) -> sp.Expr:
    """Parse `text` (e.g. "alpha*exp(x) - 1") into a SymPy expression in `x` (`symbol`, default the real
    `actlab.symbolic.symbols.x`) and the named `parameters`, positive symbols as the recipe's scales are."""
    if not isinstance(text, str):
        raise ExpressionError(f"a formula is a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExpressionError(f"formula is {len(text)} characters long; the limit is {MAX_LENGTH}")
    if not text.strip():
        raise ExpressionError("formula is empty; write an expression in x, e.g. exp(x) - 1")
    if symbol is None:
        from actlab.symbolic.symbols import x as symbol
    names: dict[str, sp.Basic] = {"x": symbol, **CONSTANTS}
    for name in parameters:
        if not name.isidentifier() or name in FUNCTIONS or name in names:
            raise ExpressionError(f"parameter name {name!r} is not a free identifier")
        names[name] = sp.Symbol(name, positive=True)
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ExpressionError(f"cannot parse {text!r}: {error.msg} at column {error.offset}") from None
    except (RecursionError, MemoryError):
        raise ExpressionError(f"formula is nested too deeply to parse (the limit is {MAX_DEPTH} levels)") from None
    nodes = sum(1 for _ in ast.walk(tree.body))
    if nodes > MAX_NODES:
        raise ExpressionError(f"formula has {nodes} syntax nodes; the limit is {MAX_NODES}: write a shorter formula")
    builder = _Builder(text, names)
    with time_bound(PARSE_SECONDS, f"parsing {text.strip()[:60]!r}"):
        result = builder.build(tree.body, depth=0)
    if not isinstance(result, sp.Expr):
        raise ExpressionError(
            f"{text!r} is a condition, not an expression; write e.g. Piecewise((x, x > 0), (0, True))"
        )
    return result


class _Builder:
    """Builds SymPy objects from a whitelisted `ast` tree, one node type at a time."""

    def __init__(self, text: str, names: dict[str, sp.Basic]) -> None:
        self.text = text
        self.names = names

    def refuse(self, node: ast.AST, what: str) -> ExpressionError:
        token = ast.get_source_segment(self.text.strip(), node) or type(node).__name__
        column = getattr(node, "col_offset", 0) + 1
        allowed = "numbers, x, " + ", ".join(n for n in self.names if n != "x")
        return ExpressionError(
            f"{what} {token!r} (column {column}) is not allowed in a formula; allowed: {allowed}, + - * / **, "
            f"and the functions {', '.join(FUNCTIONS)}"
        )

    def build(self, node: ast.AST, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"formula is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
                raise self.refuse(node, "constant")
            return sp.Integer(node.value) if isinstance(node.value, int) else sp.Float(repr(node.value))
        if isinstance(node, ast.Name):
            if node.id not in self.names:
                raise self.refuse(node, "name")
            return self.names[node.id]
        if isinstance(node, ast.BinOp):
            operation = _BINARY.get(type(node.op))
            if operation is None:
                raise self.refuse(node, "operator")
            left, right = self.expr(node.left, depth), self.expr(node.right, depth)
            if isinstance(node.op, ast.Pow):
                self.check_power(node, left, right)
            return operation(left, right)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = self.expr(node.operand, depth)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        raise self.refuse(node, "syntax")

    def check_power(self, node: ast.BinOp, base: sp.Expr, exponent: sp.Expr) -> None:
        """Refuse `base**exponent` before SymPy computes it, if it is bigger than any activation needs."""
        if not exponent.is_Number:
            return
        segment = ast.get_source_segment(self.text.strip(), node.right) or str(exponent)
        shown = segment if segment == str(exponent) else f"{segment} = {exponent}"
        if abs(exponent) > MAX_EXPONENT:
            raise ExpressionError(
                f"exponent {shown} (column {node.right.col_offset + 1}) is too large: a formula's constant exponents "
                f"lie within [-{MAX_EXPONENT}, {MAX_EXPONENT}]"
            )
        if base.is_Rational:  # exact: SymPy computes the power digit by digit (a Float's power is cheap)
            bits = float(abs(exponent)) * max(abs(int(base.p)).bit_length(), int(base.q).bit_length())
            if bits > MAX_NUMBER_BITS:
                power = ast.get_source_segment(self.text.strip(), node) or f"{base}**{exponent}"
                raise ExpressionError(
                    f"{power!r} (column {node.col_offset + 1}) is a number of about {bits * math.log10(2):,.0f} "
                    f"digits (exponent {shown}); constants in a formula have at most "
                    f"{MAX_NUMBER_BITS * math.log10(2):,.0f} digits"
                )

    def expr(self, node: ast.AST, depth: int) -> sp.Expr:
        value = self.build(node, depth + 1)
        if not isinstance(value, sp.Expr):
            raise self.refuse(node, "condition used as a value")
        return value

    def call(self, node: ast.Call, depth: int) -> sp.Basic:
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            raise self.refuse(node.func, "function")
        if node.keywords:
            raise self.refuse(node.keywords[0].value, "keyword argument")
        if node.func.id == "Piecewise":
            if not node.args:
                raise self.refuse(node, "empty Piecewise")
            return sp.Piecewise(*(self.piece(arg, depth) for arg in node.args))
        if not node.args:
            raise self.refuse(node, "call without arguments")
        arguments = [self.expr(arg, depth) for arg in node.args]
        try:
            return FUNCTIONS[node.func.id](*arguments)
        except (TypeError, ValueError) as error:
            raise ExpressionError(f"{ast.get_source_segment(self.text.strip(), node)!r}: {error}") from None

    def piece(self, node: ast.AST, depth: int) -> tuple[sp.Expr, sp.Basic]:
        if not isinstance(node, ast.Tuple) or len(node.elts) != 2:
            raise self.refuse(node, "Piecewise argument (write (expr, condition))")
        return self.expr(node.elts[0], depth), self.condition(node.elts[1], depth + 1)

    def condition(self, node: ast.AST, depth: int) -> sp.Basic:
        if depth > MAX_DEPTH:
            raise ExpressionError(f"formula is nested deeper than {MAX_DEPTH} levels")
        if isinstance(node, ast.Constant) and node.value is True:
            return sp.true
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            relation = _COMPARE[type(node.ops[0])]
            return relation(self.expr(node.left, depth), self.expr(node.comparators[0], depth))
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
            left, right = self.condition(node.left, depth + 1), self.condition(node.right, depth + 1)
            return sp.And(left, right) if isinstance(node.op, ast.BitAnd) else sp.Or(left, right)
        raise self.refuse(node, "condition")


_bounded_outside = False  # set by `bounded_outside`: the caller's own bound stops the work, not these alarms


@contextlib.contextmanager
def bounded_outside() -> Iterator[None]:
    """Within the block `time_bound` does nothing: the caller bounds the work itself, in a process it kills at its
    deadline (`actlab derive --timeout`, `actlab.deadline`), so that bound alone decides, with its own message."""
    global _bounded_outside
    before, _bounded_outside = _bounded_outside, True
    try:
        yield
    finally:
        _bounded_outside = before


class _TimeUp(BaseException):
    """Raised by the alarm: a BaseException, so that SymPy's own `except Exception`/`ValueError` blocks pass it on."""


@contextlib.contextmanager
def time_bound(seconds: float, what: str) -> Iterator[None]:
    """Raise `ExpressionError` if the block runs longer than `seconds` (SIGALRM; main thread only).

    Why a signal: SymPy's integration and simplification are Python loops no argument bounds. After the first
    alarm it rings every `_AGAIN_SECONDS`, because an exception raised in a finaliser or a garbage-collector callback
    is dropped. Off the main thread, or under an outer bound (an alarm already set, or `bounded_outside`), this is a
    no-op (the outer bound stops the work).
    """
    outer = _bounded_outside or signal.getitimer(signal.ITIMER_REAL)[0] > 0
    if outer or threading.current_thread() is not threading.main_thread():
        yield
        return

    armed = [True]

    def expire(signum: int, frame: Any) -> None:
        if armed[0]:
            raise _TimeUp

    def disarm() -> None:
        """Stop the alarm; a ring that lands while stopping it (on a loaded machine the next one can come before
        the first `_TimeUp` is handled) is absorbed here, so no `_TimeUp` ever leaves this block."""
        while True:
            try:
                armed[0] = False
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
                return
            except _TimeUp:
                continue

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds, _AGAIN_SECONDS)
    timed_out = False
    try:
        try:
            yield
        finally:
            disarm()
    except _TimeUp:  # from the block, or a ring that came before `disarm` started
        timed_out = True
        disarm()
    if timed_out:
        raise ExpressionError(f"{what} took more than {seconds:g} s; simplify the formula")


_AGAIN_SECONDS = 0.1
