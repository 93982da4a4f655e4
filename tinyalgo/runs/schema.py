"""Schemas of the files tinyalgo reads back, one per format, checked before a
value is used: an error names the file, the field, what was found and what is
allowed ("run log r/log.json: field run.chars: found -5; allowed: an integer
of at least 0").

A schema is a dict {field: ``Field``}.  Those of saved configurations are
derived from the option declarations that write them (``options_schema``:
type, range and choices of every declared option) and that of a run's state
from ``RunState``'s fields (``dataclass_schema``), so a new option or field is
checked without being listed here.
"""
from __future__ import annotations

import math
import sys
from dataclasses import MISSING, dataclass, fields

from tinyalgo.runs.options import declared, RETIRED


INT64 = 2 ** 63          # every integer a tinyalgo file holds is a 64-bit one


class FileFormatError(ValueError):
    """A file that does not follow its format's schema."""


@dataclass(frozen=True)
class Field:
    """What a field may hold.  ``kind``: "int", "number", "str", "bool",
    "list", "dict", "any"; ``minimum``/``maximum``: bounds of a number;
    ``choices``: the allowed values; ``items``: the Field of every list item
    or dict value; ``schema``: the schema of a nested dict; ``nullable``: null
    allowed; ``required``: the field must be present."""

    kind: str
    minimum: float = None
    maximum: float = None
    choices: tuple = None
    items: Field = None
    schema: dict = None
    nullable: bool = False
    required: bool = True

    def allowed(self) -> str:
        """The allowed values in words."""
        if self.choices is not None:
            text = "one of " + ", ".join(repr(c) for c in self.choices)
        else:
            text = {"int": "an integer", "number": "a finite number", "str": "a string", "bool": "true or false",
                    "list": "a list", "dict": "an object", "any": "any value"}[self.kind]
            if self.minimum is not None and self.maximum is not None:
                text += f" in [{self.minimum:g}, {self.maximum:g}]"
            elif self.minimum is not None:
                text += f" of at least {self.minimum:g}"
            elif self.maximum is not None:
                text += f" of at most {self.maximum:g}"
        return text + (" or null" if self.nullable else "")


def _fits_kind(value, kind: str) -> bool:
    if kind == "any":
        return True
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":                        # an int compares with a float exactly: no overflow
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and (math.isfinite(value) if isinstance(value, float) else abs(value) <= sys.float_info.max))
    return isinstance(value, {"str": str, "list": (list, tuple), "dict": dict}[kind])


def check_value(value, spec: Field, where: str, path: str) -> None:
    """A FileFormatError unless ``value`` fits ``spec`` (``path``: the field's dotted name)."""
    def fail():
        shown = repr(value)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise FileFormatError(f"{where}: field {path}: found {shown}; allowed: {spec.allowed()}")

    if value is None:
        if not spec.nullable:
            fail()
        return
    if not _fits_kind(value, spec.kind) or (spec.choices is not None and value not in spec.choices):
        fail()
    if spec.kind == "int" and not -INT64 <= value < INT64:
        raise FileFormatError(f"{where}: field {path}: found an integer of {abs(value).bit_length()} bits; allowed:"
                              f" {spec.allowed()} below 2^63 in magnitude")
    if spec.kind in ("int", "number") and ((spec.minimum is not None and value < spec.minimum)
                                           or (spec.maximum is not None and value > spec.maximum)):
        fail()
    if spec.kind == "list" and spec.items is not None:
        for i, item in enumerate(value):
            check_value(item, spec.items, where, f"{path}[{i}]")
    if spec.kind == "dict":
        for key in value:
            if not isinstance(key, str):
                raise FileFormatError(f"{where}: field {path}: found the key {key!r}; allowed: string keys")
        if spec.schema is not None:
            check(value, spec.schema, where, path)
        elif spec.items is not None:
            for key, item in value.items():
                check_value(item, spec.items, where, f"{path}.{key}")


def check(data, schema: dict, where: str, path: str = "", extra_fields: bool = False) -> None:
    """A FileFormatError unless the dict ``data`` follows ``schema``: every
    required field present, every field known (unless ``extra_fields``),
    every value of its kind and range.  ``where`` names the file."""
    prefix = f"{path}." if path else ""
    if not isinstance(data, dict):
        raise FileFormatError(f"{where}: {'field ' + path if path else 'the file'}: found {type(data).__name__};"
                              f" allowed: an object")
    for name, spec in schema.items():
        if name not in data:
            if spec.required:
                raise FileFormatError(f"{where}: field {prefix}{name} is missing; allowed: {spec.allowed()}")
            continue
        check_value(data[name], spec, where, prefix + name)
    unknown = sorted(set(data) - set(schema))
    if unknown and not extra_fields:
        raise FileFormatError(f"{where}: field {prefix}{unknown[0]} is not part of this format; the fields are"
                              f" {', '.join(schema)}")


# ------------------------------------------------------------- derived
_KINDS = {bool: "bool", int: "int", float: "number", str: "str", tuple: "list", list: "list", dict: "dict"}


def options_schema(cls) -> dict:
    """The schema of a configuration saved with ``asdict``: every declared
    option of ``cls`` (tinyalgo.runs.options), of its default's kind, in its
    declared range or choices.  Each is optional: a run saved before an
    option existed lacks it (``Options.from_saved`` fills it in); a retired
    option (``RETIRED``) is allowed, of any value."""
    schema = {}
    for name, (default, opt) in declared(cls).items():
        kind = _KINDS.get(type(default), "any")
        number = kind in ("int", "number")
        lo = opt.minimum if number and not callable(opt.minimum) else None
        hi = opt.maximum if number and not callable(opt.maximum) else None
        if kind == "int" and (isinstance(lo, float) or isinstance(hi, float)):
            kind = "number"
        schema[name] = Field(kind, minimum=lo, maximum=hi, choices=tuple(opt.choices) if opt.choices else None,
                             items=Field("int") if isinstance(default, tuple) else None, required=False)
    for name in RETIRED:                        # saved by earlier runs; read back and ignored
        schema.setdefault(name, Field("any", required=False))
    return schema


COUNTS = ("chars", "updates", "seconds", "confirm_streak")       # a run's counters: never negative


def dataclass_schema(cls, counts=COUNTS) -> dict:
    """The schema of a dataclass saved with ``asdict`` (e.g. ``RunState``):
    each field of its annotated kind, null allowed where the default is None,
    optional where it has a default; ``counts`` at least 0."""
    schema = {}
    for f in fields(cls):
        annotation = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "any")
        kind = {"dict": "dict", "int": "int", "float": "number", "bool": "bool", "list": "list",
                "str": "str"}.get(annotation, "any")
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        schema[f.name] = Field(kind, minimum=0 if f.name in counts else None, nullable=f.default is None,
                               required=not has_default)
    return schema
