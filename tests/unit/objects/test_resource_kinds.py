"""resource.k8s.io/v1 kinds: decoding, upstream validation texts, and the round trip."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from schedframe.errors import ManifestError
from schedframe.objects import (
    DeviceClass,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    from_dict,
    parse_quantity,
    to_dict,
)

CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu.example.com"},
    "spec": {
        "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}],
        "extendedResourceName": "example.com/gpu",
    },
}
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "node-1-gpu"},
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "node-1",
        "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}],
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "a100"},
                    "index": {"int": 0},
                    "driverVersion": {"version": "1.2.3"},
                    "mig": {"bool": False},
                },
                "capacity": {"memory": {"value": "80Gi"}},
                "consumesCounters": [
                    {"counterSet": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}
                ],
                "taints": [{"key": "broken", "effect": "NoSchedule"}],
            }
        ],
    },
}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "ns"},
    "spec": {
        "devices": {
            "requests": [
                {"name": "a", "exactly": {"deviceClassName": "gpu.example.com", "count": 2}},
                {
                    "name": "b",
                    "firstAvailable": [
                        {"name": "big", "deviceClassName": "gpu.example.com"},
                        {
                            "name": "all",
                            "deviceClassName": "gpu.example.com",
                            "allocationMode": "All",
                        },
                    ],
                },
            ],
            "constraints": [
                {"requests": ["a", "b/big"], "matchAttribute": "gpu.example.com/model"}
            ],
        }
    },
    "status": {
        "allocation": {
            "devices": {
                "results": [
                    {"request": "a", "driver": "gpu.example.com", "pool": "node-1", "device": "g"}
                ]
            },
            "nodeSelector": {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}
                ]
            },
        },
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}],
    },
}
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "t", "namespace": "ns"},
    "spec": {
        "metadata": {"labels": {"a": "b"}},
        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "x"}}]}},
    },
}


@pytest.mark.parametrize("manifest", [CLASS, SLICE, CLAIM, TEMPLATE], ids=lambda m: m["kind"])
def test_round_trip(manifest: dict[str, object]) -> None:
    obj = from_dict(manifest)
    assert from_dict(to_dict(obj)) == obj


def test_fields_are_decoded() -> None:
    dc = from_dict(CLASS)
    assert isinstance(dc, DeviceClass)
    assert dc.extended_resource_name == "example.com/gpu"
    rs = from_dict(SLICE)
    assert isinstance(rs, ResourceSlice)
    dev = rs.devices[0]
    assert dev.attributes["model"].value == "a100"
    assert dev.attributes["index"].value == 0
    assert dev.capacity["memory"].value == parse_quantity("80Gi")
    assert rs.shared_counters[0].counters["memory"].value == parse_quantity("80Gi")
    claim = from_dict(CLAIM)
    assert isinstance(claim, ResourceClaim)
    assert claim.requests[0].exactly is not None and claim.requests[0].exactly.count == 2
    assert claim.requests[1].first_available[1].allocation_mode == "All"
    assert claim.allocation is not None and claim.is_reserved_for("u")
    template = from_dict(TEMPLATE)
    assert isinstance(template, ResourceClaimTemplate)
    assert template.claim.requests[0].exactly is not None
    assert template.claim.requests[0].exactly.count == 1


def _spec(obj: Mapping[str, object], **spec: object) -> dict[str, object]:
    base = obj["spec"]
    assert isinstance(base, dict)
    return {**obj, "spec": {**base, **spec}}


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        pytest.param(
            _spec(SLICE, nodeName=None),
            "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
            "`perDeviceNodeSelection` is required",
            id="no node selection",
        ),
        pytest.param(
            _spec(SLICE, allNodes=True),
            'spec: Invalid value: "": exactly one of `nodeName`, `nodeSelector`, `allNodes`, '
            "`perDeviceNodeSelection` is required, but multiple fields are set",
            id="two node selections",
        ),
        pytest.param(
            _spec(SLICE, devices=[{"name": "d", "attributes": {"x": {"int": 1, "bool": True}}}]),
            'spec.devices[0].attributes[x]: Invalid value: "": exactly one value must be specified',
            id="two attribute values",
        ),
        pytest.param(
            {**CLAIM, "spec": {"devices": {"requests": [{"name": "a"}]}}, "status": {}},
            'spec.devices.requests[0]: Invalid value: "": exactly one of `exactly` or '
            "`firstAvailable` is required",
            id="request without kind",
        ),
        pytest.param(
            {
                **CLAIM,
                "spec": {
                    "devices": {
                        "requests": [{"name": "a", "exactly": {"deviceClassName": "x", "count": 0}}]
                    }
                },
                "status": {},
            },
            "spec.devices.requests[0].exactly.count: Invalid value: 0: must be greater than zero",
            id="zero count",
        ),
        pytest.param(
            {
                **CLAIM,
                "spec": {
                    "devices": {
                        "requests": [{"name": "a", "exactly": {"deviceClassName": "x"}}],
                        "constraints": [{"requests": ["z"], "matchAttribute": "m"}],
                    }
                },
                "status": {},
            },
            'spec.devices.constraints[0].requests[0]: Invalid value: "z": must be the name of a '
            "request in the claim or the name of a request and a subrequest separated by '/'",
            id="constraint names unknown request",
        ),
    ],
)
def test_upstream_validation(manifest: dict[str, object], message: str) -> None:
    with pytest.raises(ManifestError) as info:
        from_dict(manifest)
    assert str(info.value) == message


def test_pod_claim_must_name_one_source() -> None:
    with pytest.raises(ManifestError) as info:
        from_dict(
            {
                "kind": "Pod",
                "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c"}], "resourceClaims": [{"name": "x"}]},
            }
        )
    assert str(info.value) == (
        'spec.resourceClaims[0]: Invalid value: "": must specify one of: `resourceClaimName`, '
        "`resourceClaimTemplateName`"
    )


def test_memory_backend_stores_the_dra_kinds() -> None:
    from schedframe.backends import MemoryBackend

    objects = [from_dict(m) for m in (CLASS, SLICE, CLAIM, TEMPLATE)]
    backend = MemoryBackend(objects=objects)
    for obj, kind in zip(
        objects,
        ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"),
        strict=True,
    ):
        (stored,) = backend.list(kind)
        assert type(stored) is type(obj)
        assert stored.metadata.name == obj.metadata.name  # type: ignore[attr-defined]
