"""ResourceClaim ``status.devices``: decoded (conditions for binding conditions) and written
back whole, so a claim-status write does not wipe what drivers reported."""

from __future__ import annotations

from datetime import UTC, datetime

from schedframe.objects import (
    AllocatedDeviceStatus,
    DeviceCondition,
    ResourceClaim,
    from_dict,
    to_dict,
)

CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "c", "namespace": "default"},
    "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
    "status": {
        "devices": [
            {
                "driver": "gpu.example.com",
                "pool": "node-1",
                "device": "gpu-0",
                "shareID": "7e1a2f3c-0000-4000-8000-000000000001",
                "conditions": [
                    {
                        "type": "attached",
                        "status": "True",
                        "observedGeneration": 2,
                        "lastTransitionTime": "2026-01-02T03:04:05Z",
                        "reason": "Attached",
                        "message": "fabric attach done",
                    }
                ],
                "data": {"any": ["json", 1]},
                "networkData": {"interfaceName": "net1", "ips": ["10.0.0.2/24"]},
            }
        ]
    },
}


def test_device_statuses_are_decoded_and_encoded_back_unchanged() -> None:
    claim = from_dict(CLAIM)
    assert isinstance(claim, ResourceClaim)
    assert claim.devices == (
        AllocatedDeviceStatus(
            driver="gpu.example.com",
            pool="node-1",
            device="gpu-0",
            share_id="7e1a2f3c-0000-4000-8000-000000000001",
            conditions=(
                DeviceCondition(
                    type="attached",
                    status="True",
                    reason="Attached",
                    message="fabric attach done",
                    last_transition_time=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
                    observed_generation=2,
                ),
            ),
            data={"any": ["json", 1]},
            network_data={"interfaceName": "net1", "ips": ["10.0.0.2/24"]},
        ),
    )
    out = to_dict(claim)
    assert out["status"] == CLAIM["status"]
    assert from_dict(out) == claim
