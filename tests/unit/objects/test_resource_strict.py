"""Strict decoding of the DRA kinds as ``kubectl get -o yaml`` prints them.

Every field of the ``resource.k8s.io/v1`` types appears at least once (read by the decoder or
declared known in :mod:`schedframe.objects._fields`), with the server-set metadata
(``managedFields``, ``generation``, ``resourceVersion``, ...) a real dump carries, so that a
cluster's ``kubectl get deviceclasses,resourceslices,resourceclaims,resourceclaimtemplates
-o yaml`` decodes under ``validate="strict"``.
"""

from __future__ import annotations

import pytest
import yaml

from schedframe.errors import ManifestError
from schedframe.objects import (
    DeviceClass,
    Pod,
    ResourceClaim,
    ResourceClaimTemplate,
    ResourceSlice,
    from_dict,
)

_META = """
  creationTimestamp: "2026-11-20T10:00:00Z"
  generation: 2
  resourceVersion: "4711"
  uid: 5f0c3a8e-0d6e-4b8e-9a3b-1c2d3e4f5a6b
  managedFields:
  - apiVersion: resource.k8s.io/v1
    fieldsType: FieldsV1
    fieldsV1:
      f:spec: {}
    manager: kubectl-client-side-apply
    operation: Update
    time: "2026-11-20T10:00:00Z"
"""

DEVICE_CLASS = f"""
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
  annotations:
    kubectl.kubernetes.io/last-applied-configuration: "{{}}"
{_META}
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
  config:
  - opaque:
      driver: gpu.example.com
      parameters:
        apiVersion: gpu.example.com/v1
        kind: GpuConfig
        sharing:
          strategy: TimeSlicing
  extendedResourceName: example.com/gpu
"""

RESOURCE_SLICE = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-1-gpu.example.com-x7k2p
  generateName: node-1-gpu.example.com-
  ownerReferences:
  - apiVersion: v1
    controller: true
    kind: Node
    name: node-1
    uid: 0a1b2c3d-0000-4000-8000-000000000001
{_META}
spec:
  driver: gpu.example.com
  pool:
    name: node-1
    generation: 3
    resourceSliceCount: 1
  perDeviceNodeSelection: true
  sharedCounters:
  - name: gpu-0-counters
    counters:
      memory:
        value: 80Gi
      multiprocessors:
        value: "108"
  devices:
  - name: gpu-0
    nodeName: node-1
    attributes:
      model:
        string: a100
      index:
        int: 0
      mig:
        bool: false
      driverVersion:
        version: 1.2.3
    capacity:
      memory:
        value: 80Gi
      bandwidth:
        value: 10Gi
        requestPolicy:
          default: 1Gi
          validRange:
            min: 1Gi
            step: 1Gi
    consumesCounters:
    - counterSet: gpu-0-counters
      counters:
        memory:
          value: 40Gi
    taints:
    - key: example.com/unhealthy
      value: ecc
      effect: NoSchedule
      timeAdded: "2026-11-20T10:05:00Z"
    bindsToNode: true
    bindingConditions:
    - example.com/attached
    bindingFailureConditions:
    - example.com/attach-failed
    allowMultipleAllocations: true
"""

RESOURCE_CLAIM = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: train-0-gpu-bdf7n
  namespace: default
  generateName: train-0-gpu-
  annotations:
    resource.kubernetes.io/pod-claim-name: gpu
  finalizers:
  - resource.kubernetes.io/delete-protection
  ownerReferences:
  - apiVersion: v1
    blockOwnerDeletion: true
    controller: true
    kind: Pod
    name: train-0
    uid: 0a1b2c3d-0000-4000-8000-000000000002
{_META}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors:
        - cel:
            expression: device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0
        allocationMode: ExactCount
        count: 1
        adminAccess: false
        tolerations:
        - key: example.com/unhealthy
          operator: Equal
          value: ecc
          effect: NoSchedule
          tolerationSeconds: 300
        capacity:
          requests:
            bandwidth: 2Gi
    - name: nic
      firstAvailable:
      - name: fast
        deviceClassName: gpu.example.com
        selectors:
        - cel:
            expression: device.attributes["gpu.example.com"].model == "a100"
        allocationMode: ExactCount
        count: 1
        tolerations:
        - operator: Exists
        capacity:
          requests:
            bandwidth: 1Gi
      - name: any
        deviceClassName: gpu.example.com
        allocationMode: All
    constraints:
    - requests: [gpu, nic]
      matchAttribute: gpu.example.com/model
    - requests: [gpu]
      distinctAttribute: gpu.example.com/index
    config:
    - requests: [gpu]
      opaque:
        driver: gpu.example.com
        parameters:
          apiVersion: gpu.example.com/v1
          kind: GpuConfig
status:
  allocation:
    allocationTimestamp: "2026-11-20T10:06:00Z"
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - key: metadata.name
          operator: In
          values: [node-1]
    devices:
      results:
      - request: gpu
        driver: gpu.example.com
        pool: node-1
        device: gpu-0
        adminAccess: false
        tolerations:
        - key: example.com/unhealthy
          operator: Equal
          value: ecc
          effect: NoSchedule
        bindingConditions: [example.com/attached]
        bindingFailureConditions: [example.com/attach-failed]
        shareID: 7f0c3a8e-0d6e-4b8e-9a3b-1c2d3e4f5a6b
        consumedCapacity:
          bandwidth: 2Gi
      config:
      - source: FromClaim
        requests: [gpu]
        opaque:
          driver: gpu.example.com
          parameters:
            apiVersion: gpu.example.com/v1
            kind: GpuConfig
  reservedFor:
  - apiGroup: ""
    resource: pods
    name: train-0
    uid: 0a1b2c3d-0000-4000-8000-000000000002
  devices:
  - driver: gpu.example.com
    pool: node-1
    device: gpu-0
    shareID: 7f0c3a8e-0d6e-4b8e-9a3b-1c2d3e4f5a6b
    conditions:
    - type: Ready
      status: "True"
      lastTransitionTime: "2026-11-20T10:07:00Z"
      reason: Prepared
      message: ""
    data:
      uuid: GPU-1234
    networkData:
      interfaceName: eth1
      ips: [10.0.0.5/24]
      hardwareAddress: "00:11:22:33:44:55"
"""

RESOURCE_CLAIM_TEMPLATE = f"""
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata:
  name: gpu-half
  namespace: default
{_META}
spec:
  metadata:
    creationTimestamp: null
    labels:
      team: ml
    annotations:
      example.com/purpose: training
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          count: 1
"""

POD = f"""
apiVersion: v1
kind: Pod
metadata:
  name: train-0
  namespace: default
{_META}
spec:
  containers:
  - name: trainer
    image: trainer:1
    resources:
      claims:
      - name: gpu
        request: gpu
  resourceClaims:
  - name: gpu
    resourceClaimTemplateName: gpu-half
status:
  phase: Pending
  resourceClaimStatuses:
  - name: gpu
    resourceClaimName: train-0-gpu-bdf7n
"""


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (DEVICE_CLASS, DeviceClass),
        (RESOURCE_SLICE, ResourceSlice),
        (RESOURCE_CLAIM, ResourceClaim),
        (RESOURCE_CLAIM_TEMPLATE, ResourceClaimTemplate),
        (POD, Pod),
    ],
    ids=["DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate", "Pod"],
)
def test_a_full_kubectl_dump_decodes_strictly(text: str, kind: type) -> None:
    obj = from_dict(yaml.safe_load(text), validate="strict")
    assert isinstance(obj, kind)


def test_the_full_dumps_are_read_not_only_accepted() -> None:
    slice_ = from_dict(yaml.safe_load(RESOURCE_SLICE))
    assert isinstance(slice_, ResourceSlice)
    (device,) = slice_.devices
    assert sorted(device.attributes) == ["driverVersion", "index", "mig", "model"]
    assert sorted(device.capacity) == ["bandwidth", "memory"]
    assert [c.counter_set for c in device.consumes_counters] == ["gpu-0-counters"]
    claim = from_dict(yaml.safe_load(RESOURCE_CLAIM))
    assert isinstance(claim, ResourceClaim)
    assert claim.allocation is not None
    assert [r.device for r in claim.allocation.devices.results] == ["gpu-0"]
    assert [c.driver for c in claim.allocation.devices.config] == ["gpu.example.com"]
    assert [r.name for r in claim.reserved_for] == ["train-0"]
    pod = from_dict(yaml.safe_load(POD))
    assert isinstance(pod, Pod)
    assert pod.spec.containers[0].claims == ("gpu",)
    assert [c.resource_claim_template_name for c in pod.spec.resource_claims] == ["gpu-half"]


@pytest.mark.parametrize(
    ("text", "where", "path"),
    [
        (DEVICE_CLASS, ("spec",), "spec.bogus"),
        (DEVICE_CLASS, ("spec", "config", 0), "spec.config[0].bogus"),
        (RESOURCE_SLICE, ("spec", "pool"), "spec.pool.bogus"),
        (RESOURCE_SLICE, ("spec", "devices", 0), "spec.devices[0].bogus"),
        (RESOURCE_SLICE, ("spec", "devices", 0, "attributes", "model"), "attributes[model].bogus"),
        (RESOURCE_SLICE, ("spec", "devices", 0, "capacity", "memory"), "capacity[memory].bogus"),
        (RESOURCE_CLAIM, ("spec", "devices", "requests", 0, "exactly"), "exactly.bogus"),
        (RESOURCE_CLAIM, ("status",), "status.bogus"),
        (RESOURCE_CLAIM, ("status", "allocation", "devices", "config", 0), "config[0].bogus"),
        (RESOURCE_CLAIM_TEMPLATE, ("spec", "metadata"), "spec.metadata.bogus"),
        (POD, ("spec", "containers", 0, "resources", "claims", 0), "claims[0].bogus"),
    ],
)
def test_a_field_the_api_does_not_have_is_still_refused(
    text: str, where: tuple[str | int, ...], path: str
) -> None:
    d = yaml.safe_load(text)
    target = d
    for key in where:
        target = target[key]
    assert isinstance(target, dict)
    target["bogus"] = 1
    with pytest.raises(ManifestError) as info:
        from_dict(d, validate="strict")
    assert f"{path}: Unknown field" in str(info.value)


def test_a_device_class_config_names_no_requests() -> None:
    # DeviceClassConfiguration has only `opaque`; `requests` belongs to a claim's config.
    d = yaml.safe_load(DEVICE_CLASS)
    d["spec"]["config"][0]["requests"] = ["gpu"]
    with pytest.raises(ManifestError, match=r"spec\.config\[0\]\.requests: Unknown field"):
        from_dict(d, validate="strict")


def test_a_capacity_request_policy_is_read_and_written_back() -> None:
    from schedframe.objects import CapacityRequestPolicy, parse_quantity, to_dict

    d = yaml.safe_load(RESOURCE_SLICE)
    caps = d["spec"]["devices"][0]["capacity"]
    caps["memory"]["requestPolicy"] = {"default": "10Gi", "validValues": ["10Gi", "20Gi"]}
    slice_ = from_dict(d, validate="strict")
    assert isinstance(slice_, ResourceSlice)
    (device,) = slice_.devices
    assert device.capacity["bandwidth"].request_policy == CapacityRequestPolicy(
        default=parse_quantity("1Gi"),
        valid_range_min=parse_quantity("1Gi"),
        valid_range_step=parse_quantity("1Gi"),
    )
    assert device.capacity["memory"].request_policy == CapacityRequestPolicy(
        default=parse_quantity("10Gi"),
        valid_values=(parse_quantity("10Gi"), parse_quantity("20Gi")),
    )
    out = to_dict(slice_)
    spec = out["spec"]
    assert isinstance(spec, dict)
    written = spec["devices"][0]["capacity"]
    assert written["bandwidth"]["requestPolicy"] == {
        "default": "1Gi",
        "validRange": {"min": "1Gi", "step": "1Gi"},
    }
    assert written["memory"]["requestPolicy"] == caps["memory"]["requestPolicy"]
    again = from_dict(out, validate="strict")
    assert again == slice_


@pytest.mark.parametrize(
    ("policy", "message"),
    [
        ({"bogus": 1}, "requestPolicy.bogus: Unknown field"),
        ({"validRange": {"min": "1", "bogus": 1}}, "validRange.bogus: Unknown field"),
        ({"validRange": {"step": "1"}}, "validRange.min: Required value"),
        ({"validRange": {"min": "2", "max": "1"}}, "must be greater than or equal to min"),
        ({"validRange": {"min": "1", "step": "0"}}, "must be greater than zero"),
        ({"validValues": ["2", "1"]}, "must be sorted in ascending order and unique"),
        ({"validValues": ["1"], "validRange": {"min": "1"}}, "exactly one of validValues"),
        ({"default": "3", "validValues": ["1", "2"]}, "must be one of validValues"),
        ({"default": "9", "validRange": {"min": "1", "max": "4"}}, "must be within validRange"),
    ],
)
def test_a_bad_capacity_request_policy_is_refused(policy: object, message: str) -> None:
    d = yaml.safe_load(RESOURCE_SLICE)
    d["spec"]["devices"][0]["capacity"]["memory"]["requestPolicy"] = policy
    with pytest.raises(ManifestError) as info:
        from_dict(d, validate="strict")
    assert message in str(info.value)
    assert "capacity[memory].requestPolicy" in str(info.value)
