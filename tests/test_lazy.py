"""Names a package loads on first use (`clawcell._lazy`), and what `import clawcell` leaves out."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import os
import re
import subprocess
import sys
import types
import typing
from collections.abc import Callable
from pathlib import Path

import pytest

from clawcell import _lazy  # pyright: ignore[reportPrivateUsage]
from clawcell._lazy import _code_cache  # pyright: ignore[reportPrivateUsage]

LAZY_MODULES = [
    "clawcell.catalog._typescript._api_files",
    "clawcell.catalog._typescript._declarations",
    "clawcell.catalog._define",
    "clawcell.catalog._hooks",
    "clawcell.catalog._model_tools",
    "clawcell.catalog._tool_search",
    "clawcell.catalog._typescript._quick_index",
    "clawcell.catalog._typescript._tool_dts",
    "clawcell.envelope._descriptor",
    "clawcell.runtime._parser",
    "clawcell._source._tokenizer",  # only for a source that says `import` or `require`
    "clawcell.runtime._wasm._snapshot",
    "clawcell.runtime._v8",
    "clawcell.runtime._v8._process",
    "clawcell.store._sqlite._store",
    "clawcell.store._postgres._store",
    "jsonschema_rs",
    "sqlite3",
    # `shutil` (with `bz2` and `lzma`) and `tempfile`: only writing the compiled engine's
    # cache, probing bubblewrap and finding libc off Linux need them.
    "shutil",
    "tempfile",
    "bz2",
    "lzma",
    # `secrets` (with `random`, which seeds a generator at import), `hmac` and `uuid`: the
    # process's state key is `os.urandom`, a record is sealed or checked only when parked or
    # saved, and run, approval and owner ids come from `clawcell._random`.
    "secrets",
    "random",
    "hmac",
    "uuid",
    # wasmtime-py: clawcell binds the C API of the library it ships itself (`runtime/_wasm/
    # _capi.py`); the package's `__init__` and its ~770 generated prototypes never load.
    "wasmtime",
    "wasmtime._bindings",
    "wasmtime._ffi",
    # `pathlib` (with `urllib.parse` and `ipaddress`): the paths a first cell reads (the
    # compiled engine, the guest's image, the library, `controller.js`) are `os.path` strings.
    "pathlib",
    "urllib.parse",
    "ipaddress",
    # A durable store's runs and sealed records (stop 49).
    "clawcell._runs._durable",
    "clawcell._runs._sealed",
    # Transcripts, their search and documents of the in-memory store, and the retention of a
    # final value cut to fit (stop 49).
    "clawcell.store._documents",
    "clawcell.store._memory._search",
    "clawcell.envelope._retention",
    # The reactor's load-time patch (`_turn`), when the compiled engine is not cached, and a
    # tool's contracts, when the catalog has a tool (stop 49).
    "clawcell.runtime._wasm._turn",
    "clawcell.catalog._contracts",
    "clawcell.envelope._untrusted",  # only a network-derived run's envelope is wrapped
    # A tool's hints and output variants (with the package `catalog._typescript`), a durable
    # run's lease keeper and an agent's turn rows: lazy exports (stop 49).
    "clawcell.catalog._typescript",
    "clawcell.catalog._typescript._hints",
    "clawcell.catalog._discriminator",
    "clawcell.catalog._json",
    "clawcell.store._keeper",
    "clawcell.store._turns",
    # Transcript search's types, a person's answer to an approval, and the sandboxes' helpers
    # (bubblewrap, the parent-death signal): lazy exports (stop 49).
    "clawcell.store._search",
    "clawcell.approvals._answer",
    "clawcell.runtime._bwrap",
    "clawcell.runtime._parent_death",
]
"""Modules a cell that returns a small value never uses (the cold-start bench's cell)."""

_FIRST_CELL = """
import asyncio, json, sys
import clawcell
async def main():
    async with clawcell.CodeMode() as mode:
        assert (await mode.exec("return 1"))["value"] == 1
asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def test_a_name_loads_its_module_when_first_read_and_is_bound_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    package = types.ModuleType("fake_package")
    monkeypatch.setitem(sys.modules, "fake_package", package)
    loaded: list[str] = []

    def import_module(name: str) -> types.ModuleType:
        loaded.append(name)
        module = types.ModuleType(name)
        module.value = 42  # type: ignore[attr-defined]
        return module

    monkeypatch.setattr(_lazy.importlib, "import_module", import_module)
    load = _lazy.lazy_exports("fake_package", {"_values": ["value"]})
    assert loaded == []
    assert load("value") == 42
    assert loaded == ["fake_package._values"]
    assert package.value == 42  # type: ignore[attr-defined]


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    load = _lazy.lazy_exports("clawcell.catalog", {})
    message = "module 'clawcell.catalog' has no attribute 'nothing'"
    with pytest.raises(AttributeError, match=re.escape(message)):
        load("nothing")


def test_lazily_exported_names_are_the_real_ones() -> None:
    import clawcell.catalog
    import clawcell.envelope
    import clawcell.runtime
    from clawcell.catalog import _define, _hooks, _model_tools  # pyright: ignore[reportPrivateUsage]
    from clawcell.envelope import _descriptor  # pyright: ignore[reportPrivateUsage]
    from clawcell.runtime import _parser  # pyright: ignore[reportPrivateUsage]

    assert clawcell.catalog.tool is _define.tool
    assert clawcell.catalog.to_openai is _model_tools.to_openai
    assert clawcell.catalog.HookDecision is _hooks.HookDecision
    assert clawcell.envelope.describe is _descriptor.describe
    assert clawcell.runtime.parse_failure is _parser.parse_failure
    from clawcell.runtime._v8 import _executor as _v8  # pyright: ignore[reportPrivateUsage]

    assert clawcell.runtime.V8Executor is _v8.V8Executor


def test_a_first_cell_in_a_new_process_loads_none_of_the_lazy_modules() -> None:
    from clawcell.runtime._wasm._engine import compiled_reactor  # pyright: ignore[reportPrivateUsage]

    compiled_reactor()  # the engine's cache is written (a start that compiles writes it)
    done = subprocess.run(
        [sys.executable, "-c", _FIRST_CELL], capture_output=True, text=True, check=True
    )
    loaded = set(json.loads(done.stdout))
    assert "clawcell.catalog._catalog" in loaded  # the listing is real
    assert sorted(loaded & set(LAZY_MODULES)) == []


_FIRST_CELL_COST = """
import asyncio, json, sys
compiled = {"import": 0, "run": 0}
phase = ["before"]
def count(event, arguments):
    if event == "compile" and phase[0] in compiled and isinstance(arguments[0], (str, bytes)):
        text = arguments[0] if isinstance(arguments[0], str) else arguments[0].decode()
        if "__create_fn__" in text:  # a method the standard dataclass decorator builds
            compiled[phase[0]] += 1
sys.addaudithook(count)
phase[0] = "import"
import clawcell
phase[0] = "run"
async def main():
    async with clawcell.CodeMode() as mode:
        assert (await mode.exec("return 1"))["value"] == 1
asyncio.run(main())
phase[0] = "after"
ours = sorted(name for name in sys.modules if name.split(".")[0] == "clawcell")
print(json.dumps([compiled, ours]))
"""

FIRST_CELL_DATACLASS_TEXTS = {"import": 8, "run": 17}
"""Methods compiled from source by the dataclass machinery in the first cell of a machine's
first process (192 before `value_class` deferred `__init__` and made `__setattr__` and
`__delattr__` closures). One text moved from the run to the import when the shared empty
`ToolPolicy` became a module constant (`approvals/_gate.py`): its `__init__` is compiled when
that constant is made."""

LATER_FIRST_CELL_DATACLASS_TEXTS = {"import": 3, "run": 0}
"""The same in every later process: `value_class`'s `__init__` texts are read compiled from the
cache file the first process wrote (`clawcell._lazy._code_cache`, "Cold start, fifth pass"); the
three left are `PendingRequest`'s, a slotted class that keeps the standard decorator."""

FIRST_CELL_PACKAGE_MODULES = 99
"""The package's modules a first cell loads (docs/benchmarks.md, "Cold start, fourth pass"):
104, `_cell/_segments.py` and `runtime/_crossing.py`, which every cell's turns run through;
then (fifth pass) `_lazy/_code_cache.py` in, which saves compiling twenty texts, and
`_source/_tokenizer.py` out (`return 1` names neither `import` nor `require`); then
`catalog/_tool_call.py` (a tool call's approval and waiver, split from `_catalog.py`) and
`runtime/_doorbell.py` (the guest threads' wake-ups, split from `_worker.py`), concepts of
their own split out of modules a first cell already loads; then (sixth pass, our own wasmtime
bindings) `runtime/_wasm/_capi.py`, `_handles.py`, `_externs.py` and `_host_funcs.py` in, in
place of wasmtime-py's 26 modules (which `LAZY_MODULES` now keeps out); then (review47)
`runtime/_wasm/_library.py`, finding the library and its version, split from `_capi.py` when
the version checks grew it past the module size budget; then (calls47) `_cell/_call_task.py`,
a tool call's task that takes its first step when it is made (every cell's `_pending` imports
it); then (stop 48) `runtime/_first_segment.py`, a cell's first segment begun on the loop
thread, and `runtime/_controller.py`, loading `controller.js`, split from `_guest.py` (which
the first segment grew past the module size budget), and (review48) `runtime/_wasm/_stacks.py`,
the stacks call futures run on, which clawcell maps so that an idle guest gives their deep
pages back; then (import49) `_runs/_durable.py` and `_runs/_sealed.py` out, imported where a
durable store needs them, and `store/_documents.py`,
`store/_memory/_search.py` and `envelope/_retention.py` out, imported by the methods that
keep a transcript or a document, search them, or retain a value cut to fit; then
`runtime/_wasm/_turn.py` (imported by the reactor's patch, which a cached engine skips) and
`catalog/_contracts.py` (imported when a catalog derives a tool's contract) out, and
`envelope/_untrusted.py` (a lazy export, loaded by a network-derived run's envelope) out,
then the tools' hints (`catalog/_typescript/_hints.py`, its package and `catalog/_json.py`),
output variants (`catalog/_discriminator.py`), `store/_keeper.py` and `store/_turns.py`
out, lazy exports of their packages, and `store/_search.py`, `approvals/_answer.py`,
`runtime/_bwrap.py` and `runtime/_parent_death.py` out, lazy exports too."""


def test_a_first_cell_compiles_and_loads_no_more_than_it_did() -> None:
    """A new value class on a first cell's path compiles nothing at import, and three texts
    when first instantiated; a class built with `@dataclass` compiles up to six at import.
    If this fails because a module or class was added on purpose, raise the figures here
    and say why in the commit; if a module became lazy, lower them."""
    from clawcell.runtime._wasm._engine import compiled_reactor  # pyright: ignore[reportPrivateUsage]

    compiled_reactor()
    command = [sys.executable, "-c", _FIRST_CELL_COST]
    environment = dict(os.environ)
    environment.pop("CLAWCELL_NO_MODULE_CACHE", None)
    for pins in (FIRST_CELL_DATACLASS_TEXTS, LATER_FIRST_CELL_DATACLASS_TEXTS):
        done = subprocess.run(command, capture_output=True, text=True, check=True, env=environment)
        compiled, modules = json.loads(done.stdout)
        assert compiled["import"] <= pins["import"], compiled
        assert compiled["run"] <= pins["run"], compiled
        assert len(modules) <= FIRST_CELL_PACKAGE_MODULES, modules


# `value_class`: the standard frozen keyword-only dataclass's behaviour, at less cost.


def _shapes(decorate: Callable[[type], type]) -> dict[str, type]:
    """The same class bodies built by `decorate`: every field option the decorators read."""

    class Empty:
        """No fields."""

    class One:
        """One field."""

        name: str

    class Fields:
        """Defaults, a factory, fields kept out of repr, compare and hash, a class variable."""

        name: str
        size: float = 1.0
        tags: list[str] = dataclasses.field(default_factory=list[str], hash=False)
        note: str = dataclasses.field(default="", repr=False)
        seen: int = dataclasses.field(default=0, compare=False)
        kind: typing.ClassVar[str] = "fields"

    class OwnEq:  # noqa: PLW1641 (the decorators give it one)
        """Defines `__eq__` (Python then sets `__hash__` to None in the body)."""

        name: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, OwnEq)

    class OwnHashAndRepr:
        """Defines `__hash__` and `__repr__`: both are kept."""

        name: str

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    class Later:
        """`__post_init__` and an `InitVar`."""

        name: str
        scale: dataclasses.InitVar[int] = 1

        def __post_init__(self, scale: int) -> None:
            object.__setattr__(self, "name", self.name * scale)

    class Odd:
        """A field named `self`, fields out of `__init__` (a default, a factory)."""

        self: int
        kept: int = dataclasses.field(default=5, init=False)
        made: list[int] = dataclasses.field(default_factory=list[int], init=False, hash=False)

    built = {
        name: decorate(cls)
        for name, cls in [
            ("Empty", Empty),
            ("One", One),
            ("Fields", Fields),
            ("OwnEq", OwnEq),
            ("OwnHashAndRepr", OwnHashAndRepr),
            ("Later", Later),
            ("Odd", Odd),
        ]
    }

    class Child(built["Fields"]):  # type: ignore[misc, valid-type]
        """A subclass adding a field."""

        extra: int = 0

    built["Child"] = decorate(Child)
    return built


def _standard(cls: type) -> type:
    return typing.cast(type, dataclasses.dataclass(cls, frozen=True, kw_only=True))


_DECORATORS: dict[str, tuple[Callable[[type], type], Callable[[type], type]]] = {
    "value_class": (_lazy.value_class, _standard),
    "positional_value_class": (
        _lazy.positional_value_class,
        lambda cls: typing.cast(type, dataclasses.dataclass(cls, frozen=True)),
    ),
    "record_class": (_lazy.record_class, lambda cls: typing.cast(type, dataclasses.dataclass(cls))),
}
"""Each of `_lazy`'s decorators and the standard decorator it stands for."""


def _outcome(change: Callable[[], object], instance: object) -> object:
    """What a change does: its error's text, or the instance's attributes after it."""
    try:
        change()
    except (dataclasses.FrozenInstanceError, AttributeError, TypeError) as error:
        return f"{type(error).__name__}: {error}"
    return None if instance is None else sorted(vars(instance).items(), key=repr)


_ARGUMENTS: dict[str, list[dict[str, object]]] = {
    "Empty": [{}],
    "One": [{"name": "a"}, {"name": "b"}, {"name": float("nan")}],
    "Fields": [
        {"name": "a"},
        {"name": "a", "tags": ["x"], "note": "hidden", "seen": 3},
        {"name": "a", "size": 2.0},
    ],
    "OwnEq": [{"name": "a"}, {"name": "b"}],
    "OwnHashAndRepr": [{"name": "a"}],
    "Later": [{"name": "ab"}, {"name": "ab", "scale": 2}],
    "Odd": [{"self": 1}, {"self": 2}],
    "Child": [{"name": "a"}, {"name": "a", "extra": 1}],
}


def _behaviour(cls: type, arguments: list[dict[str, object]]) -> list[object]:
    """What a program can observe of `cls` and its instances, class names aside."""
    signature = str(inspect.signature(cls))  # (read before any instance: `__init__` deferred)
    instances = [cls(**kwargs) for kwargs in arguments]
    seen: list[object] = [
        signature,
        cls.__doc__,
        cls.__match_args__,  # type: ignore[attr-defined]
        [(f.name, f.repr, f.compare, f.hash, f.kw_only) for f in dataclasses.fields(cls)],
        {
            name: getattr(cls.__dataclass_params__, name)  # type: ignore[attr-defined]
            for name in ("init", "repr", "eq", "order", "unsafe_hash", "frozen")
        },
        [
            getattr(cls.__dict__.get(name), "__qualname__", None)
            for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__")
        ],
        cls.__hash__ is None,
    ]
    for first in instances:
        seen.append(repr(first))
        seen.append(dataclasses.asdict(first))
        seen.append(hash(first) if cls.__hash__ is not None else None)
        seen.append([first == second for second in instances])
        seen.append([first != second for second in instances])
        seen.append(first == object())
        seen.append(dataclasses.replace(first) == first)
        seen.append(copy.copy(first) == first)
        seen.append(copy.deepcopy(first) == first)  # (`__reduce_ex__`, as pickle)
        changed = copy.copy(first)  # (a mutable one changes: the others stay to compare)
        for change in (
            lambda changed=changed: setattr(changed, "name", "changed"),
            lambda changed=changed: delattr(changed, "other"),
            lambda changed=changed: delattr(changed, "name"),
        ):
            seen.append(_outcome(change, changed))

    class Sub(cls):  # type: ignore[misc, valid-type]  # (a plain subclass of `cls`)
        pass

    sub = Sub(**arguments[0])
    seen.append(_outcome(lambda: setattr(sub, "name", "b"), sub))
    seen.append(_outcome(lambda: setattr(sub, "other", 1), sub))
    seen.append(repr(sub))
    return seen


@pytest.mark.parametrize("decorator", sorted(_DECORATORS))
@pytest.mark.parametrize("name", sorted(_ARGUMENTS))
def test_a_value_class_behaves_as_the_standard_dataclass_it_stands_for(
    name: str, decorator: str
) -> None:
    decorate, standard_decorate = _DECORATORS[decorator]
    ours = _shapes(decorate)[name]
    standard = _shapes(standard_decorate)[name]
    assert _behaviour(ours, _ARGUMENTS[name]) == _behaviour(standard, _ARGUMENTS[name])
    ours_positional = _outcome(lambda: ours("a"), None)  # an error, or built positionally
    assert ours_positional == _outcome(lambda: standard("a"), None)
    fresh_ours, fresh_standard = _shapes(decorate)[name], _shapes(standard_decorate)[name]
    assert _outcome(lambda: fresh_ours("a"), None) == ours_positional  # (as the first call)
    assert _outcome(lambda: fresh_standard("a"), None) == ours_positional


def test_a_value_class_repr_of_itself_is_cut_as_the_standard_one() -> None:
    def build(decorate: Callable[[type], type]) -> str:
        class Node:
            """Holds a list that may hold the node."""

            items: list[object]

        node = decorate(Node)(items=[])
        node.items.append(node)
        return repr(node)

    ours = build(_lazy.value_class)
    assert ours == build(_standard)
    assert ours.endswith(".Node(items=[...])")


def test_a_value_class_compiles_no_text_until_it_is_first_instantiated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The standard decorator compiles six texts per class; `value_class` none for a class with
    a docstring, no dataclass base and no `InitVar`, until its first instance (then one, the
    `__init__`, unless a process compiled the same text before: `clawcell._lazy._code_cache`, off
    here), and three for the others (`Later`, `Child`)."""
    monkeypatch.setenv("CLAWCELL_NO_MODULE_CACHE", "1")
    _code_cache._known.cache_clear()  # pyright: ignore[reportPrivateUsage]
    compiled: list[str | bytes] = []

    def count(event: str, arguments: tuple[object, ...]) -> None:
        if event == "compile" and isinstance(arguments[0], str | bytes) and compiling:
            compiled.append(arguments[0])

    compiling = False
    sys.addaudithook(count)  # (a hook cannot be removed; it is idle outside this test)
    compiling = True
    ours = _shapes(_lazy.value_class)
    built = len(compiled)
    compiled.clear()
    for _ in range(2):
        ours["One"](name="a")
        ours["Fields"](name="a")
    instantiated = len(compiled)
    compiled.clear()
    _shapes(_standard)
    standard = len(compiled)
    compiling = False
    assert (built, instantiated, standard) == (3 * 2, 1 * 2, 6 * 8 - 1)  # (an own `__hash__`)


def test_a_positional_field_without_default_after_one_with_is_the_standard_error() -> None:
    errors: list[str] = []
    for decorate in (_lazy.positional_value_class, _lazy.record_class, dataclasses.dataclass):

        class Disordered:
            """`late` has no default but follows `early`, which has one."""

            early: int = 0
            late: int

        with pytest.raises(TypeError) as raised:
            decorate(Disordered)
        errors.append(str(raised.value))
    assert errors == ["non-default argument 'late' follows default argument"] * 3


def test_a_value_class_defining_a_frozen_method_is_the_standard_error() -> None:
    for decorate in (_lazy.value_class, _standard):

        class Own:
            """Defines `__setattr__`."""

            name: str

            def __setattr__(self, name: str, value: object) -> None:
                pass

        with pytest.raises(
            TypeError, match=r"^Cannot overwrite attribute __setattr__ in class Own$"
        ):
            decorate(Own)


def test_a_value_class_init_is_built_once_and_then_is_a_plain_function() -> None:
    @_lazy.value_class
    class Point:
        """Two coordinates."""

        x: int
        y: int = 0

    assert not isinstance(Point.__dict__["__init__"], types.FunctionType)  # deferred
    init = Point.__init__  # read through the class: built now
    assert isinstance(init, types.FunctionType)
    assert Point.__dict__["__init__"] is init
    assert init.__qualname__ == f"{Point.__qualname__}.__init__"
    assert init.__module__ == __name__
    assert Point(x=1) == Point(x=1, y=0)


def test_the_package_builds_its_value_classes_with_value_class() -> None:
    """A frozen keyword-only dataclass costs the cold start twice what `value_class` does."""
    standard = "@dataclass(frozen=True, kw_only=True)"
    package = Path(_lazy.__file__).parents[1]
    here = Path(_lazy.__file__)  # (it names the decorator it stands for)
    sources = package.rglob("*.py")
    found = [str(path) for path in sources if path != here and standard in path.read_text("utf-8")]
    assert here in set(package.rglob("*.py"))
    assert found == []


# The package's import runs without automatic collections and leaves the collector as the
# importer had it (`clawcell/__init__.py`).

_IMPORT_SETTINGS = """
import gc, json, sys
gc.set_threshold(1234, 5, 6)
if sys.argv[1] == "disabled":
    gc.disable()
if sys.argv[2] == "failing":
    sys.modules["clawcell.store"] = None  # `from .store import ...` raises ImportError
enabled_before = gc.isenabled()
try:
    import clawcell
except ImportError:
    pass
print(json.dumps([enabled_before, gc.isenabled(), gc.get_threshold()]))
"""


@pytest.mark.parametrize("collector", ["enabled", "disabled"])
@pytest.mark.parametrize("import_", ["succeeding", "failing"])
def test_importing_the_package_leaves_the_collector_as_the_importer_set_it(
    collector: str, import_: str
) -> None:
    command = [sys.executable, "-c", _IMPORT_SETTINGS, collector, import_]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    enabled = collector == "enabled"
    assert json.loads(done.stdout) == [enabled, enabled, [1234, 5, 6]]


_IMPORT_COLLECTIONS = """
import gc, json
import asyncio, dataclasses  # (the standard modules a program has imported before: not ours)
seen = []
def started(phase, info):
    if phase == "start":
        seen.append(info["generation"])
gc.callbacks.append(started)
import clawcell
print(json.dumps(seen))
"""


def test_importing_the_package_collects_nothing() -> None:
    """Without the pause, `import clawcell` ran about forty collections, some of the middle
    generation; with it, one, when the collector was back on (a middle one of the ~20,000
    objects the import made); now the import's objects join the oldest generation unwalked."""
    command = [sys.executable, "-c", _IMPORT_COLLECTIONS]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


_IMPORT_GENERATIONS = """
import gc, json, sys, weakref
import asyncio
class Node:
    pass
def cycle():
    node = Node()
    node.self = node
    return weakref.ref(node)
if sys.argv[1] == "frozen":
    gc.freeze()  # the program's objects so far (asyncio's among them)
before = cycle()  # garbage in a cycle, made before the import
frozen_before = gc.get_freeze_count()
import clawcell
after = cycle()
counts = gc.get_count()
frozen_after = gc.get_freeze_count()
gc.collect()
print(json.dumps({
    "frozen": [frozen_before, frozen_after, gc.get_freeze_count()],
    "young_after_import": counts[0],
    "collected": [before() is None, after() is None],
    "threshold": gc.get_threshold(),
}))
"""


@pytest.mark.parametrize("program", ["frozen", "not_frozen"])
def test_the_import_leaves_no_object_frozen_and_garbage_collectable(program: str) -> None:
    """The import moves what is tracked to the oldest generation (`gc.freeze` then
    `gc.unfreeze`): a cycle made before the import or after it is still freed by a
    collection, nothing stays frozen, and a program's own frozen objects stay frozen (the
    move is skipped then, and the import's objects are walked as before)."""
    command = [sys.executable, "-c", _IMPORT_GENERATIONS, program]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    seen = json.loads(done.stdout)
    assert seen["collected"] == [True, True]
    assert seen["threshold"] == list(__import__("gc").get_threshold())
    if program == "frozen":
        before, after, collected = seen["frozen"]
        # (frozen objects the import freed leave the count: a few module attributes rebound)
        assert before - 100 < after <= before  # none unfrozen, none of the import's frozen
        assert collected == after
    else:
        assert seen["frozen"] == [0, 0, 0]
        assert seen["young_after_import"] < 100  # the import's objects are not young
