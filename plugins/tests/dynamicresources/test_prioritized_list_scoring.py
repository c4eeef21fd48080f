"""DynamicResources' Score: nodes ranked by which ``firstAvailable`` alternatives they get.

The three ``*-prioritized-list-scoring`` cases of upstream's ``TestPlugin``
(``pkg/scheduler/framework/plugins/dynamicresources/dynamicresources_test.go``), ported as
data: the same claims, slices and nodes; Filter on every node, Score on those that passed,
NormalizeScore, then Reserve and PreBind on the best node, with the raw and normalised scores,
the in-flight allocations and the stored claims upstream expects.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
import pytest

from schedframe import framework as fw
from schedframe.features import FeatureGates
from schedframe.objects import (
    AllocationResult,
    CELSelector,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceClass,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    Node,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    ObjectMeta,
    OwnerReference,
    Pod,
    PodResourceClaim,
    PodSpec,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourcePool,
    ResourceSlice,
)
from schedframe.runtime import ClusterView, Framework
from schedframe_plugins.dynamicresources import DynamicResources, DynamicResourcesArgs

NODE, NODE2, NODE3 = "worker", "worker-2", "worker-3"
DRIVER, POD, UID, NS = "some-driver", "my-pod", "1234", "default"
CLAIM, CLAIM2, CLASS = "my-pod-my-resource", "my-pod-my-resource-2", "my-resource-class"
ATTR = "healthy"
OWNER = OwnerReference(api_version="v1", kind="Pod", name=POD, uid=UID, controller=True)
RESERVED = (ResourceClaimConsumerReference(resource="pods", name=POD, uid=UID),)
UU = fw.Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def node(name: str) -> Node:
    return Node(metadata=ObjectMeta(name=name, labels={"kubernetes.io/hostname": name}))


def node_slice(name: str, *devices: Device) -> ResourceSlice:
    return ResourceSlice(
        metadata=ObjectMeta(name=f"{name}-{DRIVER}"),
        driver=DRIVER,
        pool=ResourcePool(name=name, generation=1),
        node_name=name,
        devices=devices,
    )


def instances(n: int) -> tuple[Device, ...]:
    return tuple(Device(name=f"instance-{i}") for i in range(1, n + 1))


def flagged(value: bool) -> Device:
    return Device(name="instance-1", attributes={ATTR: DeviceAttribute(bool_value=value)})


def pod(*claims: str) -> Pod:
    refs = tuple(
        PodResourceClaim(name=f"my-resource{'' if i == 0 else f'-{i + 1}'}", resource_claim_name=c)
        for i, c in enumerate(claims)
    )
    return Pod(
        metadata=ObjectMeta(name=POD, namespace=NS, uid=UID), spec=PodSpec(resource_claims=refs)
    )


def sub(name: str, count: int = 1, selector: str | None = None) -> DeviceSubRequest:
    selectors = (CELSelector(expression=selector),) if selector else ()
    return DeviceSubRequest(name=name, device_class_name=CLASS, count=count, selectors=selectors)


def claim(name: str, *requests: tuple[DeviceSubRequest, ...]) -> ResourceClaim:
    return ResourceClaim(
        metadata=ObjectMeta(name=name, namespace=NS, uid=f"uid-{name}", owner_references=(OWNER,)),
        requests=tuple(
            DeviceRequest(name=f"req-{i + 1}", first_available=subs)
            for i, subs in enumerate(requests)
        ),
    )


def allocation(*results: tuple[str, str]) -> AllocationResult:
    req = NodeSelectorRequirement(key="metadata.name", operator="In", values=(NODE,))
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=tuple(
                DeviceRequestAllocationResult(request=r, driver=DRIVER, pool=NODE, device=d)
                for r, d in results
            )
        ),
        node_selector=NodeSelector(node_selector_terms=(NodeSelectorTerm(match_fields=(req,)),)),
    )


WITH_SELECTOR = claim(
    CLAIM, (sub("subreq-1", selector=f'device.attributes["{DRIVER}"].{ATTR}'), sub("subreq-2"))
)
ONE_SUB = claim(CLAIM, (sub("subreq-1"),))
FOUR_SUBS = claim(
    CLAIM2, (sub("subreq-1", 4), sub("subreq-2", 3), sub("subreq-3", 2), sub("subreq-4", 1))
)
TWO_REQUESTS = claim(
    CLAIM, (sub("subreq-1", 2), sub("subreq-2", 1)), (sub("subreq-1", 2), sub("subreq-2", 1))
)


@attrs.frozen(kw_only=True)
class Case:
    pod: Pod
    claims: Sequence[ResourceClaim]
    slices: Sequence[ResourceSlice]
    nodes: Sequence[str]
    filter: dict[str, tuple[fw.Code, str]] = attrs.field(factory=dict)
    scores: dict[str, int]
    normalized: dict[str, int]
    #: Each claim's allocation as Reserve marks it in flight and PreBind stores it.
    allocations: dict[str, AllocationResult]


CASES: dict[str, Case] = {
    "single-claim-prioritized-list-scoring": Case(
        pod=pod(CLAIM),
        claims=[WITH_SELECTOR],
        slices=[node_slice(NODE, flagged(True)), node_slice(NODE2, flagged(False))],
        nodes=[NODE, NODE2],
        scores={NODE: 8, NODE2: 7},
        normalized={NODE: 100, NODE2: 87},
        allocations={CLAIM: allocation(("req-1/subreq-1", "instance-1"))},
    ),
    "multiple-claims-prioritized-list-scoring": Case(
        pod=pod(CLAIM, CLAIM2),
        claims=[ONE_SUB, FOUR_SUBS],
        slices=[
            node_slice(NODE, *instances(4)),
            node_slice(NODE2, *instances(2)),
            node_slice(NODE3, *instances(1)),
        ],
        nodes=[NODE, NODE2, NODE3],
        filter={NODE3: (UU, "cannot allocate all claims")},
        scores={NODE: 15, NODE2: 13},
        normalized={NODE: 100, NODE2: 86},
        allocations={
            CLAIM: allocation(("req-1/subreq-1", "instance-1")),
            CLAIM2: allocation(
                ("req-1/subreq-2", "instance-2"),
                ("req-1/subreq-2", "instance-3"),
                ("req-1/subreq-2", "instance-4"),
            ),
        },
    ),
    "multiple-requests-prioritized-list-scoring": Case(
        pod=pod(CLAIM),
        claims=[TWO_REQUESTS],
        slices=[
            node_slice(NODE, *instances(4)),
            node_slice(NODE2, *instances(3)),
            node_slice(NODE3, *instances(2)),
        ],
        nodes=[NODE, NODE2, NODE3],
        scores={NODE: 16, NODE2: 15, NODE3: 14},
        normalized={NODE: 100, NODE2: 93, NODE3: 87},
        allocations={
            CLAIM: allocation(
                ("req-1/subreq-1", "instance-1"),
                ("req-1/subreq-1", "instance-2"),
                ("req-2/subreq-1", "instance-3"),
                ("req-2/subreq-1", "instance-4"),
            )
        },
    ),
}


def _requests(a: AllocationResult | None) -> list[str]:
    # Upstream's comparison ignores which device was picked.
    assert a is not None
    return [r.request for r in a.devices.results]


def _setup(case: Case, gates: FeatureGates) -> tuple[DynamicResources, Framework]:
    cluster = ClusterView(
        dra=[*case.claims, DeviceClass(metadata=ObjectMeta(name=CLASS)), *case.slices]
    )
    handle = Framework(cluster=cluster, features=gates)
    return DynamicResources(DynamicResourcesArgs(), handle), handle


def _filter(pl: DynamicResources, state: fw.CycleState, case: Case) -> list[fw.NodeInfo]:
    assert pl.pre_enqueue(case.pod) is None
    pre = pl.pre_filter(state, case.pod, [])
    assert pre is None or (isinstance(pre, fw.Status) and pre.is_success())
    passed = []
    for name in case.nodes:
        status = pl.filter(state, case.pod, fw.NodeInfo(node(name)))
        got = None if status is None or status.is_success() else (status.code, status.message())
        assert got == case.filter.get(name)
        if got is None:
            passed.append(fw.NodeInfo(node(name)))
    return passed


@pytest.mark.parametrize("name", list(CASES))
def test_prioritized_list_scoring(name: str) -> None:
    case = CASES[name]
    pl, handle = _setup(case, FeatureGates(emulated_version="1.36"))
    dra = handle.shared_dra_manager()
    state = fw.CycleState()
    passed = _filter(pl, state, case)
    assert pl.pre_score(state, case.pod, passed) is None
    names = [ni.node.name for ni in passed if ni.node is not None]
    raw = [pl.score(state, case.pod, ni) for ni in passed]
    assert dict(zip(names, raw, strict=True)) == case.scores
    scores = fw.NodeScoreList(names, raw)
    assert pl.normalize_score(state, case.pod, scores) is None
    assert dict(scores) == case.normalized
    best = max(scores, key=lambda s: s[1])[0]
    assert best == NODE
    assert pl.reserve(state, case.pod, best) is None
    for c in case.claims:
        assert dra.claim_has_pending_allocation(c.metadata.uid)
    assert pl.pre_bind(state, case.pod, best) is None
    for c in case.claims:
        stored = dra.resource_claim(NS, c.name)
        assert stored is not None
        assert stored.reserved_for == RESERVED
        assert stored.allocation is not None
        assert _requests(stored.allocation) == _requests(case.allocations[c.name])
        assert stored.allocation.node_selector == case.allocations[c.name].node_selector


def test_without_prioritized_lists_every_node_scores_zero_and_prescore_skips() -> None:
    case = CASES["single-claim-prioritized-list-scoring"]
    off = FeatureGates(emulated_version="1.36", overrides={"DRAPrioritizedList": False})
    pl, _ = _setup(attrs.evolve(case, claims=[]), off)
    state = fw.CycleState()
    skipped = pl.pre_score(state, case.pod, [])
    assert skipped is not None and skipped.code is fw.Code.SKIP
    assert pl.score(state, case.pod, fw.NodeInfo(node(NODE))) == 0


def test_before_1_36_dynamic_resources_does_not_score() -> None:
    case = CASES["single-claim-prioritized-list-scoring"]
    pl, _ = _setup(case, FeatureGates(emulated_version="1.35"))
    state = fw.CycleState()
    passed = _filter(pl, state, case)
    skipped = pl.pre_score(state, case.pod, passed)
    assert skipped is not None and skipped.code is fw.Code.SKIP
    assert [pl.score(state, case.pod, ni) for ni in passed] == [0, 0]


def test_a_claim_allocated_before_brings_its_own_allocation() -> None:
    # Upstream's fixed computeScore: an already allocated claim scores by its allocation,
    # the pending ones take the node's results in order.
    case = CASES["multiple-claims-prioritized-list-scoring"]
    done = attrs.evolve(ONE_SUB, allocation=allocation(("req-1/subreq-1", "instance-1")))
    pl, _ = _setup(attrs.evolve(case, claims=[done, FOUR_SUBS]), FeatureGates())
    state = fw.CycleState()
    pl.pre_filter(state, case.pod, [])
    ni = fw.NodeInfo(node(NODE))
    assert pl.filter(state, case.pod, ni) is None
    # 8 for the allocated claim's subreq-1, 8 for FOUR_SUBS' subreq-1 on four free devices
    # (instance-1 is the allocated claim's, so three are free: subreq-2, 7).
    assert pl.score(state, case.pod, ni) == 8 + 7
