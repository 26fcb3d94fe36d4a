"""The package's import rule, written once (here) and checked: layers run one way, and there are no cycles.

Why: a newcomer who changes one thing must be able to tell what it can break. Each module belongs to a layer;
a module imports only from its own layer or the ones below. Every import counts, including those inside
functions (a lazy import is still a dependency); only `if TYPE_CHECKING:` imports are left out. There is no
exception list: a new module must find its layer below, or the test names it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "actlab"

# Lowest first. A module is matched by its longest prefix (dotted, relative to `actlab`).
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    (
        "foundation",
        (
            "_version",
            "errors",
            "io",
            "environ",
            "provenance",
            "claim",
            "finding",
            "record",
            "timing",
            "notebooks",
            "sanitize",
            "figure_style",
            "names",
            "spreadsheet",
            "deadline",
        ),
    ),
    ("kernels", ("kernels",)),
    ("symbolic", ("symbolic",)),
    ("nn", ("nn",)),
    ("activations, routing, models", ("activations", "activation_specs", "routing", "models")),
    ("train, data", ("train", "data")),
    ("sweep, stats, registry", ("sweep", "stats", "registry", "registry_history", "measured_on")),
    ("theory", ("theory",)),
    ("studies, bench", ("studies", "bench")),
    ("site", ("site",)),
    ("command line", ("commands", "cli", "__main__", "__init__")),
]


# Pairs of layers that may not meet even though the rule above lets the higher import the lower: (importer prefix,
# imported prefix, why). The site renders pages from what is on disk; running sweeps and ending their processes is
# the command line's (`actlab.commands.site_build`), so a page can never start an experiment.
FORBIDDEN: list[tuple[str, str, str]] = [
    ("site", "sweep", "actlab.site renders only; sweeps run from actlab.commands (site_build)"),
]


def _within(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def forbidden_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of `graph` (module -> modules it imports) that a `FORBIDDEN` pair rules out, with the reason."""
    return [
        f"actlab.{module} imports actlab.{target}: {why}"
        for module, targets in sorted(graph.items())
        for target in sorted(targets)
        for importer, imported, why in FORBIDDEN
        if _within(module, importer) and _within(target, imported)
    ]


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def layer_of(module: str) -> int:
    """The layer index of `module` (dotted, relative to `actlab`), by its longest matching prefix."""
    best, best_len = None, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_len:
                best, best_len = index, len(prefix)
    if best is None:
        raise AssertionError(f"actlab.{module} is in no layer: add it to LAYERS in {Path(__file__).name}")
    return best


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def imports_of(path: Path, modules: set[str]) -> set[str]:
    """The actlab modules `path` imports (relative dotted names), at any depth, outside TYPE_CHECKING blocks.

    `from actlab.x import name` depends on `x.name` where that is a module of `modules`, else on `x` itself.
    """
    found: set[str] = set()

    def target(package: str, name: str) -> str:
        candidate = f"{package}.{name}" if package else name
        return candidate if candidate in modules else (package or "__init__")

    def visit(node: ast.AST) -> None:
        if _type_checking_block(node):
            return
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "actlab" or node.module.startswith("actlab."):
                package = node.module.removeprefix("actlab").removeprefix(".")
                found.update(target(package, alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.removeprefix("actlab.") for a in node.names if a.name.startswith("actlab."))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(path): path for path in PACKAGE.rglob("*.py")}
    names = set(modules)
    return {name: (imports_of(path, names) & names) - {name} for name, path in modules.items()}


def test_every_import_runs_down_the_layers():
    violations = []
    for module, targets in sorted(_graph().items()):
        for target in sorted(targets):
            if layer_of(target) > layer_of(module):
                violations.append(
                    f"actlab.{module} ({LAYERS[layer_of(module)][0]}) imports actlab.{target} "
                    f"({LAYERS[layer_of(target)][0]}, a higher layer)"
                )
    assert not violations, "\n".join(violations)


def test_no_forbidden_pair_meets():
    assert forbidden_imports(_graph()) == []


def test_a_planted_site_to_sweep_import_is_caught(tmp_path):
    planted = tmp_path / "report.py"
    planted.write_text("def build():\n    from actlab.sweep.runner import end_processes_started_since\n")
    modules = {"site", "site.report", "sweep", "sweep.runner", "commands.site_build"}
    graph = {"site.report": imports_of(planted, modules), "commands.site_build": {"sweep.runner", "site.report"}}
    assert forbidden_imports(graph) == [
        "actlab.site.report imports actlab.sweep.runner: actlab.site renders only; sweeps run from actlab.commands "
        "(site_build)"
    ]


def test_no_import_cycles():
    graph = _graph()
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def strongconnect(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = counter[0]
        counter[0] += 1
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in index:
                strongconnect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            strongconnect(node)
    assert not cycles, f"import cycles: {cycles}"


@pytest.mark.parametrize(("module", "layer"), [("kernels.standalone", "kernels"), ("symbolic.eps", "symbolic"),
                                               ("site.report", "site"), ("_version", "foundation")])  # fmt: skip
def test_layer_lookup_takes_the_longest_prefix(module, layer):
    assert LAYERS[layer_of(module)][0] == layer


def test_a_planted_upward_import_and_cycle_are_caught(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from actlab.site import report\n"
                   "def f():\n    from actlab.site.report import build_site\n")  # fmt: skip
    modules = {"site", "site.report", "kernels", "kernels.standalone"}
    assert imports_of(bad, modules) == {"site.report"}  # the lazy import counts, the TYPE_CHECKING one does not
    assert layer_of("site.report") > layer_of("kernels.standalone")
