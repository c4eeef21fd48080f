"""Decoding and encoding of PriorityClass and the workload kinds, registered with the codec.

Same machinery and conventions as :mod:`schedframe.objects._codec` (the :class:`_Reader`
collects every issue with its field path); imported by that module once it is complete.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from schedframe.errors import DUPLICATE, FieldIssue
from schedframe.objects import _codec as c
from schedframe.objects import _codec_storage, _fields
from schedframe.objects._meta import LabelSelector, ObjectMeta
from schedframe.objects._pod import Pod
from schedframe.objects._scheduling import (
    HIGHEST_USER_DEFINABLE_PRIORITY,
    SYSTEM_PRIORITY_CLASSES,
    PriorityClass,
)
from schedframe.objects._workload_api import (
    WORKLOAD_MAX_POD_GROUPS,
    GangSchedulingPolicy,
    PodGroup,
    Workload,
)
from schedframe.objects._workloads import (
    POD_MANAGEMENT_POLICIES,
    DaemonSet,
    Deployment,
    Job,
    ReplicaSet,
    ReplicationController,
    Service,
    StatefulSet,
)
from schedframe.objects.validation import (
    name_is_dns1035_label,
    name_is_dns_label,
    name_is_dns_subdomain,
)

__all__: list[str] = []

_INT32_MAX = 2**31 - 1
_PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
# The name a pod template is decoded under (templates have none), removed afterwards.
_TEMPLATE_NAME = "template"


class _GoMap:
    """A string map rendered as upstream's field errors print ``map[string]string`` values."""

    __slots__ = ("values",)

    def __init__(self, values: Mapping[str, str]) -> None:
        self.values = values

    def __str__(self) -> str:
        items = ", ".join(
            f"{json.dumps(k)}:{json.dumps(v)}" for k, v in sorted(self.values.items())
        )
        return "map[string]string{" + items + "}"


def _namespaced_meta(
    r: c._Reader,
    obj: c._Dict,
    base: str,
    name_rule: Callable[..., list[str]] = name_is_dns_subdomain,
) -> ObjectMeta:
    meta = c._metadata(r, obj, base, default_namespace="default", name_rule=name_rule)
    if not meta.uid:
        meta = c._with_uid(meta, f"{meta.namespace}/{meta.name}")
    return meta


def _replicas(r: c._Reader, d: c._Dict, key: str, path: str, default: int) -> int:
    raw = d.get(key)
    value = r.integer(d, key, path, default)
    if c._is_int(raw) and value < 0:
        r.invalid(c._join(path, key), value, "must be greater than or equal to 0")
    elif c._is_int(raw) and value > _INT32_MAX:
        r.invalid(c._join(path, key), value, f"must be less than or equal to {_INT32_MAX}")
    return value


def _template(r: c._Reader, d: c._Dict, path: str, namespace: str) -> Pod | None:
    """``spec.template`` as a nameless Pod in the owner's namespace, or None when missing."""
    t = r.map_(d, "template", path)
    where = c._join(path, "template")
    if t is None:
        r.required(where)
        return None
    # Read below through a copy, which reports the template's unknown fields.
    r.track(t, where).update(t.keys())
    meta = t.get("metadata")
    if meta is None or isinstance(meta, Mapping):
        given = dict(meta or {})
        name = given.get("name")
        given["name"] = name if isinstance(name, str) and name else _TEMPLATE_NAME
        given.setdefault("namespace", namespace)
        meta = given
    pod = c._pod(r, {**t, "kind": "Pod", "metadata": meta}, where)
    return pod.with_metadata(name="" if pod.name == _TEMPLATE_NAME else pod.name, uid="")


def _required_selector(r: c._Reader, d: c._Dict, path: str, what: str) -> LabelSelector:
    selector = c._label_selector(r, d, "selector", path)
    where = c._join(path, "selector")
    if selector is None:
        r.required(where)
        return LabelSelector()
    if selector.is_empty:
        r.invalid(where, c._GoStrings(()), f"empty selector is invalid for {what}")
    return selector


def _check_template_labels(
    r: c._Reader, selector: LabelSelector, template: Pod | None, path: str
) -> None:
    # Upstream ValidatePodTemplateSpecForReplicaSet and friends.
    if template is None or selector.is_empty:
        return
    if not selector.matches(template.labels):
        r.invalid(
            c._join(path, "template.metadata.labels"),
            _GoMap(template.labels),
            "`selector` does not match template `labels`",
        )


# ---- decoders -------------------------------------------------------------------------------


def _priority_class(r: c._Reader, obj: c._Dict, base: str) -> PriorityClass:
    c._check_kind(r, obj, base, "PriorityClass")
    meta = c._metadata(r, obj, base, default_namespace="")
    if not meta.uid:
        meta = c._with_uid(meta, meta.name)
    raw = obj.get("value")
    value = r.integer(obj, "value", base, bits=32)
    if raw is None:
        r.required(c._join(base, "value"))
    system = {pc.name: pc.value for pc in SYSTEM_PRIORITY_CLASSES}
    # Upstream ValidatePriorityClass: "system-" names are reserved to the built-in classes,
    # which keep their values; other classes stay at or below the user maximum.
    if meta.name.startswith("system-"):
        if system.get(meta.name) != value and meta.name:
            r.forbidden(
                c._join(base, "metadata.name"),
                "priority class names with 'system-' prefix are reserved for system use only",
            )
    elif c._is_int(raw) and value > HIGHEST_USER_DEFINABLE_PRIORITY:
        r.forbidden(
            c._join(base, "value"),
            f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}",
        )
    return PriorityClass(
        metadata=meta,
        value=value,
        global_default=r.flag(obj, "globalDefault", base),
        preemption_policy=r.one_of(
            obj, "preemptionPolicy", base, _PREEMPTION_POLICIES, "PreemptLowerPriority"
        ),
        description=r.text(obj, "description", base),
    )


def _service(r: c._Reader, obj: c._Dict, base: str) -> Service:
    c._check_kind(r, obj, base, "Service")
    r.known(obj, base, _fields.WORKLOAD)
    meta = _namespaced_meta(r, obj, base, name_is_dns1035_label)  # upstream ValidateServiceName
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.SERVICE_SPEC)
    selector = None if d.get("selector") is None else r.text_map(d, "selector", path)
    return Service(metadata=meta, selector=selector)


def _replication_controller(r: c._Reader, obj: c._Dict, base: str) -> ReplicationController:
    c._check_kind(r, obj, base, "ReplicationController")
    r.known(obj, base, _fields.WORKLOAD)
    meta = _namespaced_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.REPLICA_SET_SPEC)
    template = None
    if d.get("template") is not None:
        template = _template(r, d, path, meta.namespace)
    selector = r.text_map(d, "selector", path)
    if not selector and template is not None:
        selector = dict(template.labels)  # upstream SetDefaults_ReplicationController
    if not selector:
        r.required(c._join(path, "selector"))
    elif template is not None and any(template.labels.get(k) != v for k, v in selector.items()):
        r.invalid(
            c._join(path, "template.metadata.labels"),
            _GoMap(template.labels),
            "`selector` does not match template `labels`",
        )
    return ReplicationController(
        metadata=meta,
        replicas=_replicas(r, d, "replicas", path, 1),
        selector=selector,
        template=template,
    )


# Unread spec fields of the apps/v1 kinds.
_APPS_SPEC = {
    "ReplicaSet": _fields.REPLICA_SET_SPEC,
    "StatefulSet": _fields.STATEFUL_SET_SPEC,
    "Deployment": _fields.DEPLOYMENT_SPEC,
    "DaemonSet": _fields.DAEMON_SET_SPEC,
}


def _apps_parts(
    r: c._Reader, obj: c._Dict, base: str, kind: str, what: str
) -> tuple[ObjectMeta, c._Dict, str, LabelSelector, Pod | None]:
    c._check_kind(r, obj, base, kind)
    r.known(obj, base, _fields.WORKLOAD)
    meta = _namespaced_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _APPS_SPEC[kind])
    selector = _required_selector(r, d, path, what)
    template = _template(r, d, path, meta.namespace)
    _check_template_labels(r, selector, template, path)
    return meta, d, path, selector, template


def _replica_set(r: c._Reader, obj: c._Dict, base: str) -> ReplicaSet | None:
    meta, d, path, selector, template = _apps_parts(r, obj, base, "ReplicaSet", "deployment")
    replicas = _replicas(r, d, "replicas", path, 1)
    if template is None:
        return None
    return ReplicaSet(metadata=meta, replicas=replicas, selector=selector, template=template)


def _stateful_set(r: c._Reader, obj: c._Dict, base: str) -> StatefulSet | None:
    meta, d, path, selector, template = _apps_parts(r, obj, base, "StatefulSet", "statefulset")
    replicas = _replicas(r, d, "replicas", path, 1)
    policy = r.one_of(d, "podManagementPolicy", path, POD_MANAGEMENT_POLICIES, "OrderedReady")
    service_name = r.text(d, "serviceName", path)
    claims = tuple(
        _codec_storage.claim_template(r, t, p, meta.namespace)
        for t, p in r.items(d, "volumeClaimTemplates", path)
    )
    if template is None:
        return None
    return StatefulSet(
        metadata=meta,
        replicas=replicas,
        selector=selector,
        template=template,
        service_name=service_name,
        pod_management_policy=policy,
        volume_claim_templates=claims,
    )


def _deployment(r: c._Reader, obj: c._Dict, base: str) -> Deployment | None:
    meta, d, path, selector, template = _apps_parts(r, obj, base, "Deployment", "deployment")
    replicas = _replicas(r, d, "replicas", path, 1)
    if template is None:
        return None
    return Deployment(metadata=meta, replicas=replicas, selector=selector, template=template)


def _daemon_set(r: c._Reader, obj: c._Dict, base: str) -> DaemonSet | None:
    meta, _, _, selector, template = _apps_parts(r, obj, base, "DaemonSet", "daemonset")
    if template is None:
        return None
    return DaemonSet(metadata=meta, selector=selector, template=template)


def _job(r: c._Reader, obj: c._Dict, base: str) -> Job | None:
    c._check_kind(r, obj, base, "Job")
    r.known(obj, base, _fields.WORKLOAD)
    meta = _namespaced_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    r.known(d, path, _fields.JOB_SPEC)
    completions_given = d.get("completions") is not None
    parallelism = _replicas(r, d, "parallelism", path, 1)
    completions = _replicas(r, d, "completions", path, 1) if completions_given else None
    if completions is None and d.get("parallelism") is None:
        completions = 1  # upstream SetDefaults_Job: neither given means one pod, once
    selector = c._label_selector(r, d, "selector", path)
    template = _template(r, d, path, meta.namespace)
    if selector is not None:
        _check_template_labels(r, selector, template, path)
    if template is None:
        return None
    return Job(
        metadata=meta,
        parallelism=parallelism,
        completions=completions,
        selector=selector,
        template=template,
    )


def _pod_group(r: c._Reader, g: c._Dict, path: str) -> PodGroup:
    name = r.text(g, "name", path)
    if not name:
        r.required(c._join(path, "name"))
    else:
        for msg in name_is_dns_label(name):
            r.invalid(c._join(path, "name"), name, msg)
    ppath = c._join(path, "policy")
    policy = r.map_(g, "policy", path)
    gang: GangSchedulingPolicy | None = None
    if policy is None:
        r.required(ppath)
        return PodGroup(name=name)
    basic = r.map_(policy, "basic", ppath)
    gang_d = r.map_(policy, "gang", ppath)
    if basic is not None:
        r.known(basic, c._join(ppath, "basic"), ())
    if (basic is None) == (gang_d is None):
        r.invalid(ppath, "", "must specify exactly one of: `basic`, `gang`")
    if gang_d is not None:
        gpath = c._join(ppath, "gang")
        min_count = r.integer(gang_d, "minCount", gpath, 0, bits=32)
        if min_count <= 0:
            r.invalid(c._join(gpath, "minCount"), min_count, "must be greater than zero")
        gang = GangSchedulingPolicy(min_count=min_count)
    return PodGroup(name=name, gang=gang)


def _workload(r: c._Reader, obj: c._Dict, base: str) -> Workload:
    """A scheduling.k8s.io/v1alpha1 Workload, validated as upstream ``ValidateWorkload``."""
    c._check_kind(r, obj, base, "Workload")
    r.known(obj, base, _fields.WORKLOAD)
    meta = _namespaced_meta(r, obj, base)
    path = c._join(base, "spec")
    d = r.map_(obj, "spec", base) or {}
    controller: tuple[str, str, str] | None = None
    ref = r.map_(d, "controllerRef", path)
    if ref is not None:
        rpath = c._join(path, "controllerRef")
        controller = (
            r.text(ref, "apiGroup", rpath),
            r.text(ref, "kind", rpath),
            r.text(ref, "name", rpath),
        )
        for key, value in (("kind", controller[1]), ("name", controller[2])):
            if not value:
                r.required(c._join(rpath, key))
    groups_path = c._join(path, "podGroups")
    groups: list[PodGroup] = []
    seen: set[str] = set()
    for g, p in r.items(d, "podGroups", path):
        group = _pod_group(r, g, p)
        if group.name and group.name in seen:
            r.issues.append(FieldIssue(path=c._join(p, "name"), kind=DUPLICATE, value=group.name))
        seen.add(group.name)
        groups.append(group)
    if not groups:
        r.required(groups_path, "must have at least one item")
    elif len(groups) > WORKLOAD_MAX_POD_GROUPS:
        r.issues.append(
            FieldIssue(
                path=groups_path,
                kind="Too many",
                value=len(groups),
                detail=f"must have at most {WORKLOAD_MAX_POD_GROUPS} items",
            )
        )
    return Workload(metadata=meta, pod_groups=tuple(groups), controller_ref=controller)


c._PARSERS.update(
    {
        "Workload": _workload,
        "PriorityClass": _priority_class,
        "Service": _service,
        "ReplicationController": _replication_controller,
        "ReplicaSet": _replica_set,
        "StatefulSet": _stateful_set,
        "Deployment": _deployment,
        "Job": _job,
        "DaemonSet": _daemon_set,
    }
)


# ---- encoders -------------------------------------------------------------------------------


def _template_out(template: Pod) -> dict[str, object]:
    pod = c._pod_out(template)
    meta = pod["metadata"]
    assert isinstance(meta, dict)
    if not meta.get("name"):
        meta.pop("name", None)
    out: dict[str, object] = {"metadata": meta, "spec": pod["spec"]}
    return out


def _object(
    api_version: str, kind: str, meta: ObjectMeta, spec: dict[str, object]
) -> dict[str, object]:
    return {"apiVersion": api_version, "kind": kind, "metadata": c._meta_out(meta), "spec": spec}


def _priority_class_out(pc: PriorityClass) -> dict[str, object]:
    out: dict[str, object] = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": c._meta_out(pc.metadata),
        "value": pc.value,
    }
    c._put(out, "globalDefault", pc.global_default)
    out["preemptionPolicy"] = pc.preemption_policy
    c._put(out, "description", pc.description)
    return out


def _service_out(svc: Service) -> dict[str, object]:
    spec: dict[str, object] = {}
    if svc.selector is not None:
        spec["selector"] = dict(svc.selector)
    return _object("v1", "Service", svc.metadata, spec)


def _rc_out(rc: ReplicationController) -> dict[str, object]:
    spec: dict[str, object] = {"replicas": rc.replicas, "selector": dict(rc.selector)}
    if rc.template is not None:
        spec["template"] = _template_out(rc.template)
    return _object("v1", "ReplicationController", rc.metadata, spec)


def _apps_out(
    kind: str, meta: ObjectMeta, selector: LabelSelector, template: Pod, replicas: int | None
) -> dict[str, object]:
    spec: dict[str, object] = {}
    if replicas is not None:
        spec["replicas"] = replicas
    spec["selector"] = c._selector_out(selector)
    spec["template"] = _template_out(template)
    return _object("apps/v1", kind, meta, spec)


def _stateful_set_out(sts: StatefulSet) -> dict[str, object]:
    out = _apps_out("StatefulSet", sts.metadata, sts.selector, sts.template, sts.replicas)
    spec = out["spec"]
    assert isinstance(spec, dict)
    c._put(spec, "serviceName", sts.service_name)
    spec["podManagementPolicy"] = sts.pod_management_policy
    c._put(
        spec,
        "volumeClaimTemplates",
        [_codec_storage.claim_template_out(t) for t in sts.volume_claim_templates],
    )
    return out


def _job_out(job: Job) -> dict[str, object]:
    spec: dict[str, object] = {"parallelism": job.parallelism}
    if job.completions is not None:
        spec["completions"] = job.completions
    if job.selector is not None:
        spec["selector"] = c._selector_out(job.selector)
    spec["template"] = _template_out(job.template)
    return _object("batch/v1", "Job", job.metadata, spec)


def _workload_out(w: Workload) -> dict[str, object]:
    spec: dict[str, object] = {}
    if w.controller_ref is not None:
        api_group, kind, name = w.controller_ref
        ref: dict[str, object] = {"kind": kind, "name": name}
        c._put(ref, "apiGroup", api_group)
        spec["controllerRef"] = ref
    groups: list[dict[str, object]] = []
    for g in w.pod_groups:
        policy: dict[str, object] = (
            {"basic": {}} if g.gang is None else {"gang": {"minCount": g.gang.min_count}}
        )
        groups.append({"name": g.name, "policy": policy})
    spec["podGroups"] = groups
    return _object("scheduling.k8s.io/v1alpha1", "Workload", w.metadata, spec)


def encode(obj: object) -> dict[str, object] | None:
    """The Kubernetes JSON of one of this module's kinds, or None for another object."""
    if isinstance(obj, Workload):
        return _workload_out(obj)
    if isinstance(obj, PriorityClass):
        return _priority_class_out(obj)
    if isinstance(obj, Service):
        return _service_out(obj)
    if isinstance(obj, ReplicationController):
        return _rc_out(obj)
    if isinstance(obj, ReplicaSet):
        return _apps_out("ReplicaSet", obj.metadata, obj.selector, obj.template, obj.replicas)
    if isinstance(obj, StatefulSet):
        return _stateful_set_out(obj)
    if isinstance(obj, Deployment):
        return _apps_out("Deployment", obj.metadata, obj.selector, obj.template, obj.replicas)
    if isinstance(obj, DaemonSet):
        return _apps_out("DaemonSet", obj.metadata, obj.selector, obj.template, None)
    if isinstance(obj, Job):
        return _job_out(obj)
    return None
