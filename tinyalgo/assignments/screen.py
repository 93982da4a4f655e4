"""Screening a solution body before it runs: what a body may name.

A student's body (the code that replaces a stub) is read, never trusted.
Before the grader runs it, ``screen`` walks its syntax tree and refuses, with
the line, every construct that could reach past the function it writes:

* names: a body may use its own locals and arguments, the names its module
  defines or imports from numpy, math and tinyalgo, and a fixed list of
  harmless builtins (``ALLOWED_BUILTINS``); ``exec``, ``open``,
  ``getattr``, ``globals``, ``__import__`` and the like are refused;
* imports: only ``numpy`` and ``math``; a module object (``bptt``, ``np``
  as a value) is never a value of its own;
* dunder attributes and names (``x.__class__``, ``__builtins__``) and the
  attributes that walk frames and code (``gi_frame``, ``f_globals``, ...);
* stores into anything but a local (``np.isclose = ...``, ``global``,
  ``nonlocal``) and a module used as a value (``m = np``);
* numpy's file and foreign-memory functions (``np.load``, ``np.ctypeslib``,
  ``x.tofile``...) and its private or non-array submodules;
* what the assignment replaces (``Assignment.forbidden``): numerical
  gradients, the package's other copies of the same computation, a sibling
  function that gives the answer.  Everything imported from
  ``tinyalgo.fast``, ``tinyalgo.gradcheck`` and ``tinyalgo.assignments`` is
  off limits in every body.

Legitimate numerical code never needs what is refused; the grading sandbox
(``sandbox.py``) still runs the body as if this screen had missed something.
"""
from __future__ import annotations

import ast
import builtins
import math
import types

import numpy as np

ALLOWED_BUILTINS = frozenset("""
abs all any bool complex dict divmod enumerate filter float frozenset int isinstance issubclass iter len list
map max min next pow print range repr reversed round set slice sorted str sum tuple zip hasattr callable
ArithmeticError AssertionError Exception IndexError KeyError LookupError NotImplementedError RuntimeError
StopIteration TypeError ValueError ZeroDivisionError FloatingPointError OverflowError
True False None NotImplemented Ellipsis
""".split())
ALLOWED_MODULES = {"numpy": np, "math": math}
OFF_LIMITS_MODULES = ("tinyalgo.fast", "tinyalgo.gradcheck", "tinyalgo.assignments")
FRAME_ATTRIBUTES = frozenset("""gi_frame gi_code gi_yieldfrom cr_frame cr_code cr_await ag_frame ag_code f_back
f_globals f_locals f_builtins f_code f_trace tb_frame tb_next func_globals func_code im_func im_self mro""".split())
NUMPY_REFUSED = frozenset("""load save savez savez_compressed loadtxt savetxt genfromtxt fromfile tofile memmap
fromregex DataSource ctypeslib ctypes dump dumps f2py distutils testing lib show_config show_runtime get_include
set_printoptions seterr seterrcall setbufsize""".split())
NUMPY_SUBMODULES = frozenset({"linalg", "random", "fft", "polynomial", "ma", "emath", "exceptions", "dtypes"})


def _is_dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")


def _off_limits_module(module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in OFF_LIMITS_MODULES)


def module_names(tree: ast.Module) -> dict:
    """{name: where it comes from} for the names a module binds at its top
    level: "def"/"class"/"value" for its own, "import:<module>" for an
    imported module, "from:<module>" for a name imported from a module."""
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names[node.name] = "def"
        elif isinstance(node, ast.ClassDef):
            names[node.name] = "class"
        elif isinstance(node, ast.Import):
            for a in node.names:
                names[a.asname or a.name.split(".")[0]] = f"import:{a.name if a.asname else a.name.split('.')[0]}"
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = f"from:{'.' * node.level}{node.module or ''}.{a.name}"
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names[n.id] = "value"
    return names


def _bound_names(fn: ast.AST) -> set:
    """Every name bound anywhere inside ``fn`` (arguments, assignments, loop and
    comprehension targets, ``with``/``except`` names, nested defs)."""
    bound = set()
    for n in ast.walk(fn):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            bound.add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name.split(".")[0]) for a in n.names)
    return bound


def _base(node):
    """The name at the root of ``a.b[i].c`` ("a"), or None when the root is no name."""
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _chain(node):
    """For ``a.b.c``: ("a", ["b", "c"]); for anything not rooted at a name: (None, [...])."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    return (node.id if isinstance(node, ast.Name) else None), attrs[::-1]


class _Screen(ast.NodeVisitor):
    def __init__(self, module: dict, args: set, locals_: set, forbidden: set, what: str, modules: set):
        self.module, self.locals, self.forbidden, self.what = module, locals_ | args, forbidden, what
        self.modules = modules
        self.problems = []
        self.parents = {}

    def refuse(self, node, message):
        self.problems.append((getattr(node, "lineno", 1), message))

    def generic_visit(self, node):
        for child in ast.iter_child_nodes(node):
            self.parents[child] = node
        super().generic_visit(node)

    # -- statements
    def visit_Global(self, node):
        self.refuse(node, "'global' changes the module's names: a solution keeps to its own locals")

    def visit_Nonlocal(self, node):
        self.refuse(node, "'nonlocal' is not needed in a solution")

    def visit_Import(self, node):
        for a in node.names:
            self._import(node, a.name)
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        if node.level:
            self.refuse(node, "a relative import; import numpy or math only")
        else:
            self._import(node, node.module or "")
            for a in node.names:
                if a.name in self.forbidden or a.name == "*":
                    self.refuse(node, f"imports {a.name!r}, which {self.what} may not use")
        self.generic_visit(node)

    def _import(self, node, module):
        if module in ("numpy", "math", "numpy.linalg"):
            return
        self.refuse(node, f"imports {module!r}; a solution may import numpy and math only (its module's own"
                          " imports are there already)")

    def visit_ExceptHandler(self, node):
        if node.type is None or (isinstance(node.type, ast.Name) and node.type.id == "BaseException"):
            self.refuse(node, "a bare 'except:' (or 'except BaseException') would swallow the grader's time limit;"
                              " catch the exceptions you expect")
        self.generic_visit(node)

    def visit_FunctionDef(self, node):
        if _is_dunder(node.name):
            self.refuse(node, f"defines {node.name}: special methods are not part of a solution")
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        self.refuse(node, "defines a class: a solution is the body of a function, with functions and values")
        self.generic_visit(node)

    # -- expressions
    def visit_Constant(self, node):
        if isinstance(node.value, str) and "__" in node.value:
            self.refuse(node, "a string naming a dunder ('__...'): not part of a solution")

    def visit_Name(self, node):
        name = node.id
        if _is_dunder(name):
            self.refuse(node, f"uses {name}")
        elif name in self.forbidden:
            self.refuse(node, f"calls or names {name!r}, which {self.what} may not use: write the computation")
        elif name in self.locals:
            pass
        elif name in self.module:
            self._module_name(node, name)
        elif name not in ALLOWED_BUILTINS:
            kind = "the builtin" if hasattr(builtins, name) else "the name"
            self.refuse(node, f"uses {kind} {name!r}, which a solution may not use")
        self.generic_visit(node)

    def _module_name(self, node, name):
        origin = self.module[name]
        source = origin.split(":", 1)[1] if ":" in origin else ""
        if _off_limits_module(source):
            self.refuse(node, f"uses {name!r} from {source}, which no solution may use")
            return
        if (origin.startswith("import:") and source.split(".")[0] not in ALLOWED_MODULES) or \
                (origin.startswith("from:") and source in self.modules):
            self.refuse(node, f"uses the module {name!r} ({source}); a solution calls functions, not modules")
            return
        parent = self.parents.get(node)                 # a module (np, math) is only the root of an attribute
        if origin.startswith("import:") and not (isinstance(parent, ast.Attribute) and parent.value is node):
            self.refuse(node, f"uses the module {name!r} as a value; call its functions (e.g. {name}.zeros(...))")

    def visit_Attribute(self, node):
        attr = node.attr
        if _is_dunder(attr):
            self.refuse(node, f"uses the attribute {attr}")
        elif attr in FRAME_ATTRIBUTES:
            self.refuse(node, f"uses the attribute {attr!r}, which reaches the interpreter's frames")
        elif attr in self.forbidden:
            self.refuse(node, f"calls or names {attr!r}, which {self.what} may not use: write the computation")
        elif attr in ("tofile", "dump", "dumps", "ctypes"):
            self.refuse(node, f"uses the array method {attr!r}, which writes files or reaches memory")
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _base(node) not in self.locals:
            self.refuse(node, f"assigns to {ast.unparse(node)}, which the function does not own")
        self._numpy_chain(node)
        self.generic_visit(node)

    def _numpy_chain(self, node):
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            return                                          # checked from the outermost attribute
        root, attrs = _chain(node)
        if root is None or root in self.locals or root not in self.module:
            return
        origin = self.module[root]
        if not origin.startswith("import:"):
            return
        module = ALLOWED_MODULES.get(origin.split(":", 1)[1].split(".")[0])
        if module is None:
            return
        value = module
        for i, attr in enumerate(attrs):
            if attr.startswith("_") or attr in NUMPY_REFUSED:
                self.refuse(node, f"uses {root}.{'.'.join(attrs[:i + 1])}, which a solution may not use")
                return
            value = getattr(value, attr, None)
            if isinstance(value, types.ModuleType) and attr not in NUMPY_SUBMODULES:
                self.refuse(node, f"uses the module {root}.{'.'.join(attrs[:i + 1])}")
                return
        if isinstance(value, types.ModuleType) and not (isinstance(parent, ast.Attribute) and parent.value is node):
            self.refuse(node, f"uses the module {root}.{'.'.join(attrs)} as a value")

    def visit_Subscript(self, node):
        if isinstance(node.ctx, (ast.Store, ast.Del)) and _base(node) not in self.locals:
            self.refuse(node, f"assigns into {ast.unparse(node.value)}, which the function does not own")
        self.generic_visit(node)


def wrap(body: str, indent: int) -> str:
    """The body (lines indented by at least ``indent`` spaces) as a function of its own, line 2 onwards."""
    lines = [line[indent:] if line.strip() else "" for line in body.splitlines()]
    return "def _solution():\n" + "\n".join("    " + line if line else "" for line in lines) + "\n    pass\n"


def screen(body: str, indent: int, function: ast.FunctionDef, module_tree: ast.Module, forbidden=(),
           what: str = "this assignment", modules=frozenset()) -> list:
    """[(line within ``body``, 1-based; message)] of everything the body may not do.
    ``function``: the handed-out function (its arguments are locals);
    ``module_tree``: its module (the names the body may use); ``modules``: the
    dotted names of the package's modules (a name imported from one of them
    that is itself a module is refused)."""
    tree = ast.parse(wrap(body, indent))
    fn = tree.body[0]
    given = _bound_names(function)              # its arguments, and the names its checks before the stub bind
    s = _Screen(module_names(module_tree), given, _bound_names(fn), set(forbidden), what, set(modules))
    s.visit(fn)
    return sorted({(line - 1, message) for line, message in s.problems})
