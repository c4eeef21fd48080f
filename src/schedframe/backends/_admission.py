"""The API server's Priority admission plugin, as the in-memory backend and simulate run it.

Upstream: ``plugin/pkg/admission/priority/admission.go`` (``admitPod`` on create).
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs

from schedframe.errors import BackendError
from schedframe.objects import SYSTEM_PRIORITY_CLASSES, Pod, PriorityClass

__all__ = ["admit_priority", "default_priority_class", "validate_priority_class"]

_PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"


def default_priority_class(classes: Iterable[PriorityClass]) -> PriorityClass | None:
    """The ``globalDefault`` class; the lowest-valued one if several (upstream
    ``getDefaultPriorityClass``)."""
    found: PriorityClass | None = None
    for pc in classes:
        if pc.global_default and (found is None or pc.value < found.value):
            found = pc
    return found


def _forbidden(pod: Pod, message: str) -> BackendError:
    return BackendError(f'pods "{pod.name}" is forbidden: {message}', reason="Forbidden", code=403)


def admit_priority(pod: Pod, classes: Iterable[PriorityClass]) -> Pod:
    """The pod as the Priority admission plugin admits it on create.

    ``spec.priorityClassName`` is resolved among ``classes`` and the two built-in system
    classes (``system-cluster-critical`` = 2000000000, ``system-node-critical`` =
    2000001000); without a name, the ``globalDefault`` class applies (its name is written
    into the pod) or else priority 0 and ``PreemptLowerPriority``. The class's value becomes
    ``spec.priority`` and its ``preemptionPolicy`` the pod's.

    Two leniencies for pods built by hand, as upstream's tests build them: a pod that
    already carries ``spec.priority`` but names no class is taken as admitted already (a pod
    from a dump is admitted so) and kept as is; and with neither a class name nor a default
    class the pod keeps its ``preemptionPolicy`` (upstream would reject ``Never`` there).
    schedframe's Pod does not tell an explicit ``preemptionPolicy: PreemptLowerPriority``
    from the default, so only an explicit ``Never`` can conflict with a class.

    Raises:
        BackendError: 403 ``Forbidden`` with upstream's message: ``no PriorityClass with
            name X was found``, or a ``spec.priority`` (``spec.preemptionPolicy``) that
            differs from the one the class gives.
    """
    spec = pod.spec
    name = spec.priority_class_name
    if not name and spec.priority is not None:
        return pod
    known = {pc.name: pc for pc in SYSTEM_PRIORITY_CLASSES}
    stored = list(classes)
    known.update((pc.name, pc) for pc in stored)
    if name:
        pc = known.get(name)
        if pc is None:
            raise _forbidden(pod, f"no PriorityClass with name {name} was found")
        priority, policy = pc.value, pc.preemption_policy
    else:
        default = default_priority_class(stored)
        if default is None:
            # Upstream computes PreemptLowerPriority here and rejects an explicit Never; a
            # pod built by hand (as the testing kit builds them) keeps its own policy.
            priority, policy = 0, spec.preemption_policy
        else:
            name, priority, policy = default.name, default.value, default.preemption_policy
    if spec.priority is not None and spec.priority != priority:
        raise _forbidden(
            pod,
            f"the integer value of priority ({spec.priority}) must not be provided in pod "
            f"spec; priority admission controller computed {priority} from the given "
            "PriorityClass name",
        )
    if spec.preemption_policy != policy and spec.preemption_policy != _PREEMPT_LOWER_PRIORITY:
        raise _forbidden(
            pod,
            f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be "
            f"provided in pod spec; priority admission controller computed {policy} from the "
            "given PriorityClass name",
        )
    if (spec.priority, spec.priority_class_name, spec.preemption_policy) == (
        priority,
        name,
        policy,
    ):
        return pod
    return attrs.evolve(
        pod,
        spec=attrs.evolve(
            spec, priority=priority, priority_class_name=name, preemption_policy=policy
        ),
    )


def validate_priority_class(pc: PriorityClass, classes: Iterable[PriorityClass]) -> None:
    """Reject a second ``globalDefault`` class, as the Priority plugin validates a
    PriorityClass on create and update (upstream ``validatePriorityClass``).

    Raises:
        BackendError: 403 ``Forbidden``: ``PriorityClass X is already marked as default.
            Only one default can exist``.
    """
    if not pc.global_default:
        return
    default = default_priority_class(classes)
    if default is not None and default.name != pc.name:
        raise BackendError(
            f'priorityclasses.scheduling.k8s.io "{pc.name}" is forbidden: PriorityClass '
            f"{default.name} is already marked as default. Only one default can exist",
            reason="Forbidden",
            code=403,
        )
