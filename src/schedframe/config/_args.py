"""Generic camelCase <-> attrs conversion for plugin args (``pluginConfig[].args``).

The runtime owns the args classes (they live beside the plugins), so decoding is driven by the
attrs fields and their type annotations alone, with upstream's strict-decoding behaviour:
unknown keys are issues, ints are not bools, ``null`` means "not given".
"""

from __future__ import annotations

import base64
import binascii
import datetime
import enum
import functools
import math
import types
import typing
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeVar, Union, get_args, get_origin

import attrs

from schedframe.config._common import (
    DurationError,
    format_duration,
    key_text,
    parse_duration,
    shown,
)
from schedframe.errors import (
    INVALID,
    REQUIRED,
    UNKNOWN_FIELD,
    UNSUPPORTED,
    ConfigError,
    FieldIssue,
    SchedframeError,
    join_path,
)

__all__ = ["decode_args", "encode_args"]

T = TypeVar("T")

#: Field metadata keys understood by :func:`decode_args` / :func:`encode_args`.
NAME_KEY = "k8s"
DECODE_KEY = "k8s_decode"
ENCODE_KEY = "k8s_encode"

_TYPE_META_KEYS = frozenset({"apiVersion", "kind"})
#: The only ``apiVersion`` plugin args may name (upstream's v1 scheme).
ARGS_API_VERSION = "kubescheduler.config.k8s.io/v1"


class _Failed:
    """Marks a value that could not be decoded (its issue is already recorded)."""


_FAILED = _Failed()
_ABSENT = object()


def _camel(name: str) -> str:
    head, *rest = name.lstrip("_").split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


@attrs.frozen
class _FieldPlan:
    field: attrs.Attribute[object]
    init_name: str
    key: str
    type: object
    decode: Callable[[object], object] | None
    encode: Callable[[object], object] | None


@functools.cache
def _plan(cls: type) -> tuple[_FieldPlan, ...]:
    if not attrs.has(cls):
        raise TypeError(f"{cls!r} is not an attrs class")
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError) as exc:
        raise TypeError(f"cannot resolve the field types of {cls.__qualname__}: {exc}") from exc
    plans = []
    for field in attrs.fields(cls):
        if not field.init:
            continue
        meta = field.metadata
        init_name = field.alias or field.name.lstrip("_")
        plans.append(
            _FieldPlan(
                field=field,
                init_name=init_name,
                key=meta.get(NAME_KEY) or _camel(init_name),
                type=hints.get(field.name, Any),
                decode=meta.get(DECODE_KEY),
                encode=meta.get(ENCODE_KEY),
            )
        )
    return tuple(plans)


def _describe(tp: object) -> str:
    origin = get_origin(tp)
    if tp is bool:
        return "a boolean"
    if tp is int:
        return "an integer"
    if tp is float:
        return "a number"
    if tp is str:
        return "a string"
    if tp is datetime.timedelta:
        return 'a duration string such as "15s"'
    if tp is bytes:
        return "base64-encoded data"
    if origin in (tuple, list) or origin is Sequence:
        return "a list"
    if (isinstance(tp, type) and attrs.has(tp)) or origin in (dict, Mapping) or tp is dict:
        return "an object"
    if origin in (Union, types.UnionType):
        return " or ".join(_describe(m) for m in get_args(tp) if m is not type(None))
    return getattr(tp, "__name__", str(tp))


class _Decoder:
    def __init__(self) -> None:
        self.issues: list[FieldIssue] = []

    def invalid(self, path: str, value: object, detail: str) -> _Failed:
        self.issues.append(FieldIssue(path=path, kind=INVALID, value=shown(value), detail=detail))
        return _FAILED

    def unsupported(self, path: str, value: object, supported: Iterable[object]) -> _Failed:
        listed = ", ".join(str(shown(s)) if not isinstance(s, str) else f'"{s}"' for s in supported)
        self.issues.append(
            FieldIssue(
                path=path,
                kind=UNSUPPORTED,
                value=shown(value),
                detail=f"supported values: {listed}",
            )
        )
        return _FAILED

    def value(self, tp: object, value: object, path: str) -> object:
        origin = get_origin(tp)
        if tp is Any or tp is object:
            return _copy_raw(value)
        if origin in (Union, types.UnionType):
            return self.union(get_args(tp), value, path)
        if value is None:
            return self.invalid(path, value, f"expected {_describe(tp)}")
        if origin is Literal:
            choices = get_args(tp)
            if any(value == c and type(value) is type(c) for c in choices):
                return value
            return self.unsupported(path, value, choices)
        if tp is bool:
            return (
                value
                if isinstance(value, bool)
                else self.invalid(path, value, "expected a boolean")
            )
        if tp is int:
            if isinstance(value, int) and not isinstance(value, bool):
                return value
            return self.invalid(path, value, "expected an integer")
        if tp is float:
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                if math.isfinite(value):
                    return float(value)
                return self.invalid(path, value, "expected a finite number")
            return self.invalid(path, value, "expected a number")
        if tp is str:
            return (
                value if isinstance(value, str) else self.invalid(path, value, "expected a string")
            )
        if tp is datetime.timedelta:
            return self.duration(value, path)
        if tp is bytes:
            return self.base64(value, path)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self.enum(tp, value, path)
        if isinstance(tp, type) and attrs.has(tp):
            return self.attrs_object(tp, value, path, top_level=False)
        if origin is tuple:
            return self.tuple(get_args(tp), value, path)
        if origin in (list, Sequence):
            (item_type,) = get_args(tp) or (Any,)
            items = self.items(item_type, value, path)
            return (
                items if isinstance(items, _Failed) else (list(items) if origin is list else items)
            )
        if origin in (dict, Mapping) or tp is dict:
            key_type, value_type = get_args(tp) or (str, Any)
            return self.mapping(key_type, value_type, value, path)
        raise TypeError(f"decode_args cannot decode a field of type {tp!r} (at {path or '<root>'})")

    def union(self, members: tuple[object, ...], value: object, path: str) -> object:
        if value is None and type(None) in members:
            return None
        candidates = [m for m in members if m is not type(None)]
        if len(candidates) == 1:
            return self.value(candidates[0], value, path)
        for member in candidates:
            trial = _Decoder()
            result = trial.value(member, value, path)
            if not trial.issues:
                return result
        expected = " or ".join(_describe(m) for m in candidates)
        return self.invalid(path, value, f"expected {expected}")

    def duration(self, value: object, path: str) -> object:
        if not isinstance(value, str):
            return self.invalid(path, value, 'expected a duration string such as "15s"')
        try:
            seconds = parse_duration(value)
            delta = datetime.timedelta(seconds=seconds)
            if seconds > 0 and not delta:
                # timedelta counts microseconds: a positive duration below one (Go's "1ns")
                # stays positive rather than becoming 0, which often means "off".
                return datetime.timedelta(microseconds=1)
            return delta
        except DurationError as exc:
            return self.invalid(path, value, exc.reason)
        except OverflowError:
            return self.invalid(path, value, "duration out of range")

    def base64(self, value: object, path: str) -> object:
        if not isinstance(value, str):
            return self.invalid(path, value, "expected base64-encoded data")
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            return self.invalid(path, value, "expected base64-encoded data")

    def enum(self, tp: type[enum.Enum], value: object, path: str) -> object:
        for member in tp:
            if member.value == value and type(member.value) is type(value):
                return member
        return self.unsupported(path, value, [m.value for m in tp])

    def items(self, item_type: object, value: object, path: str) -> tuple[object, ...] | _Failed:
        if not isinstance(value, (list, tuple)):
            return self.invalid(path, value, "expected a list")
        out = [self.value(item_type, item, f"{path}[{i}]") for i, item in enumerate(value)]
        if any(isinstance(item, _Failed) for item in out):
            return _FAILED
        return tuple(out)

    def tuple(self, args: tuple[object, ...], value: object, path: str) -> object:
        if len(args) == 2 and args[1] is Ellipsis:
            return self.items(args[0], value, path)
        if not isinstance(value, (list, tuple)):
            return self.invalid(path, value, "expected a list")
        if len(value) != len(args):
            return self.invalid(path, value, f"expected a list of {len(args)} items")
        out = [
            self.value(t, item, f"{path}[{i}]")
            for i, (t, item) in enumerate(zip(args, value, strict=True))
        ]
        return _FAILED if any(isinstance(v, _Failed) for v in out) else tuple(out)

    def mapping(self, key_type: object, value_type: object, value: object, path: str) -> object:
        if not isinstance(value, Mapping):
            return self.invalid(path, value, "expected an object")
        out: dict[object, object] = {}
        failed = False
        for key, item in value.items():
            entry_path = f"{path}[{key}]"
            decoded_key = self.value(key_type, key, entry_path)
            decoded = self.value(value_type, item, entry_path)
            if isinstance(decoded_key, _Failed) or isinstance(decoded, _Failed):
                failed = True
                continue
            out[decoded_key] = decoded
        return _FAILED if failed else out

    def custom(self, hook: Callable[[object], object], value: object, path: str) -> object:
        try:
            return hook(value)
        except SchedframeError as exc:
            inner = getattr(exc, "issues", None)
            if inner is None:
                return self.invalid(path, value, str(exc))
            self.issues.extend(issue.with_prefix(path) for issue in inner)
            return _FAILED
        except (ValueError, TypeError) as exc:
            return self.invalid(path, value, str(exc))

    def attrs_object(self, cls: type, value: object, path: str, *, top_level: bool) -> object:
        if not isinstance(value, Mapping):
            return self.invalid(path, value, "expected an object")
        plans = _plan(cls)
        known = {plan.key for plan in plans}
        before = len(self.issues)
        for key in value:
            if not isinstance(key, str) or (
                key not in known and not (top_level and key in _TYPE_META_KEYS)
            ):
                self.issues.append(
                    FieldIssue(path=join_path(path, key_text(key)), kind=UNKNOWN_FIELD)
                )
        if top_level:
            self.type_meta(cls, value, path)
        kwargs: dict[str, object] = {}
        for plan in plans:
            field_path = join_path(path, plan.key)
            raw = value.get(plan.key, _ABSENT)
            if raw is _ABSENT or (raw is None and not _accepts_none(plan.type)):
                if plan.field.default is attrs.NOTHING:
                    self.issues.append(FieldIssue(path=field_path, kind=REQUIRED))
                continue
            if plan.decode is not None:
                decoded = self.custom(plan.decode, raw, field_path)
            else:
                decoded = self.value(plan.type, raw, field_path)
            if isinstance(decoded, _Failed):
                continue
            if self.check_field(plan, decoded, raw, field_path):
                kwargs[plan.init_name] = decoded
        if len(self.issues) > before:
            return _FAILED
        try:
            return cls(**kwargs)
        except (ValueError, TypeError) as exc:
            return self.invalid(path, value, str(exc))

    def type_meta(self, cls: type, value: Mapping[object, object], path: str) -> None:
        """``apiVersion`` and ``kind`` of args, when given, must name this args type, as
        upstream's scheme decodes ``pluginConfig[].args`` by them."""
        api_version = value.get("apiVersion")
        if api_version is not None and api_version != ARGS_API_VERSION:
            self.unsupported(join_path(path, "apiVersion"), api_version, [ARGS_API_VERSION])
        kind = value.get("kind")
        if kind is not None and kind != cls.__name__:
            self.unsupported(join_path(path, "kind"), kind, [cls.__name__])

    def check_field(self, plan: _FieldPlan, decoded: object, raw: object, path: str) -> bool:
        """Run one field's converter and validators now, so a failure names that field."""
        field = plan.field
        candidate = decoded
        try:
            converter: Any = field.converter
            if isinstance(converter, attrs.Converter):
                wrapped: Any = converter  # its attributes are untyped in attrs' stubs
                extra: list[object] = []
                if wrapped.takes_self:
                    extra.append(None)
                if wrapped.takes_field:
                    extra.append(field)
                candidate = wrapped.converter(candidate, *extra)
            elif converter is not None:
                candidate = converter(candidate)
            if field.validator is not None:
                field.validator(None, field, candidate)
        except (ValueError, TypeError) as exc:
            self.invalid(path, raw, str(exc))
            return False
        except Exception:
            # A validator that needs the instance itself runs again at construction.
            return True
        return True


def _accepts_none(tp: object) -> bool:
    if tp is Any or tp is object:
        return True
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)


def _copy_raw(value: object) -> object:
    if isinstance(value, Mapping):
        return {k: _copy_raw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_raw(v) for v in value]
    return value


def decode_args(
    args_type: type[T],
    data: Mapping[str, object] | None,
    *,
    path: str,
    source: str | None = None,
) -> T:
    """Decode a plugin's camelCase ``args`` mapping into its attrs args class.

    Each attrs field is read from the camelCase spelling of its name (``ignored_resources`` ->
    ``ignoredResources``) or from ``attrs.field(metadata={"k8s": "name"})``. Supported field
    types: ``bool``, ``int`` (never a bool), ``float`` (ints accepted), ``str``, ``bytes``
    (base64), ``datetime.timedelta`` (a Go duration), ``Literal[...]``, ``enum.Enum``, nested
    attrs classes, ``tuple[X, ...]``, ``list[X]``, ``dict[str, X]``, ``X | None`` and other
    unions, ``object``/``Any`` (kept raw). ``metadata={"k8s_decode": fn}`` decodes a field with
    ``fn(raw)`` instead (its ``ValueError``/``TypeError``, or a :class:`ConfigError`'s issues,
    are reported at the field). ``apiVersion`` and ``kind`` keys at the top are optional; when
    given they must be ``kubescheduler.config.k8s.io/v1`` and the args class's name
    (``NodeAffinityArgs``), as upstream's scheme requires.

    After the object is built, its ``validate()`` method, if any, is called; it returns
    :class:`FieldIssue` objects with paths relative to the args object.

    Args:
        args_type: the attrs args class.
        data: the raw args; ``None`` or ``{}`` gives ``args_type()``.
        path: the field path of ``data``, e.g. ``"profiles[0].pluginConfig[2].args"``; every
            issue is reported under it.
        source: the file the args come from, for the error message.

    Returns:
        The decoded, validated args object.

    Raises:
        ConfigError: every problem found (unknown fields, wrong types, failed validators,
            ``validate()`` issues), each with its full path.
        TypeError: ``args_type`` is not an attrs class or has a field type this cannot decode.
    """
    decoder = _Decoder()
    result = decoder.attrs_object(args_type, {} if data is None else data, path, top_level=True)
    if isinstance(result, _Failed):
        raise ConfigError(decoder.issues, source=source)
    obj = typing.cast(T, result)
    validate = getattr(obj, "validate", None)
    if callable(validate):
        found = validate()
        issues = [issue.with_prefix(path) for issue in (found or ())]
        if issues:
            raise ConfigError(issues, source=source)
    return obj


def _encode(value: object) -> object:
    if attrs.has(type(value)):
        return encode_args(value)
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime.timedelta):
        return format_duration(value.total_seconds())
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, Mapping):
        return {k: _encode(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_encode(v) for v in value]
    return value


def encode_args(obj: object) -> dict[str, object]:
    """Return an attrs args object as its camelCase mapping (the inverse of :func:`decode_args`).

    ``None`` values are left out when the field's default is ``None`` (upstream omits nil
    pointers); ``metadata={"k8s_encode": fn}`` encodes a field with ``fn(value)``.
    """
    out: dict[str, object] = {}
    cls: type = type(obj)
    for plan in _plan(cls):
        value = getattr(obj, plan.field.name)
        if value is None and plan.field.default is None:
            continue
        out[plan.key] = plan.encode(value) if plan.encode is not None else _encode(value)
    return out
