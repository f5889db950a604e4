"""What importing the package costs: the optional parts (names a package exports but loads on
first use, PEP 562 module `__getattr__`), names that moved, how to add a missing extra
(`install_hint`) and the dataclass decorators that compile nothing at import (`value_class`,
`positional_value_class`, `record_class`; the collector's pause is in `clawcell/__init__.py`).

Running a cell needs a fraction of what the packages export: tool authoring, declarations,
model-tool exports, the durable stores and snapshots are used by some processes and not by
others. Their modules load when one of their names is first read, so `import clawcell` and
a process's first cell do not pay for them (the cold start the runtime bench measures).
The value is then bound in the package, so later reads are plain attribute reads.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import inspect
import operator
import reprlib
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterable, Mapping

from ._code_cache import compiled

__all__ = [
    "install_hint",
    "lazy_exports",
    "moved_exports",
    "positional_value_class",
    "record_class",
    "value_class",
]

_Class = typing.TypeVar("_Class", bound=type)
_PARAMS = "__dataclass_params__"  # what `dataclasses` records of a class's decorator


def lazy_exports(package: str, modules: Mapping[str, Iterable[str]]) -> Callable[[str], object]:
    """A `__getattr__` for `package`: each of the names `modules` lists for a submodule
    (its name relative to `package`) imports that submodule when first read, and is bound
    in `package` from then on."""
    owners = {name: module for module, names in modules.items() for name in names}

    def load(name: str) -> object:
        module = owners.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return load


def moved_exports(
    package: str,
    moved: Mapping[str, str],
    fallback: Callable[[str], object] | None = None,
    *,
    advice: Mapping[str, str] | None = None,
) -> Callable[[str], object]:
    """A `__getattr__` for `package` that keeps names which moved elsewhere reachable for one
    release: reading one of `moved`'s names (`{name: "new.module"}`) warns with a
    `DeprecationWarning` that names the new home and returns the value from there. Other names
    go to `fallback` (another `__getattr__`, such as `lazy_exports`'s), else `AttributeError`.
    `advice` says what to use instead of a name whose new home is private, in place of
    "import it from there"."""

    def load(name: str) -> object:
        home = moved.get(name)
        if home is None:
            if fallback is not None:
                return fallback(name)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        warnings.warn(
            f"`{package}.{name}` moved to `{home}.{name}`; "
            f"{(advice or {}).get(name, 'import it from there')} "
            "(the old name goes away in the next release)",
            DeprecationWarning,
            stacklevel=2,
        )
        return getattr(importlib.import_module(home), name)

    return load


def install_hint(extra: str) -> str:
    """The commands that add the extra `extra`: from a built wheel, and in a checkout.

    >>> install_hint("ui")
    "`pip install 'clawcell[ui]'` (in a clawcell checkout: `.venv/bin/pip install -e '.[ui]'`)"
    """
    checkout = f"`.venv/bin/pip install -e '.[{extra}]'`"
    return f"`pip install 'clawcell[{extra}]'` (in a clawcell checkout: {checkout})"


@typing.dataclass_transform(
    kw_only_default=True,
    frozen_default=True,
    field_specifiers=(dataclasses.field, dataclasses.Field),
)
def value_class(cls: _Class) -> _Class:
    """`@dataclass(frozen=True, kw_only=True)` for the package's value objects, compiling no
    source text at import (the standard decorator compiles six methods per frozen class: a
    fifth of a cold start's instructions with the ~60 value classes a first cell imports).

    The standard decorator still collects the fields (and builds the docs, `__match_args__`,
    the field checks), and:

    * `__repr__`, `__eq__` and `__hash__` are closures over the field names with the standard
      ones' results (same text, same field tuples compared and hashed, same field choices);
    * `__setattr__` and `__delattr__` are closures with the standard frozen checks and messages;
    * `__init__` is the standard one's text, compiled the first time the class is instantiated
      or its `__init__` read (`inspect.signature`): most classes a program imports it never
      instantiates.

    A method the class defines is kept as the standard decorator keeps it (an own `__setattr__`
    or `__delattr__` is its `TypeError`); `__dataclass_params__` reads as the standard's. A
    class with a dataclass base, an `InitVar` or no docstring (the decorator writes one from
    the `__init__`) gets the standard `__init__`, `__setattr__` and `__delattr__` at once.
    """
    return _build(cls, frozen=True, kw_only=True)


@typing.dataclass_transform(
    frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field)
)
def positional_value_class(cls: _Class) -> _Class:
    """`@dataclass(frozen=True)` (fields in order, positional or by keyword) built as
    `value_class` builds its classes: no source text compiled at import."""
    return _build(cls, frozen=True, kw_only=False)


@typing.dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record_class(cls: _Class) -> _Class:
    """`@dataclass` (mutable, fields in order) built as `value_class` builds its classes:
    `__repr__` and `__eq__` closures (`__hash__` None, as the standard decorator sets it for
    a mutable class with `__eq__`), the standard `__init__` built at the first instance."""
    return _build(cls, frozen=False, kw_only=False)


def _build(cls: _Class, *, frozen: bool, kw_only: bool) -> _Class:
    """`@dataclass(frozen=frozen, kw_only=kw_only)`'s class at less cost (`value_class`)."""
    body = cls.__dict__
    class_hash = body.get("__hash__", dataclasses.MISSING)
    explicit_hash = not (
        class_hash is dataclasses.MISSING or (class_hash is None and "__eq__" in body)
    )
    if _deferrable(cls):
        for name in ("__setattr__", "__delattr__") if frozen else ():
            if name in body:  # the standard decorator's error for a frozen class
                raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
        dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)
        fields = dataclasses.fields(cls)
        _check_default_order(fields)
        if frozen:
            names = tuple(f.name for f in fields)
            _set_method(cls, "__setattr__", _frozen_setattr(cls, names))
            _set_method(cls, "__delattr__", _frozen_delattr(cls, names))
        if "__init__" not in body:
            deferred = _DeferredInit(cls, frozen=frozen)
            setattr(cls, "__init__", deferred)  # noqa: B010 (a method, replaced)
    else:
        dataclasses.dataclass(cls, frozen=frozen, kw_only=kw_only, repr=False, eq=False)
        fields = dataclasses.fields(cls)
    params: object = copy.copy(getattr(cls, _PARAMS))
    # (what the standard decorator records; the deferred build passed it init/frozen False)
    params.init = params.repr = params.eq = True  # pyright: ignore
    params.frozen = frozen  # pyright: ignore
    setattr(cls, _PARAMS, params)
    if "__repr__" not in body:
        _set_method(cls, "__repr__", _repr_method(tuple(f.name for f in fields if f.repr)))
    if "__eq__" not in body:
        _set_method(cls, "__eq__", _eq_method([f.name for f in fields if f.compare]))
    if explicit_hash:
        pass
    elif frozen:
        hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
        _set_method(cls, "__hash__", _hash_method(_field_tuple(hashed)))
    else:  # mutable with `__eq__`: unhashable, as the standard decorator leaves it
        setattr(cls, "__hash__", None)  # noqa: B010 (a method, removed)
    return cls


def _check_default_order(fields: tuple[dataclasses.Field[object], ...]) -> None:
    """The standard decorator's check of positional parameters, which it makes when it
    builds `__init__` (here at the decoration too, though `__init__` is built later)."""
    seen_default = False
    for f in fields:
        if not f.init or f.kw_only:
            continue
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _deferrable(cls: type) -> bool:
    """Whether `cls` can have its `__init__` built later and closures for the frozen checks:
    no dataclass base (the standard decorator checks a frozen base against the class), no
    `InitVar` or `KW_ONLY` field, and an own docstring (without one the decorator
    writes one from the `__init__`'s signature)."""
    if not cls.__dict__.get("__doc__"):
        return False
    if any(hasattr(base, "__dataclass_fields__") for base in cls.__mro__[1:]):
        return False
    for annotation in inspect.get_annotations(cls).values():
        if isinstance(annotation, str):
            marked = "InitVar" in annotation or "KW_ONLY" in annotation
        else:
            marked = annotation in (dataclasses.KW_ONLY, dataclasses.InitVar) or isinstance(
                annotation, dataclasses.InitVar
            )
        if marked:
            return False
    return True


def _frozen_setattr(cls: type, names: tuple[str, ...]) -> Callable[[object, str, object], None]:
    def setattr_(self: object, name: str, value: object) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)

    return setattr_


def _frozen_delattr(cls: type, names: tuple[str, ...]) -> Callable[[object, str], None]:
    def delattr_(self: object, name: str) -> None:
        if type(self) is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)

    return delattr_


class _DeferredInit:
    """A value class's `__init__` until first read: reading it (to instantiate the class, or
    through the class) builds the standard frozen keyword-only `__init__` for the class's
    fields and puts it in the class in place of this one."""

    __slots__ = ("_frozen", "_owner")

    def __init__(self, owner: type, *, frozen: bool) -> None:
        self._owner = owner
        self._frozen = frozen

    def __get__(self, instance: object, owner: type | None = None) -> Callable[..., None]:
        init = _standard_init(self._owner, frozen=self._frozen)
        if instance is None:
            return init
        return types.MethodType(init, instance)


def _standard_init(cls: type, *, frozen: bool) -> Callable[..., None]:
    """The `__init__` `@dataclass(frozen=frozen)` would have given `cls`, put in the class.

    Its text is the standard decorator's for the shapes `_deferrable` lets through (no
    `InitVar`, no `KW_ONLY`): the parameters in field order, the keyword-only ones after a
    `*`, `_dflt_<name>` for a default, the factory marker for a default factory (shown as
    `<factory>` in the signature), each field assigned through `object.__setattr__` when
    frozen, a field out of `__init__` with a factory set from it, and `__post_init__` called
    last. It is compiled in the class's module, as the standard one is, so its globals,
    `__module__`, annotations and error messages are the same (`tests/test_lazy.py` compares
    them with the standard decorator's on every shape)."""
    present = cls.__dict__.get("__init__")
    if not isinstance(present, _DeferredInit):  # built meanwhile (by another thread)
        return typing.cast(Callable[..., None], present)
    fields = dataclasses.fields(cls)
    self_name = "__dataclass_self__" if any(f.name == "self" for f in fields) else "self"
    names: dict[str, object] = {f"_type_{f.name}": f.type for f in fields}
    names.update(
        MISSING=dataclasses.MISSING,
        _HAS_DEFAULT_FACTORY=_FACTORY,
        __dataclass_builtins_object__=object,
    )
    body: list[str] = []
    positional: list[str] = []
    keyword: list[str] = []
    for f in fields:
        default = f"_dflt_{f.name}"
        value: str | None = None
        if f.default_factory is not dataclasses.MISSING:
            names[default] = f.default_factory
            value = f"{default}() if {f.name} is _HAS_DEFAULT_FACTORY else {f.name}"
            value = value if f.init else f"{default}()"
        elif f.init:
            if f.default is not dataclasses.MISSING:
                names[default] = f.default
            value = f.name
        if value is not None:
            body.append(
                f"__dataclass_builtins_object__.__setattr__({self_name},{f.name!r},{value})"
                if frozen
                else f"{self_name}.{f.name}={value}"
            )
        if f.init:
            if f.default_factory is not dataclasses.MISSING:
                marker = "=_HAS_DEFAULT_FACTORY"
            else:
                marker = "" if f.default is dataclasses.MISSING else f"={default}"
            (keyword if f.kw_only else positional).append(f"{f.name}:_type_{f.name}{marker}")
    if hasattr(cls, "__post_init__"):
        body.append(f"{self_name}.__post_init__()")
    parameters = [self_name, *positional, *(["*", *keyword] if keyword else [])]
    names["_return_type"] = None
    text = (
        f"def __create_fn__({', '.join(names)}):\n"
        f" def __init__({','.join(parameters)})->_return_type:\n"
        + "\n".join(f"  {line}" for line in body or ["pass"])
        + "\n return __init__"
    )
    module = sys.modules.get(cls.__module__)
    built: dict[str, Callable[..., Callable[..., None]]] = {}
    code = compiled(text)  # (kept on disk for the next process: `_code_cache`)
    exec(code, module.__dict__ if module is not None else {}, built)
    init = built["__create_fn__"](**names)
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    setattr(cls, "__init__", init)  # noqa: B010 (a method, replaced)
    return init


class _FactoryMarker:
    """The default of a parameter whose field has a default factory (`<factory>`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY = _FactoryMarker()


def _set_method(cls: type, name: str, method: Callable[..., object]) -> None:
    method.__name__ = name
    method.__qualname__ = f"{cls.__qualname__}.{name}"
    setattr(cls, name, method)


def _field_tuple(names: list[str]) -> Callable[[object], tuple[object, ...]]:
    """The tuple of the fields `names` of an instance, as the generated methods build it."""
    if not names:
        return lambda _instance: ()
    if len(names) == 1:
        (name,) = names
        return lambda instance: (getattr(instance, name),)
    return operator.attrgetter(*names)


def _repr_method(names: tuple[str, ...]) -> Callable[[object], str]:
    def repr_(self: object) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in names)
        return f"{self.__class__.__qualname__}({shown})"

    return reprlib.recursive_repr()(repr_)


def _eq_method(names: list[str]) -> Callable[[object, object], object]:
    if sys.version_info >= (3, 13):
        return _eq_by_field(names)
    key = _field_tuple(names)

    def eq(self: object, other: object) -> object:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    return eq


def _eq_by_field(names: list[str]) -> Callable[[object, object], object]:
    """Python 3.13's generated `__eq__`: the same instance is equal, else the fields compare
    one by one, as `self.a == other.a and self.b == other.b` (no identity shortcut per field,
    so a NaN field is unequal to itself in another instance; the last comparison's result)."""

    def eq(self: object, other: object) -> object:
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        result: object = True
        for name in names:
            result = getattr(self, name) == getattr(other, name)
            if not result:
                return result
        return result

    return eq


def _hash_method(key: Callable[[object], tuple[object, ...]]) -> Callable[[object], int]:
    def hash_(self: object) -> int:
        return hash(key(self))

    return hash_
