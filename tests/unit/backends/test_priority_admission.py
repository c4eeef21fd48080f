"""Priority admission on pod create, as kube-apiserver's Priority plugin: cases after
upstream ``plugin/pkg/admission/priority/admission_test.go`` (TestPodAdmission)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from schedframe.backends import MemoryBackend, admit_priority
from schedframe.errors import BackendError
from schedframe.objects import ObjectMeta, Pod, PodSpec, PriorityClass


def pc(
    name: str, value: int, *, default: bool = False, policy: str = "PreemptLowerPriority"
) -> PriorityClass:
    return PriorityClass(
        metadata=ObjectMeta(name=name),
        value=value,
        global_default=default,
        preemption_policy=policy,
    )


def pod(
    class_name: str = "", *, priority: int | None = None, policy: str = "PreemptLowerPriority"
) -> Pod:
    return Pod(
        metadata=ObjectMeta(name="p", namespace="default"),
        spec=PodSpec(priority_class_name=class_name, priority=priority, preemption_policy=policy),
    )


DEFAULT1 = pc("default1", 1000, default=True)
DEFAULT2 = pc("default2", 500, default=True)
NON_DEFAULT = pc("nondefault", 2000)
NEVER = pc("nopreempt", 10, policy="Never")


@pytest.mark.parametrize(
    ("classes", "given", "priority", "class_name", "policy"),
    [
        pytest.param(
            [], pod(), 0, "", "PreemptLowerPriority", id="pod with no priority class and no default"
        ),
        pytest.param(
            [DEFAULT1],
            pod(),
            1000,
            "default1",
            "PreemptLowerPriority",
            id="pod without class gets the default",
        ),
        pytest.param(
            [DEFAULT1, DEFAULT2],
            pod(),
            500,
            "default2",
            "PreemptLowerPriority",
            id="several defaults: the lowest value",
        ),
        pytest.param(
            [DEFAULT1, NON_DEFAULT],
            pod("nondefault"),
            2000,
            "nondefault",
            "PreemptLowerPriority",
            id="pod with a priority class",
        ),
        pytest.param(
            [],
            pod("system-cluster-critical"),
            2000000000,
            "system-cluster-critical",
            "PreemptLowerPriority",
            id="system cluster critical",
        ),
        pytest.param(
            [],
            pod("system-node-critical"),
            2000001000,
            "system-node-critical",
            "PreemptLowerPriority",
            id="system node critical",
        ),
        pytest.param(
            [NEVER],
            pod("nopreempt"),
            10,
            "nopreempt",
            "Never",
            id="preemption policy from the class",
        ),
        pytest.param(
            [NON_DEFAULT],
            pod("nondefault", priority=2000),
            2000,
            "nondefault",
            "PreemptLowerPriority",
            id="pod priority equal to the class",
        ),
        pytest.param(
            [DEFAULT1],
            pod(priority=7),
            7,
            "",
            "PreemptLowerPriority",
            id="already admitted pod without class kept",
        ),
        pytest.param(
            [], pod(policy="Never"), 0, "", "Never", id="no class at all keeps the pod's policy"
        ),
    ],
)
def test_admission_resolves_priority(
    classes: list[PriorityClass], given: Pod, priority: int, class_name: str, policy: str
) -> None:
    admitted = admit_priority(given, classes)
    assert (
        admitted.spec.priority,
        admitted.spec.priority_class_name,
        admitted.spec.preemption_policy,
    ) == (
        priority,
        class_name,
        policy,
    )


@pytest.mark.parametrize(
    ("classes", "given", "message"),
    [
        pytest.param(
            [],
            pod("foo"),
            'pods "p" is forbidden: no PriorityClass with name foo was found',
            id="unknown class",
        ),
        pytest.param(
            [NON_DEFAULT],
            pod("nondefault", priority=100),
            'pods "p" is forbidden: the integer value of priority (100) must not be provided in pod spec; '
            "priority admission controller computed 2000 from the given PriorityClass name",
            id="priority conflicting with the class",
        ),
        pytest.param(
            [NON_DEFAULT],
            pod("nondefault", policy="Never"),
            'pods "p" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod '
            "spec; priority admission controller computed PreemptLowerPriority from the given PriorityClass name",
            id="preemption policy conflicting with the class",
        ),
    ],
)
def test_admission_rejects(classes: list[PriorityClass], given: Pod, message: str) -> None:
    with pytest.raises(BackendError) as info:
        admit_priority(given, classes)
    assert str(info.value) == message
    assert (info.value.code, info.value.reason) == (403, "Forbidden")


def test_memory_backend_admits_on_create() -> None:
    backend = MemoryBackend([pod("nondefault").with_metadata(name="first"), NON_DEFAULT])
    stored = backend.get("Pod", "first")
    assert isinstance(stored, Pod) and stored.spec.priority == 2000  # classes are created first
    backend.create(DEFAULT1)
    created = backend.create(pod().with_metadata(name="second"))
    assert (created.spec.priority, created.spec.priority_class_name) == (1000, "default1")
    with pytest.raises(BackendError, match="no PriorityClass with name foo was found"):
        backend.create(pod("foo").with_metadata(name="third"))
    assert backend.get("Pod", "third") is None
    assert [p.name for p in backend.list("PriorityClass")] == ["default1", "nondefault"]  # type: ignore[attr-defined]


_names = st.sampled_from(["", "a", "b", "system-cluster-critical", "missing"])


@st.composite
def _classes(draw: st.DrawFn) -> list[PriorityClass]:
    chosen = draw(st.lists(st.sampled_from(["a", "b", "c"]), unique=True))
    return [
        pc(
            name,
            draw(st.integers(-100, 1000)),
            default=draw(st.booleans()),
            policy=draw(st.sampled_from(["Never", "PreemptLowerPriority"])),
        )
        for name in chosen
    ]


@given(
    classes=_classes(),
    class_name=_names,
    priority=st.none() | st.integers(-100, 1000),
    policy=st.sampled_from(["Never", "PreemptLowerPriority"]),
)
def test_admission_resolves_the_class_or_rejects_and_is_idempotent(
    classes: list[PriorityClass], class_name: str, priority: int | None, policy: str
) -> None:
    given_pod = pod(class_name, priority=priority, policy=policy)
    try:
        admitted = admit_priority(given_pod, classes)
    except BackendError as exc:
        assert exc.code == 403
        return
    assert admit_priority(admitted, classes) == admitted
    by_name = {c.name: c for c in classes}
    if class_name:
        value = 2000000000 if class_name == "system-cluster-critical" else by_name[class_name].value
        assert admitted.spec.priority == value
    elif priority is not None:
        assert admitted == given_pod


def test_only_one_default_class_can_exist() -> None:
    backend = MemoryBackend([DEFAULT1])
    with pytest.raises(BackendError) as info:
        backend.create(DEFAULT2)
    assert str(info.value) == (
        'priorityclasses.scheduling.k8s.io "default2" is forbidden: PriorityClass default1 is '
        "already marked as default. Only one default can exist"
    )
    backend.update(DEFAULT1)  # the default itself may be updated
    backend.create(NON_DEFAULT)
