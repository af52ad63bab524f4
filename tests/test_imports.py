"""The house's layering, read from the source with `ast` (every import, lazy ones included):
no cycles, no arrow from a lower floor to a higher one, minimodel never imports minirag,
minitokenizer imports neither, and the bottom of minirag imports nothing of the model.
"""

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = ("minitokenizer", "minimodel", "minirag")

# minirag's floors, bottom to top (CLAUDE.md, "The data path"): a module may import its own
# floor or a lower one. A key ending in "." is a subpackage.
FLOORS = [
    ["files."],
    ["chunk", "forms"],
    ["embed", "encoders."],
    ["topk"],
    ["store", "bm25"],
    ["tables"],
    ["retrieve", "scale."],
    ["index."],
    ["prompt"],
    ["reader_inputs"],
    ["mistakes", "definitions", "examples", "choices", "verb_groups", "spellings", "table_keys",
     "gap_forms"],
    ["reader", "rerank."],
    ["pipeline"],
    ["training."],
    ["eval."],
    ["cli", "__main__"],
]


def module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """The project modules `path` imports, at any depth of its code."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}
GRAPH = {m: {i for i in imports_of(p) if i in MODULES and i != m} for m, p in MODULES.items()}


def floor(module: str) -> int | None:
    """The floor of a minirag module (None for a package's own __init__ or another package)."""
    rest = module.removeprefix("minirag.")
    if rest == module or rest == "minirag":
        return None
    for n, names in enumerate(FLOORS):
        if any(rest == k or (k.endswith(".") and (rest + ".").startswith(k)) for k in names):
            return n
    raise AssertionError(f"{module} is on no floor: add it to FLOORS and CLAUDE.md")


def test_every_minirag_module_has_a_floor():
    for m in MODULES:
        floor(m)


def test_no_upward_arrows():
    up = [(m, i) for m, deps in GRAPH.items() for i in deps
          if floor(m) is not None and floor(i) is not None and floor(i) > floor(m)]
    assert up == []


def test_no_import_cycles():
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the stack, 2 done
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(GRAPH[m]):
            if state[d] == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif state[d] == 0:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(GRAPH):
        if state[m] == 0:
            visit(m, [m])
    assert cycles == []


def test_packages_stand_on_each_other_in_one_direction():
    below = {"minitokenizer": set(), "minimodel": {"minitokenizer"},
             "minirag": {"minitokenizer", "minimodel"}}
    wrong = [(m, i) for m, deps in GRAPH.items() for i in deps
             if i.split(".")[0] not in below[m.split(".")[0]] | {m.split(".")[0]}]
    assert wrong == []


def test_the_bottom_of_minirag_imports_nothing_of_the_model():
    bottom = [m for m in MODULES if floor(m) is not None and floor(m) <= 1]
    assert {"minirag.files.kb", "minirag.chunk"} <= set(bottom)
    assert [(m, i) for m in bottom for i in GRAPH[m] if i.startswith("minimodel")] == []


def test_no_module_reaches_into_a_private_name_of_another():
    private = []
    for m, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in MODULES:
                private += [(m, f"{node.module}.{a.name}") for a in node.names
                            if a.name.startswith("_") and node.module != m]
    assert private == []
