"""decode_args / encode_args with small args classes shaped like upstream's."""

from __future__ import annotations

import datetime
import enum
from collections.abc import Iterator
from typing import Literal

import attrs
import pytest

from schedframe.config import decode_args, encode_args
from schedframe.errors import INVALID, ConfigError, FieldIssue

PATH = "profiles[0].pluginConfig[2].args"


@attrs.frozen(kw_only=True)
class ResourceSpec:
    name: str
    weight: int = 1


@attrs.frozen(kw_only=True)
class UtilizationShapePoint:
    utilization: int
    score: int


@attrs.frozen(kw_only=True)
class RequestedToCapacityRatioParam:
    shape: tuple[UtilizationShapePoint, ...] = ()


StrategyType = Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"]


@attrs.frozen(kw_only=True)
class ScoringStrategy:
    type: StrategyType = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = (ResourceSpec(name="cpu"), ResourceSpec(name="memory"))
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None


@attrs.frozen(kw_only=True)
class FitArgs:
    """Like NodeResourcesFitArgs, with a validate() reporting relative paths."""

    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = attrs.field(factory=ScoringStrategy)

    def validate(self) -> Iterator[FieldIssue]:
        for index, resource in enumerate(self.scoring_strategy.resources):
            if not 1 <= resource.weight <= 100:
                yield FieldIssue(
                    path=f"scoringStrategy.resources[{index}].weight",
                    kind=INVALID,
                    value=resource.weight,
                    detail=f"resource weight of {resource.name} should be in the range [1, 100]",
                )


class Mode(enum.Enum):
    SYSTEM = "System"
    LIST = "List"


def _positive_seconds(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError("must be a positive number of seconds")
    return value


@attrs.frozen(kw_only=True)
class GpuArgs:
    """Every supported field kind, with validators and a renamed field."""

    max_gpus_in_use: int = attrs.field(default=4, validator=attrs.validators.ge(1))
    ratio: float = 0.5
    enable_https: bool = attrs.field(default=False, metadata={"k8s": "enableHTTPS"})
    labels: dict[str, str] = attrs.field(factory=dict)
    limits: dict[str, int] = attrs.field(factory=dict)
    timeout: datetime.timedelta = datetime.timedelta(seconds=10)
    note: str | None = None
    fallback: int | None = 3
    mode: Mode = Mode.SYSTEM
    size: int | str = 1
    pair: tuple[int, str] = (0, "")
    names: list[str] = attrs.field(factory=list)
    blob: bytes = b""
    extra: object = None
    bind_seconds: int = attrs.field(default=600, metadata={"k8s_decode": _positive_seconds})


@attrs.frozen(kw_only=True)
class RequiredArgs:
    name: str
    count: int = attrs.field(converter=int, default=1)


@attrs.frozen(kw_only=True)
class Window:
    low: int = 0
    high: int = attrs.field(default=10)

    @high.validator
    def _check(self, attribute: attrs.Attribute[int], value: int) -> None:
        if value < self.low:
            raise ValueError("high must not be below low")


def _error(cls: type, data: object, source: str | None = None) -> str:
    with pytest.raises(ConfigError) as info:
        decode_args(cls, data, path=PATH, source=source)  # type: ignore[arg-type]
    return str(info.value)


# --- success ------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [None, {}])
def test_no_args_give_the_defaults(data: dict[str, object] | None) -> None:
    assert decode_args(FitArgs, data, path=PATH) == FitArgs()
    assert decode_args(GpuArgs, data, path=PATH) == GpuArgs()


def test_nested_args_decode() -> None:
    args = decode_args(
        FitArgs,
        {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "FitArgs",  # the args class's name, as upstream's kinds are
            "ignoredResources": ["example.com/a"],
            "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "intel.com/foo", "weight": 3}, {"name": "cpu"}],
                "requestedToCapacityRatio": {
                    "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                },
            },
        },
        path=PATH,
    )
    assert args == FitArgs(
        ignored_resources=("example.com/a",),
        scoring_strategy=ScoringStrategy(
            type="RequestedToCapacityRatio",
            resources=(ResourceSpec(name="intel.com/foo", weight=3), ResourceSpec(name="cpu")),
            requested_to_capacity_ratio=RequestedToCapacityRatioParam(
                shape=(
                    UtilizationShapePoint(utilization=0, score=0),
                    UtilizationShapePoint(utilization=100, score=10),
                )
            ),
        ),
    )


def test_every_field_kind_decodes() -> None:
    args = decode_args(
        GpuArgs,
        {
            "maxGpusInUse": 2,
            "ratio": 1,
            "enableHTTPS": True,
            "labels": {"a": "b"},
            "limits": {"gpu": 4},
            "timeout": "1m30s",
            "note": "hi",
            "fallback": None,
            "mode": "List",
            "size": "big",
            "pair": [1, "x"],
            "names": ["n"],
            "blob": "aGk=",
            "extra": {"free": [1, 2]},
            "bindSeconds": 30,
        },
        path=PATH,
    )
    assert args == GpuArgs(
        max_gpus_in_use=2,
        ratio=1.0,
        enable_https=True,
        labels={"a": "b"},
        limits={"gpu": 4},
        timeout=datetime.timedelta(seconds=90),
        note="hi",
        fallback=None,
        mode=Mode.LIST,
        size="big",
        pair=(1, "x"),
        names=["n"],
        blob=b"hi",
        extra={"free": [1, 2]},
        bind_seconds=30,
    )
    assert isinstance(args.ratio, float)


def test_absent_optional_keeps_its_default_but_null_clears_it() -> None:
    assert decode_args(GpuArgs, {}, path=PATH).fallback == 3
    assert decode_args(GpuArgs, {"fallback": None}, path=PATH).fallback is None


def test_null_for_a_plain_field_means_not_given() -> None:
    assert decode_args(GpuArgs, {"maxGpusInUse": None}, path=PATH).max_gpus_in_use == 4


def test_converters_run() -> None:
    assert decode_args(RequiredArgs, {"name": "a", "count": 2}, path=PATH).count == 2


def test_encode_is_the_inverse_of_decode() -> None:
    args = GpuArgs(
        max_gpus_in_use=2,
        labels={"a": "b"},
        timeout=datetime.timedelta(milliseconds=1500),
        mode=Mode.LIST,
        pair=(1, "x"),
        blob=b"\x00\x01",
    )
    encoded = encode_args(args)
    assert encoded["enableHTTPS"] is False
    assert encoded["timeout"] == "1.5s"
    assert encoded["mode"] == "List"
    assert "note" not in encoded  # None with a None default is left out, as upstream omits nil
    assert encoded["fallback"] == 3
    assert decode_args(GpuArgs, encoded, path=PATH) == args
    fit = FitArgs(ignored_resource_groups=("example.com",))
    assert encode_args(fit) == {
        "ignoredResources": [],
        "ignoredResourceGroups": ["example.com"],
        "scoringStrategy": {
            "type": "LeastAllocated",
            "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        },
    }
    assert decode_args(FitArgs, encode_args(fit), path=PATH) == fit


# --- errors, each with its full path ------------------------------------------------------------

ERRORS = [
    pytest.param(
        FitArgs,
        {"ignoredResource": ["a"]},
        f"{PATH}.ignoredResource: Unknown field",
        id="unknown-field",
    ),
    pytest.param(
        FitArgs,
        {"scoringStrategy": {"kind": "x", "resources": [{"name": "cpu", "wieght": 1}]}},
        f"{PATH}.scoringStrategy.kind: Unknown field\n"
        f"{PATH}.scoringStrategy.resources[0].wieght: Unknown field",
        id="kind-is-only-ignored-at-the-top",
    ),
    pytest.param(
        FitArgs,
        {"scoringStrategy": {"type": "Foo"}},
        f'{PATH}.scoringStrategy.type: Unsupported value: "Foo": supported values: '
        '"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"',
        id="literal-unsupported",
    ),
    pytest.param(
        FitArgs,
        {
            "scoringStrategy": {
                "resources": [{"name": "cpu", "weight": 0}, {"name": "m", "weight": 101}]
            }
        },
        f"{PATH}.scoringStrategy.resources[0].weight: Invalid value: 0: "
        "resource weight of cpu should be in the range [1, 100]\n"
        f"{PATH}.scoringStrategy.resources[1].weight: Invalid value: 101: "
        "resource weight of m should be in the range [1, 100]",
        id="validate-method-issues",
    ),
    pytest.param(
        FitArgs,
        {"scoringStrategy": {"resources": [{"weight": 2}]}},
        f"{PATH}.scoringStrategy.resources[0].name: Required value",
        id="nested-required-field",
    ),
    pytest.param(
        FitArgs,
        {
            "scoringStrategy": {
                "requestedToCapacityRatio": {"shape": [{"utilization": "x", "score": 1}]}
            }
        },
        f'{PATH}.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: "x": '
        "expected an integer",
        id="deep-wrong-type",
    ),
    pytest.param(
        FitArgs,
        {"ignoredResources": "a"},
        f'{PATH}.ignoredResources: Invalid value: "a": expected a list',
        id="string-for-tuple",
    ),
    pytest.param(
        FitArgs,
        {"ignoredResources": ["a", 2, None]},
        f"{PATH}.ignoredResources[1]: Invalid value: 2: expected a string\n"
        f"{PATH}.ignoredResources[2]: Invalid value: null: expected a string",
        id="bad-tuple-items",
    ),
    pytest.param(
        FitArgs,
        [1],
        f"{PATH}: Invalid value: [1]: expected an object",
        id="args-not-an-object",
    ),
    pytest.param(
        GpuArgs,
        {"maxGpusInUse": 0},
        f"{PATH}.maxGpusInUse: Invalid value: 0: 'max_gpus_in_use' must be >= 1: 0",
        id="attrs-validator",
    ),
    pytest.param(
        GpuArgs,
        {"maxGpusInUse": True},
        f"{PATH}.maxGpusInUse: Invalid value: true: expected an integer",
        id="bool-is-not-an-int",
    ),
    pytest.param(
        GpuArgs,
        {"maxGpusInUse": 2.0},
        f"{PATH}.maxGpusInUse: Invalid value: 2.0: expected an integer",
        id="float-is-not-an-int",
    ),
    pytest.param(
        GpuArgs,
        {"ratio": False},
        f"{PATH}.ratio: Invalid value: false: expected a number",
        id="bool-is-not-a-float",
    ),
    pytest.param(
        GpuArgs,
        {"ratio": float("inf")},
        f"{PATH}.ratio: Invalid value: inf: expected a finite number",
        id="infinite-float",
    ),
    pytest.param(
        GpuArgs,
        {"enable_https": True, "enableHttps": True},
        f"{PATH}.enable_https: Unknown field\n{PATH}.enableHttps: Unknown field",
        id="renamed-field-only-by-its-k8s-name",
    ),
    pytest.param(
        GpuArgs,
        {"labels": {"a": 1, "b": "ok"}, "limits": {"gpu": "four"}},
        f"{PATH}.labels[a]: Invalid value: 1: expected a string\n"
        f'{PATH}.limits[gpu]: Invalid value: "four": expected an integer',
        id="map-values",
    ),
    pytest.param(
        GpuArgs,
        {"timeout": "10"},
        f'{PATH}.timeout: Invalid value: "10": missing unit in duration',
        id="duration",
    ),
    pytest.param(
        GpuArgs,
        {"mode": "Custom"},
        f'{PATH}.mode: Unsupported value: "Custom": supported values: "System", "List"',
        id="enum-unsupported",
    ),
    pytest.param(
        GpuArgs,
        {"size": 1.5},
        f"{PATH}.size: Invalid value: 1.5: expected an integer or a string",
        id="union-none-fits",
    ),
    pytest.param(
        GpuArgs,
        {"pair": [1]},
        f"{PATH}.pair: Invalid value: [1]: expected a list of 2 items",
        id="fixed-tuple-length",
    ),
    pytest.param(
        GpuArgs,
        {"blob": "%%"},
        f'{PATH}.blob: Invalid value: "%%": expected base64-encoded data',
        id="bytes-not-base64",
    ),
    pytest.param(
        GpuArgs,
        {"bindSeconds": -1},
        f"{PATH}.bindSeconds: Invalid value: -1: must be a positive number of seconds",
        id="custom-decode-hook",
    ),
    pytest.param(
        RequiredArgs,
        {},
        f"{PATH}.name: Required value",
        id="required-field",
    ),
    pytest.param(
        RequiredArgs,
        {"name": "a", "count": "many"},
        f'{PATH}.count: Invalid value: "many": expected an integer',
        id="type-checked-before-converter",
    ),
    pytest.param(
        Window,
        {"low": 5, "high": 1},
        f'{PATH}: Invalid value: {{"low":5,"high":1}}: high must not be below low',
        id="validator-needing-the-instance-reports-at-the-object",
    ),
    pytest.param(
        GpuArgs,
        {"maxGpusInUse": 0, "ratio": "x", "nope": 1},
        f"{PATH}.nope: Unknown field\n"
        f"{PATH}.maxGpusInUse: Invalid value: 0: 'max_gpus_in_use' must be >= 1: 0\n"
        f'{PATH}.ratio: Invalid value: "x": expected a number',
        id="all-issues-together",
    ),
]


@pytest.mark.parametrize(("cls", "data", "message"), ERRORS)
def test_decode_errors(cls: type, data: object, message: str) -> None:
    assert _error(cls, data) == message


def test_errors_name_the_source() -> None:
    assert _error(GpuArgs, {"nope": 1}, source="sched.yaml") == (
        f"sched.yaml: {PATH}.nope: Unknown field"
    )


def test_a_decode_hook_may_raise_config_error_with_relative_paths() -> None:
    def decode_affinity(value: object) -> object:
        raise ConfigError([FieldIssue(path="terms[0].key", kind=INVALID, value="", detail="bad")])

    @attrs.frozen(kw_only=True)
    class AffinityArgs:
        added_affinity: object = attrs.field(default=None, metadata={"k8s_decode": decode_affinity})

    assert _error(AffinityArgs, {"addedAffinity": {"terms": []}}) == (
        f'{PATH}.addedAffinity.terms[0].key: Invalid value: "": bad'
    )


def test_non_attrs_class_is_a_programming_error() -> None:
    with pytest.raises(TypeError):
        decode_args(dict, {}, path=PATH)


def test_unsupported_field_type_is_a_programming_error() -> None:
    @attrs.frozen
    class Odd:
        values: set[int] = attrs.field(factory=set)

    with pytest.raises(TypeError, match="cannot decode a field of type"):
        decode_args(Odd, {"values": [1]}, path=PATH)


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (
            {"apiVersion": "v1"},
            'p.args.apiVersion: Unsupported value: "v1": supported values: '
            '"kubescheduler.config.k8s.io/v1"',
        ),
        (
            {"kind": "NodeAffinityArgs"},
            'p.args.kind: Unsupported value: "NodeAffinityArgs": supported values: "FitArgs"',
        ),
        ({"kind": 3}, 'p.args.kind: Unsupported value: 3: supported values: "FitArgs"'),
    ],
)
def test_args_type_meta_must_name_the_args_type(meta: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        decode_args(FitArgs, meta, path="p.args")
    assert str(info.value) == message
