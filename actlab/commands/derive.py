"""`actlab derive`: run the gradient-first recipe and print closed forms, gradients and proved properties.

    actlab derive xielu [--latex] [--check]
    actlab derive --pos "x**2" --neg "exp(x)"      # your own base gradients
    actlab derive --pos "x**3" --neg "exp(x)" --save cubic --check   # ... saved: resolve("cubic") builds it

`--check` also verifies every result a second way (reference closed forms, d/dx, autograd, gradcheck) and
exits 1 if any check fails.

The work runs with a time bound (`--timeout`, default 30 s of computing, and at most four times that on the clock;
`actlab.deadline`): SymPy's integration and mpmath's evaluations have no limit of their own, and a gradient such as
six nested `exp` would otherwise never return. Past the bound the command stops with one error saying so, and
nothing is saved.
"""

from __future__ import annotations

import argparse
import math

from actlab.errors import ActlabError

DEFAULT_TIMEOUT = 30.0  # seconds; every built-in derivation and its --check take a few


def configure(parser: argparse.ArgumentParser) -> None:
    from actlab.symbolic.derivations import BUILTINS  # the names only; SymPy work happens in run()

    parser.add_argument("name", nargs="?", help=f"a built-in derivation: {', '.join(BUILTINS)}")
    parser.add_argument("--pos", metavar="EXPR", help="your base gradient for x > 0, in x (e.g. 'x**2')")
    parser.add_argument("--neg", metavar="EXPR", help="your base gradient for x <= 0, in x (e.g. 'exp(x)')")
    parser.add_argument("--latex", action="store_true", help="also print f and f' as LaTeX")
    parser.add_argument("--check", action="store_true", help="verify symbolically and numerically; exit 1 on failure")
    parser.add_argument("--seed", type=int, default=0, help="seed of the numeric checks' random points")
    parser.add_argument(
        "--timeout",
        type=_seconds,
        default=DEFAULT_TIMEOUT,
        metavar="SECONDS",
        help=f"stop the derivation and its checks after this many seconds of computing (default {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--save",
        metavar="NAME",
        help="save a --pos/--neg derivation as NAME (data, in $ACTLAB_DERIVATIONS_DIR or ~/.local/share/actlab/"
        "derivations); studies then take NAME as an activation (not saved if --check fails)",
    )


def _seconds(text: str) -> float:
    """A positive, finite number of seconds (argparse reports the message as a usage error)."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive number of seconds (e.g. --timeout 120)")
    return value


def _built(args: argparse.Namespace):  # noqa: ANN202 - a BuiltActivation (SymPy imported lazily)
    """Your --pos/--neg through `build_activation` (closed form, else quadrature), or a built-in's closed form."""
    from actlab.symbolic import derivations
    from actlab.symbolic.build import BuiltActivation, build_activation

    custom = args.pos is not None or args.neg is not None
    if custom and args.name:
        raise ActlabError("give either a built-in name or --pos/--neg, not both")
    if custom:
        if args.pos is None or args.neg is None:
            raise ActlabError("a custom derivation needs both --pos and --neg (base gradients for x > 0 and x <= 0)")
        return build_activation(args.pos, args.neg)
    if not args.name:
        raise ActlabError(f"name a derivation ({', '.join(derivations.BUILTINS)}) or give --pos and --neg")
    try:
        derivation = derivations.get_derivation(args.name)
    except ValueError as error:
        raise ActlabError(str(error)) from None
    branches = derivation.positive.gradient, derivation.negative.gradient
    return BuiltActivation(args.name, *branches, derivation)


def _print_derivation(derivation, reference) -> None:  # noqa: ANN001 - SymPy objects
    import sympy as sp

    from actlab.symbolic.recipe import properties_table

    print(f"{derivation.name}: {derivation.description}")
    if derivation.constraints:
        subs = ", ".join(f"{k} = {v}" for k, v in derivation.constraints.items())
        print(f"trainable parameterisation: {subs} (s_* = softplus(...) > 0)")
    for branch, ref in zip(derivation.branches, reference or (None, None), strict=True):
        base = " + ".join(f"{alpha} * ({g})" for alpha, g in branch.terms)
        print(f"\n{branch.side}:")
        print(f"  f'(x) = {base} + beta  =  {branch.gradient}")
        print(f"  f(x)  = {branch.closed_form}")
        if ref is not None:
            same = sp.simplify(branch.closed_form - ref) == 0
            print(f"  reference f(x) = {ref}  ({'matches' if same else 'DIFFERS'})")
    constants = ", ".join(f"{k} = {v}" for k, v in derivation.constants.items())
    print(f"\nintegration constants (f(0) = 0, continuous): {constants}")
    print("\nproperties (SymPy; 'for free alphas' is before the parameterisation):")
    rows = properties_table(derivation)
    width = max(len(row["property"]) for row in rows)
    for row in rows:
        extra = (
            f"   [free alphas: {row['for free alphas']}]" if row["for free alphas"] not in ("", row["result"]) else ""
        )
        claim = f"   (paper: {row['paper claims']})" if row["paper claims"] else ""
        print(f"  {row['property']:<{width}}  {row['result']}{extra}{claim}")


def run(args: argparse.Namespace) -> int:
    from actlab.deadline import DeadlineExceededError, call_within

    if args.save is not None:  # a name that cannot be saved fails now, not after the derivation and its checks
        from actlab.activations import activation_names
        from actlab.symbolic.saved import check_name

        check_name(args.save, reserved=activation_names())
    timeout = getattr(args, "timeout", DEFAULT_TIMEOUT)
    try:
        return call_within(lambda: _derive_bounded(args), timeout)
    except DeadlineExceededError as stopped:
        what = repr(args.name) if args.name else f"--pos {args.pos!r} --neg {args.neg!r}"
        what += ", with its checks" if args.check else ""
        raise ActlabError(
            f"derivation {stopped}: {what} "
            f"(SymPy's integration and simplification have no time limit of their own)"
            f"{'; nothing was saved' if args.save else ''}. Try a simpler gradient or raise --timeout "
            f"(e.g. --timeout {4 * timeout:g})"
        ) from None


def _derive_bounded(args: argparse.Namespace) -> int:
    """`_derive` with SymPy's own alarms off (`parser.bounded_outside`): `--timeout` alone bounds it."""
    from actlab.symbolic.parser import bounded_outside

    with bounded_outside():
        return _derive(args)


def _derive(args: argparse.Namespace) -> int:
    """The derivation, its checks and its save: what `run` bounds in time."""
    from actlab.symbolic import derivations

    built = _built(args)
    if built.derivation is None:
        return _numeric(args, built)
    derivation = built.derivation
    reference = derivations.REFERENCE_CLOSED_FORMS.get(args.name) if args.name else None
    _print_derivation(derivation, reference)
    if args.latex:
        print("\nLaTeX:")
        print(derivation.latex())
    if args.save and args.name:
        raise ActlabError("--save stores your own --pos/--neg derivation; built-ins are already available by name")
    checks = derivations.run_checks(derivation, args.name, seed=args.seed) if args.check else []
    failed = _print_checks(checks)
    if args.save and not failed:
        from actlab.symbolic.saved import save_derivation

        records = [{"name": c.name, "passed": bool(c.passed), "detail": c.detail, "level": c.level} for c in checks]
        from actlab.activations import activation_names

        path = save_derivation(args.save, args.pos, args.neg, checks=records, reserved=activation_names())
        print(
            f"\nsaved as {args.save!r}: {path}  (use it anywhere an activation is named, e.g. resolve({args.save!r}))"
        )
    return 1 if failed else 0


def _numeric(args: argparse.Namespace, built) -> int:  # noqa: ANN001 - a BuiltActivation (SymPy imported lazily)
    """The numeric path: f by quadrature, f' exact; its checks, each with its level, and the error bound."""
    from actlab.symbolic.quadrature import error_bound, numeric_checks

    g = built.gradient
    print(f"no closed form: {built.why_numeric}")
    print(f"numeric path: f(x) = alpha * G(x) + beta * x, G(x) = integral of {g} from 0 to x by quadrature")
    print(f"  f'(x) = alpha * ({g}) + beta  (exact: the backward pass uses it)")
    bound = error_bound(g)
    print(f"  error bound of G against mpmath.quad (relative, absolute below 1; 41 points on [-32, 32]): {bound:.1e}")
    if not args.check:
        return 0 if args.save is None else _refuse_numeric_save()
    failed = _print_checks(numeric_checks(g, bound))
    if args.save:
        return _refuse_numeric_save()
    return 1 if failed else 0


def _refuse_numeric_save() -> int:
    raise ActlabError("--save keeps closed-form derivations only for now; a quadrature activation is built in Python")


def _print_checks(checks: list) -> int:
    """Print each check with PASS/FAIL, its level (proved / holds numerically) and detail; return the failures."""
    if not checks:
        return 0
    print("\nchecks:")
    for check in checks:
        detail = f"  ({check.detail})" if check.detail else ""
        level = f"  [{check.level}]" if check.level else ""
        print(f"  {'PASS' if check.passed else 'FAIL'}  {check.name}{level}{detail}")
    failed = sum(not check.passed for check in checks)
    print(f"{len(checks) - failed}/{len(checks)} checks passed")
    return failed
