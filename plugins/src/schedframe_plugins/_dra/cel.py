"""The DRA CEL environment: one ``device`` variable, Kubernetes quantities and semver.

Upstream ``k8s.io/dynamic-resource-allocation/cel``. Expressions are parsed and evaluated by
``cel-python`` (``celpy``, pure Python, from PyPI); each distinct expression is compiled once
and the program cached (:class:`CELCache`). What celpy lacks is added here as custom
functions, with Kubernetes' semantics:

* ``quantity(s)``, ``isQuantity(s)`` and, on a quantity, ``compareTo``, ``isLessThan``,
  ``isGreaterThan``, ``add``, ``sub``, ``sign``, ``isInteger``, ``asInteger``,
  ``asApproximateFloat`` (Kubernetes' quantity CEL library); quantities also compare with
  ``==``.
* ``semver(s)``, ``isSemver(s)`` and, on a version, ``compareTo``, ``isLessThan``,
  ``isGreaterThan``, ``major``, ``minor``, ``patch`` (Kubernetes' semver library, strict
  semver 2.0.0 parsing).

The ``device`` value has ``driver``, ``attributes`` and ``capacity``; the last two map a
domain to that domain's names. An unqualified attribute or capacity name belongs to the
driver's domain, as upstream. Looking up a domain the device has nothing in gives an empty
map (so ``"x" in device.attributes["other.example.com"]`` is false), and looking up a
missing name inside a domain is a runtime error ``no such key: <name>``, as upstream.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from functools import total_ordering
from typing import Any, Final

import attrs

from schedframe.objects import DeviceAttribute, DeviceCapacity, Quantity, parse_quantity

__all__ = ["CELCache", "CELError", "CompiledExpression", "DeviceView"]

_SEMVER_RE: Final = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?"
)

_MEMBER_RE: Final = re.compile(r"no such member in mapping: '(.*)'")


class CELError(Exception):
    """A CEL compile or runtime error, with upstream's wording of the cause."""


@total_ordering
class _Quantity:
    """A Kubernetes quantity as a CEL value."""

    __slots__ = ("q",)

    def __init__(self, q: Quantity) -> None:
        self.q = q

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Quantity) and self.q.amount == other.q.amount

    def __lt__(self, other: _Quantity) -> bool:
        return self.q.amount < other.q.amount

    def __hash__(self) -> int:
        return hash(self.q.amount)

    def __repr__(self) -> str:
        return f"quantity({str(self.q)!r})"


@total_ordering
class _Semver:
    """A semantic version as a CEL value (precedence as semver 2.0.0)."""

    __slots__ = ("major", "minor", "patch", "pre", "text")

    def __init__(self, text: str) -> None:
        m = _SEMVER_RE.fullmatch(text)
        if m is None:
            raise CELError(f"invalid semver: {text}")
        self.text = text
        self.major, self.minor, self.patch = int(m[1]), int(m[2]), int(m[3])
        self.pre: tuple[str, ...] = tuple(m[4].split(".")) if m[4] else ()

    def _key(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def _cmp(self, other: _Semver) -> int:
        if self._key() != other._key():
            return -1 if self._key() < other._key() else 1
        if self.pre == other.pre:
            return 0
        if not self.pre or not other.pre:
            return 1 if not self.pre else -1
        for a, b in zip(self.pre, other.pre, strict=False):
            if a == b:
                continue
            a_num, b_num = a.isdigit(), b.isdigit()
            if a_num and b_num:
                return -1 if int(a) < int(b) else 1
            if a_num != b_num:
                return -1 if a_num else 1
            return -1 if a < b else 1
        return -1 if len(self.pre) < len(other.pre) else 1

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Semver) and self._cmp(other) == 0

    def __lt__(self, other: _Semver) -> bool:
        return self._cmp(other) < 0

    def __hash__(self) -> int:
        return hash((self._key(), self.pre))


def _celpy() -> Any:
    try:
        import celpy
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise CELError(
            "CEL selectors need the cel-python package (pip install cel-python)"
        ) from exc
    return celpy


def _types() -> Any:
    return _celpy().celtypes


def _to_quantity(value: object) -> _Quantity:
    if isinstance(value, _Quantity):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return _Quantity(parse_quantity(int(value)))
    raise CELError(f"no such overload: {type(value).__name__}")


def _compare(a: object, b: object) -> Any:
    t = _types()
    if isinstance(a, _Quantity) and isinstance(b, _Quantity):
        return t.IntType((a.q.amount > b.q.amount) - (a.q.amount < b.q.amount))
    if isinstance(a, _Semver) and isinstance(b, _Semver):
        return t.IntType(a._cmp(b))
    raise CELError("no such overload: compareTo")


def _quantity_fn(text: object) -> _Quantity:
    try:
        return _Quantity(parse_quantity(str(text)))
    except ValueError as exc:
        raise CELError(f"invalid quantity: {exc}") from exc


def _is_quantity(text: object) -> Any:
    try:
        parse_quantity(str(text))
    except ValueError:
        return _types().BoolType(False)
    return _types().BoolType(True)


def _semver_fn(text: object) -> _Semver:
    return _Semver(str(text))


def _is_semver(text: object) -> Any:
    return _types().BoolType(_SEMVER_RE.fullmatch(str(text)) is not None)


def _functions() -> dict[str, Callable[..., Any]]:
    t = _types()

    def as_integer(q: _Quantity) -> Any:
        amount = q.q.amount
        if amount.denominator != 1 or not -(2**63) <= amount <= 2**63 - 1:
            raise CELError("cannot convert value to integer")
        return t.IntType(int(amount))

    def field(name: str) -> Callable[[_Semver], Any]:
        return lambda v: t.IntType(getattr(v, name))

    return {
        "quantity": _quantity_fn,
        "isQuantity": _is_quantity,
        "semver": _semver_fn,
        "isSemver": _is_semver,
        "compareTo": _compare,
        "isLessThan": lambda a, b: t.BoolType(int(_compare(a, b)) < 0),
        "isGreaterThan": lambda a, b: t.BoolType(int(_compare(a, b)) > 0),
        "add": lambda a, b: _Quantity(a.q + _to_quantity(b).q),
        "sub": lambda a, b: _Quantity(a.q - _to_quantity(b).q),
        "sign": lambda a: t.IntType((a.q.amount > 0) - (a.q.amount < 0)),
        "isInteger": lambda a: t.BoolType(
            a.q.amount.denominator == 1 and -(2**63) <= a.q.amount <= 2**63 - 1
        ),
        "asInteger": as_integer,
        "asApproximateFloat": lambda a: t.DoubleType(float(a.q.amount)),
        "major": field("major"),
        "minor": field("minor"),
        "patch": field("patch"),
    }


def _domain_map() -> type:
    base = _types().MapType

    class _Domains(base):  # type: ignore[misc, valid-type]
        # A domain the device has nothing in reads as an empty map, as upstream.
        def __missing__(self, key: object) -> object:
            return base({})

    return _Domains


@attrs.frozen(kw_only=True)
class DeviceView:
    """What a selector sees of one device."""

    driver: str
    attributes: Mapping[str, DeviceAttribute]
    capacity: Mapping[str, DeviceCapacity]
    #: ``device.allowMultipleAllocations`` (DRAConsumableCapacity).
    allow_multiple_allocations: bool = False


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.rpartition("/")
    return (domain, ident) if sep else (driver, name)


def _attribute_value(a: DeviceAttribute) -> object:
    t = _types()
    if a.int_value is not None:
        return t.IntType(a.int_value)
    if a.bool_value is not None:
        return t.BoolType(a.bool_value)
    if a.string_value is not None:
        return t.StringType(a.string_value)
    if a.version_value is not None:
        return _Semver(a.version_value)
    return None


def _activation(device: DeviceView) -> dict[str, object]:
    t = _types()
    domains = _domain_map()
    attrs_by_domain: dict[str, dict[Any, object]] = {}
    for name, value in device.attributes.items():
        domain, ident = _split(name, device.driver)
        attrs_by_domain.setdefault(domain, {})[t.StringType(ident)] = _attribute_value(value)
    cap_by_domain: dict[str, dict[Any, object]] = {}
    for name, cap in device.capacity.items():
        domain, ident = _split(name, device.driver)
        cap_by_domain.setdefault(domain, {})[t.StringType(ident)] = _Quantity(cap.value)
    return {
        "device": t.MapType(
            {
                t.StringType("driver"): t.StringType(device.driver),
                t.StringType("allowMultipleAllocations"): t.BoolType(
                    device.allow_multiple_allocations
                ),
                t.StringType("attributes"): domains(
                    {t.StringType(d): t.MapType(m) for d, m in attrs_by_domain.items()}
                ),
                t.StringType("capacity"): domains(
                    {t.StringType(d): t.MapType(m) for d, m in cap_by_domain.items()}
                ),
            }
        )
    }


def _runtime_message(exc: BaseException) -> str:
    args = exc.args
    if len(args) >= 3 and args[0] == "no such key" and args[2]:
        return f"no such key: {args[2][0]}"
    if args and isinstance(args[0], str):
        member = _MEMBER_RE.fullmatch(args[0])
        return f"no such key: {member[1]}" if member else args[0]
    return str(exc)


class CompiledExpression:
    """One compiled selector: :meth:`device_matches`, or the compile error."""

    __slots__ = ("error", "expression", "_program", "_results")

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.error: CELError | None = None
        self._program: Any = None
        #: (driver, id(device)) -> (device, result): see :meth:`device_matches_memo`.
        self._results: dict[tuple[str, int], tuple[object, bool]] = {}
        celpy = _celpy()
        try:
            env = celpy.Environment()
            self._program = env.program(env.compile(expression), functions=_functions())
        except CELError as exc:
            self.error = exc
        except Exception as exc:  # noqa: BLE001 - celpy reports syntax errors as various types
            self.error = CELError(f"compilation failed: {str(exc).strip()}")

    def device_matches(self, device: DeviceView) -> bool:
        """Whether ``device`` satisfies the expression.

        Raises:
            CELError: at runtime (a missing key, a non-boolean result ...).
        """
        if self.error is not None:
            raise self.error
        try:
            result = self._program.evaluate(_activation(device))
        except CELError:
            raise
        except Exception as exc:  # noqa: BLE001 - celpy's evaluation errors
            raise CELError(_runtime_message(exc)) from exc
        if isinstance(result, Exception):
            raise CELError(_runtime_message(result))
        if not isinstance(result, _types().BoolType):
            raise CELError(f"CEL result of type {type(result).__name__} should have been a bool")
        return bool(result)

    def device_matches_memo(self, device: object, view: DeviceView) -> bool:
        """:meth:`device_matches` of ``view``, remembered for ``device``.

        ``device`` is the immutable object ``view`` was made from (with ``view.driver``): the
        result depends on nothing else, so each expression evaluates each device once rather
        than once per pod and node (celpy's evaluation is costly). The entry holds ``device``,
        so its ``id`` cannot be reused while remembered; at :data:`_RESULTS_MAX` entries the
        memo starts afresh. Runtime errors are not remembered (raised anew each time).

        Raises:
            CELError: at runtime (a missing key, a non-boolean result ...).
        """
        key = (view.driver, id(device))
        entry = self._results.get(key)
        if entry is not None and entry[0] is device:
            return entry[1]
        result = self.device_matches(view)
        if len(self._results) >= _RESULTS_MAX:
            self._results = {}
        self._results[key] = (device, result)
        return result


#: The most device results one expression remembers (:meth:`CompiledExpression.device_matches_memo`).
_RESULTS_MAX: Final = 65536


class CELCache:
    """Compiled expressions by source text: each expression is compiled once."""

    def __init__(self) -> None:
        self._compiled: dict[str, CompiledExpression] = {}

    def get_or_compile(self, expression: str) -> CompiledExpression:
        """The compiled form of ``expression`` (compiled now if not yet cached)."""
        compiled = self._compiled.get(expression)
        if compiled is None:
            compiled = self._compiled[expression] = CompiledExpression(expression)
        return compiled

    def __len__(self) -> int:
        return len(self._compiled)
