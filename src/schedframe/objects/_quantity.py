"""Resource quantities, parsed and printed exactly as apimachinery's ``resource.Quantity``.

Amounts are exact :class:`fractions.Fraction` values; no float is ever involved. The scheduler
counts in integers (milli-CPU, bytes, units), so :func:`resource_amount` turns a quantity into
the integer the plugins add and compare.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Final, TypeAlias

import attrs

from schedframe.objects.validation import is_qualified_name

__all__ = [
    "BINARY_SI",
    "CPU",
    "DECIMAL_EXPONENT",
    "DECIMAL_SI",
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EPHEMERAL_STORAGE",
    "MEMORY",
    "PODS",
    "Quantity",
    "ResourceList",
    "is_attachable_volume_resource_name",
    "is_extended_resource_name",
    "is_hugepage_resource_name",
    "is_native_resource",
    "is_prefixed_native_resource",
    "is_scalar_resource_name",
    "parse_quantity",
    "resource_amount",
    "resource_quantity",
]

#: Resource names the scheduler treats specially (upstream ``v1.ResourceCPU`` ...).
CPU: Final = "cpu"
MEMORY: Final = "memory"
EPHEMERAL_STORAGE: Final = "ephemeral-storage"
PODS: Final = "pods"

#: What a container without a cpu/memory request counts as when spreading load
#: (upstream ``schedutil.DefaultMilliCPURequest`` / ``DefaultMemoryRequest``).
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024

#: The three quantity formats (upstream ``resource.Format``).
DECIMAL_SI: Final = "DecimalSI"
BINARY_SI: Final = "BinarySI"
DECIMAL_EXPONENT: Final = "DecimalExponent"

#: Resource name -> the integer the scheduler counts in (see :func:`resource_amount`).
ResourceList: TypeAlias = dict[str, int]

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_ERR_FORMAT = f"quantities must match the regular expression '{_SPLIT_RE}'"
_ERR_SUFFIX = "unable to parse quantity's suffix"
_ERR_NUMERIC = "unable to parse numeric part of quantity"

_DECIMAL_SUFFIXES: Final = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXPONENT: Final = {exp: s for s, exp in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_POWER: Final = {exp // 10: s for s, exp in _BINARY_SUFFIXES.items()}
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
_DIGITS: Final = frozenset("0123456789")
_INT32_MAX: Final = 2**31 - 1
_INT64_MAX: Final = 2**63 - 1
_NANO: Final = Fraction(1, 10**9)
# Refuse numbers with more than this many integer digits rather than build a huge integer
# (upstream keeps them as arbitrary-precision decimals; nothing schedules on them).
_MAX_DIGITS: Final = 4096


def _ceil_away(value: Fraction) -> int:
    """Round to an integer away from zero, as upstream ``ScaledValue`` does."""
    q, r = divmod(value.numerator, value.denominator)
    if r == 0:
        return q
    # divmod floors: for positives step up, for negatives floor already moved away from zero.
    return q + 1 if value > 0 else q


@attrs.frozen(kw_only=True, order=True)
class Quantity:
    """An exact resource amount and the format it prints in.

    Mirrors apimachinery ``resource.Quantity``: equality, ordering and hashing use the
    amount only (``Cmp``), so ``parse_quantity("1Ki") == parse_quantity("1024")``.

    Attributes:
        amount: the exact value.
        format: ``"DecimalSI"``, ``"BinarySI"`` or ``"DecimalExponent"``; only printing uses it.
    """

    amount: Fraction = attrs.field(converter=Fraction)
    format: str = attrs.field(default=DECIMAL_SI, eq=False, order=False)

    def value(self) -> int:
        """The amount rounded to an integer away from zero (upstream ``Value()``)."""
        return _ceil_away(self.amount)

    def milli_value(self) -> int:
        """``amount * 1000`` rounded away from zero (upstream ``MilliValue()``)."""
        return _ceil_away(self.amount * 1000)

    def is_zero(self) -> bool:
        """Whether the amount is zero (upstream ``IsZero()``)."""
        return self.amount == 0

    def __add__(self, other: Quantity) -> Quantity:
        # Upstream Add: a zero receiver takes the other operand's format.
        fmt = other.format if self.amount == 0 else self.format
        return Quantity(amount=self.amount + other.amount, format=fmt)

    def __sub__(self, other: Quantity) -> Quantity:
        fmt = other.format if self.amount == 0 else self.format
        return Quantity(amount=self.amount - other.amount, format=fmt)

    def __neg__(self) -> Quantity:
        return Quantity(amount=-self.amount, format=self.format)

    def __str__(self) -> str:
        """The canonical string, as upstream ``String()`` computes it for a fresh value.

        The largest suffix that loses no precision is chosen; a BinarySI value below 1024 in
        magnitude, or with a fraction, prints as DecimalSI; a value beyond the largest suffix
        (``E``/``Ei``) or below ``n`` prints in exponent form, so it parses back unchanged.
        """
        amount = self.amount
        if amount == 0:
            return "0"
        if amount.denominator != 1 and (10**9 % amount.denominator) != 0:
            # Not a multiple of 1n: upstream never holds such an amount; round it up first.
            amount = Fraction(_ceil_away(amount * 10**9), 10**9)
        fmt = self.format
        if fmt == BINARY_SI:
            if -1024 < amount < 1024 or amount.denominator != 1:
                fmt = DECIMAL_SI
            else:
                mantissa, power = _remove_factors(amount.numerator, 1024)
                if power == 0:
                    return str(mantissa)
                suffix = _BINARY_BY_POWER.get(power)
                if suffix is not None:
                    return f"{mantissa}{suffix}"
                fmt = DECIMAL_EXPONENT
        elif fmt != DECIMAL_SI:
            fmt = DECIMAL_EXPONENT
        mantissa, exponent = _canonical_decimal(amount)
        if fmt == DECIMAL_SI:
            si = _DECIMAL_BY_EXPONENT.get(exponent)
            if si is not None:
                return f"{mantissa}{si}"
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)

    def __repr__(self) -> str:
        return f"Quantity({str(self)!r})"


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    """Divide ``base`` out of ``value`` while it divides evenly (upstream ``removeInt64Factors``)."""
    negative = value < 0
    magnitude = -value if negative else value
    times = 0
    while magnitude >= base and magnitude % base == 0:
        magnitude //= base
        times += 1
    return (-magnitude if negative else magnitude), times


def _canonical_decimal(amount: Fraction) -> tuple[int, int]:
    """Mantissa and base-10 exponent, exponent a multiple of 3 and as large as exactness allows."""
    den = amount.denominator
    scale = 0
    while den != 1:  # den divides 10**9 here, so this ends within 9 steps
        den = den // _gcd10(den)
        scale += 1
    mantissa = amount.numerator * 10**scale // amount.denominator
    mantissa, times = _remove_factors(mantissa, 10)
    exponent = times - scale
    shift = exponent % 3  # Python's % floors, so this lowers the exponent to a multiple of 3
    return mantissa * 10**shift, exponent - shift


def _gcd10(value: int) -> int:
    # The part of 10 that still divides value (10, 5, 2 or 1).
    if value % 10 == 0:
        return 10
    if value % 5 == 0:
        return 5
    if value % 2 == 0:
        return 2
    return 1


def _split(text: str) -> tuple[bool, str, str, str]:
    """Scan ``[sign] digits [. digits] suffix`` as upstream ``parseQuantityString`` does."""
    positive = True
    pos = 0
    end = len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        return positive, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos != end:
        raise ValueError(_ERR_FORMAT)
    return positive, num, denom, text[suffix_start:]


def _interpret(suffix: str) -> tuple[int, int, str]:
    """Base, exponent and format of a suffix (upstream ``quantitySuffixer.interpret``)."""
    exp = _DECIMAL_SUFFIXES.get(suffix)
    if exp is not None:
        return 10, exp, DECIMAL_SI
    exp = _BINARY_SUFFIXES.get(suffix)
    if exp is not None:
        return 2, exp, BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        body = digits[1:] if digits[0] in "+-" else digits
        if body and body.isascii() and body.isdigit():
            value = int(digits)
            # Upstream keeps the exponent in an int32 and refuses what does not fit.
            if -_INT32_MAX <= value <= _INT32_MAX:
                return 10, value, DECIMAL_EXPONENT
    raise ValueError(_ERR_SUFFIX)


def parse_quantity(value: str | int | float) -> Quantity:
    """Parse a Kubernetes quantity such as ``"100m"``, ``"1.5Gi"``, ``"1e3"`` or ``2``.

    Mirrors apimachinery ``resource.ParseQuantity``: the amount is rounded up (away from zero)
    to a whole number of nano units, a BinarySI amount is capped at ``2**63 - 1`` in magnitude,
    and a BinarySI amount strictly between -1 and 1 switches to DecimalSI. ``int`` and ``float``
    inputs (what YAML gives for ``cpu: 2`` or ``cpu: 0.5``) are read from their shortest
    decimal spelling, as the JSON decoder sees them.

    Raises:
        ValueError: with upstream's message: the ``quantities must match the regular
            expression ...`` text for malformed input, ``unable to parse quantity's suffix``
            for an unknown suffix (``1i``, ``0.1mi``).
    """
    key = (type(value), value)
    cached = _PARSED.get(key)
    if cached is not None:
        return cached
    parsed = _parse_quantity(value)
    if isinstance(value, str) and len(value) > _PARSED_KEY_MAX:
        return parsed
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = parsed
    return parsed


#: Parsed quantities by input (a cluster's nodes and pods repeat a few spellings: decoding a
#: 5,000-node list parsed the same handful 30,000 times). Quantities are immutable.
_PARSED: dict[tuple[type, str | int | float], Quantity] = {}
_PARSED_MAX: Final = 4096
_PARSED_KEY_MAX: Final = 64


def _parse_quantity(value: str | int | float) -> Quantity:
    if isinstance(value, bool):
        raise ValueError(_ERR_FORMAT)
    if isinstance(value, int):
        if value.bit_length() > 10_000:  # beyond what str() converts; no quantity is that big
            raise ValueError(_ERR_NUMERIC)
        text = str(value)
    elif isinstance(value, float):
        text = repr(value)
        if text in ("inf", "-inf", "nan"):
            raise ValueError(_ERR_FORMAT)
    else:
        text = value
    if not text:
        raise ValueError(_ERR_FORMAT)
    if text == "0":
        return Quantity(amount=Fraction(0), format=DECIMAL_SI)
    positive, num, denom, suffix = _split(text)
    base, exponent, fmt = _interpret(suffix)
    digits = (num + denom).lstrip("0")
    if not digits:
        return Quantity(amount=Fraction(0), format=fmt)
    # The amount is int(digits) * 10**-len(denom) * base**exponent.
    if base == 10:
        magnitude = len(digits) - len(denom) + exponent  # amount < 10**magnitude
        if magnitude > _MAX_DIGITS:
            raise ValueError(_ERR_NUMERIC)
        if magnitude <= -9:
            # Smaller than 1n: rounds up to exactly 1n without building 10**-exponent.
            amount = _NANO
        else:
            shift = exponent - len(denom)
            mantissa = int(digits)
            amount = (
                Fraction(mantissa * 10**shift) if shift >= 0 else Fraction(mantissa, 10**-shift)
            )
    elif len(digits) - len(denom) > 20:
        # At least 10**20 units before the suffix: past 2**63 - 1, which caps a BinarySI
        # amount anyway (and never past Python's int-conversion limit).
        amount = Fraction(_INT64_MAX)
    else:
        amount = Fraction(int(digits) * 2**exponent, 10 ** len(denom))
    if amount.denominator != 1 and 10**9 % amount.denominator != 0:
        amount = Fraction(_ceil_away(amount * 10**9), 10**9)
    if fmt == BINARY_SI:
        if amount > _INT64_MAX:
            amount = Fraction(_INT64_MAX)
        if 0 < amount < 1:
            fmt = DECIMAL_SI
    return Quantity(amount=amount if positive else -amount, format=fmt)


def resource_amount(name: str, q: Quantity) -> int:
    """The integer the scheduler counts ``name`` in: milli-units for ``cpu``, units otherwise.

    Mirrors how upstream ``framework.Resource`` reads a resource list: ``MilliValue()`` for
    cpu and ``Value()`` for memory, ephemeral-storage, pods, hugepages and extended resources.
    """
    return q.milli_value() if name == CPU else q.value()


def resource_quantity(name: str, amount: int) -> Quantity:
    """The inverse of :func:`resource_amount`: a quantity that prints the way kubectl would.

    cpu gives DecimalSI milli-units (``"100m"``, ``"2"``); memory, ephemeral-storage and
    hugepages give BinarySI (``"1Gi"``); anything else gives DecimalSI.
    """
    if name == CPU:
        return Quantity(amount=Fraction(amount, 1000), format=DECIMAL_SI)
    binary = name in (MEMORY, EPHEMERAL_STORAGE) or name.startswith(_HUGEPAGES_PREFIX)
    fmt = BINARY_SI if binary and -_INT64_MAX <= amount <= _INT64_MAX else DECIMAL_SI
    return Quantity(amount=Fraction(amount), format=fmt)


_DEFAULT_NAMESPACE_PREFIX: Final = "kubernetes.io/"
_HUGEPAGES_PREFIX: Final = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX: Final = "attachable-volumes-"
_REQUESTS_PREFIX: Final = "requests."


def is_prefixed_native_resource(name: str) -> bool:
    """Whether ``name`` is in the ``kubernetes.io/`` namespace (``IsPrefixedNativeResource``)."""
    return _DEFAULT_NAMESPACE_PREFIX in name


def is_native_resource(name: str) -> bool:
    """Whether ``name`` is unprefixed or in ``kubernetes.io/`` (upstream ``IsNativeResource``)."""
    return "/" not in name or _DEFAULT_NAMESPACE_PREFIX in name


def is_extended_resource_name(name: str) -> bool:
    """Whether ``name`` is an extended resource such as ``nvidia.com/gpu``.

    Mirrors upstream ``IsExtendedResourceName``: not native, not ``requests.``-prefixed, and
    a qualified name once ``requests.`` is put in front of it.
    """
    if is_native_resource(name) or name.startswith(_REQUESTS_PREFIX):
        return False
    return not is_qualified_name(_REQUESTS_PREFIX + name)


def is_hugepage_resource_name(name: str) -> bool:
    """Whether ``name`` starts with ``hugepages-`` (upstream ``IsHugePageResourceName``)."""
    return name.startswith(_HUGEPAGES_PREFIX)


def is_attachable_volume_resource_name(name: str) -> bool:
    """Whether ``name`` starts with ``attachable-volumes-`` (``IsAttachableVolumeResourceName``)."""
    return name.startswith(_ATTACHABLE_VOLUMES_PREFIX)


def is_scalar_resource_name(name: str) -> bool:
    """Whether ``name`` is tracked as a scalar resource (upstream ``IsScalarResourceName``).

    True for extended, hugepage, ``kubernetes.io/``-prefixed and attachable-volume resources.
    """
    return (
        is_extended_resource_name(name)
        or is_hugepage_resource_name(name)
        or is_prefixed_native_resource(name)
        or is_attachable_volume_resource_name(name)
    )
