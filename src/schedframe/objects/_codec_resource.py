"""Decoding and encoding of the ``resource.k8s.io/v1`` kinds and the pod's claim fields.

Same machinery as :mod:`schedframe.objects._codec` (a :class:`_Reader` collects every issue
with its field path). The checks are those of upstream ``pkg/apis/resource/validation`` that
decide what the allocator may see: one node-selection field per slice, one value per
attribute, one of ``exactly``/``firstAvailable`` per request, allocation modes and counts,
constraint request names. CEL expressions are compiled when first used (by the allocator),
not here.
"""

from __future__ import annotations

from collections.abc import Mapping

from schedframe.errors import DUPLICATE, FieldIssue
from schedframe.objects import _codec as c
from schedframe.objects import _fields
from schedframe.objects._meta import NodeSelector, ObjectMeta
from schedframe.objects._pod import (
    ContainerExtendedResourceRequest,
    PodExtendedResourceClaimStatus,
    PodResourceClaim,
    PodStatus,
)
from schedframe.objects._quantity import Quantity, parse_quantity
from schedframe.objects._resource import (
    ALLOCATION_MODES,
    AllocatedDeviceStatus,
    AllocationResult,
    CapacityRequestPolicy,
    CELSelector,
    Counter,
    CounterSet,
    Device,
    DeviceAllocationResult,
    DeviceAttribute,
    DeviceCapacity,
    DeviceClaimConfiguration,
    DeviceClass,
    DeviceCondition,
    DeviceConstraint,
    DeviceCounterConsumption,
    DeviceRequest,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    DeviceTaint,
    DeviceToleration,
    ExactDeviceRequest,
    ResourceClaim,
    ResourceClaimConsumerReference,
    ResourceClaimTemplate,
    ResourcePool,
    ResourceSlice,
)

__all__: list[str] = []

_API_VERSION = "resource.k8s.io/v1"
_TOO_MANY = "Too many"  # upstream field.ErrorTypeTooMany
_DEVICE_TAINT_EFFECTS = ("NoExecute", "NoSchedule")
_TOLERATION_OPERATORS = ("Equal", "Exists")
_MAX_DEVICES_PER_SLICE = 128
_NODE_SELECTION = "`nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection`"

# ---- pods -----------------------------------------------------------------------------------


def pod_resource_claims(r: c._Reader, spec: c._Dict, path: str) -> tuple[PodResourceClaim, ...]:
    """``spec.resourceClaims``, validated as upstream ``validatePodResourceClaims``."""
    out = []
    seen: set[str] = set()
    for d, p in r.items(spec, "resourceClaims", path):
        name = r.text(d, "name", p)
        claim_name = r.opt_text(d, "resourceClaimName", p)
        template = r.opt_text(d, "resourceClaimTemplateName", p)
        if not name:
            r.required(c._join(p, "name"))
        elif name in seen:
            r.issues.append(
                FieldIssue(path=c._join(p, "name"), kind=DUPLICATE, value=name, detail="")
            )
        seen.add(name)
        if (claim_name is None) == (template is None):
            r.invalid(
                p,
                "",
                "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`",
            )
        out.append(
            PodResourceClaim(
                name=name, resource_claim_name=claim_name, resource_claim_template_name=template
            )
        )
    return tuple(out)


def pod_claim_statuses(
    r: c._Reader, status: c._Dict, path: str
) -> tuple[tuple[str, str | None], ...]:
    """``status.resourceClaimStatuses`` as (pod claim name, ResourceClaim name) pairs."""
    return tuple(
        (r.text(d, "name", p), r.opt_text(d, "resourceClaimName", p))
        for d, p in r.items(status, "resourceClaimStatuses", path)
    )


def pod_extended_resource_claim_status(
    r: c._Reader, status: c._Dict, path: str
) -> PodExtendedResourceClaimStatus | None:
    """``status.extendedResourceClaimStatus`` (DRAExtendedResource)."""
    d = r.map_(status, "extendedResourceClaimStatus", path)
    if d is None:
        return None
    p = c._join(path, "extendedResourceClaimStatus")
    return PodExtendedResourceClaimStatus(
        resource_claim_name=r.text(d, "resourceClaimName", p),
        request_mappings=tuple(
            ContainerExtendedResourceRequest(
                container_name=r.text(m, "containerName", mp),
                resource_name=r.text(m, "resourceName", mp),
                request_name=r.text(m, "requestName", mp),
            )
            for m, mp in r.items(d, "requestMappings", p)
        ),
    )


def extended_resource_claim_status_out(status: PodStatus) -> dict[str, object] | None:
    """The encoding of :func:`pod_extended_resource_claim_status`."""
    ext = status.extended_resource_claim_status
    if ext is None:
        return None
    return {
        "requestMappings": [
            {
                "containerName": m.container_name,
                "resourceName": m.resource_name,
                "requestName": m.request_name,
            }
            for m in ext.request_mappings
        ],
        "resourceClaimName": ext.resource_claim_name,
    }


def pod_resource_claims_out(claims: tuple[PodResourceClaim, ...]) -> list[dict[str, object]]:
    """The encoding of :func:`pod_resource_claims`."""
    out = []
    for claim in claims:
        entry: dict[str, object] = {"name": claim.name}
        if claim.resource_claim_name is not None:
            entry["resourceClaimName"] = claim.resource_claim_name
        if claim.resource_claim_template_name is not None:
            entry["resourceClaimTemplateName"] = claim.resource_claim_template_name
        out.append(entry)
    return out


def claim_statuses_out(status: PodStatus) -> list[dict[str, object]]:
    """The encoding of :func:`pod_claim_statuses`."""
    out = []
    for name, claim in status.resource_claim_statuses:
        entry: dict[str, object] = {"name": name}
        if claim is not None:
            entry["resourceClaimName"] = claim
        out.append(entry)
    return out


# ---- shared pieces --------------------------------------------------------------------------


def _quantity(r: c._Reader, d: c._Dict, key: str, path: str) -> Quantity | None:
    raw = r.get(d, key, path)
    if raw is None:
        return None
    where = c._join(path, key)
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        r.wrong_type(where, raw, "a quantity")
        return None
    try:
        return parse_quantity(raw)
    except ValueError as exc:
        r.invalid(where, raw, str(exc))
        return None


def _required_quantity(r: c._Reader, d: c._Dict, key: str, path: str) -> Quantity:
    q = _quantity(r, d, key, path)
    if q is None:
        if d.get(key) is None:
            r.required(c._join(path, key))
        return parse_quantity(0)
    return q


def _quantity_map(r: c._Reader, d: c._Dict, key: str, path: str) -> dict[str, Quantity]:
    m = r.map_(d, key, path, open_=True) or {}  # resource names are its keys
    where = c._join(path, key)
    out = {}
    for name in m:
        if not isinstance(name, str):
            r.wrong_type(where, name, "a mapping with string keys")
            continue
        q = _quantity(r, m, name, where)
        if q is not None:
            out[name] = q
    return out


def _counters(r: c._Reader, d: c._Dict, path: str) -> dict[str, Counter]:
    m = r.map_(d, "counters", path, open_=True) or {}  # counter names are its keys
    where = c._join(path, "counters")
    out = {}
    for name, value in m.items():
        p = f"{where}[{name}]"
        if not isinstance(name, str) or not isinstance(value, Mapping):
            r.wrong_type(p, value, "a mapping with a `value`")
            continue
        r.track(value, p)
        out[name] = Counter(value=_required_quantity(r, value, "value", p))
    if not out and d.get("counters") is None:
        r.required(where)
    return out


def _selectors(r: c._Reader, d: c._Dict, path: str) -> tuple[CELSelector, ...]:
    out = []
    for s, p in r.items(d, "selectors", path):
        cel = r.map_(s, "cel", p)
        if cel is None:
            r.required(c._join(p, "cel"))
            continue
        expression = r.text(cel, "expression", c._join(p, "cel"))
        if not expression:
            r.required(c._join(p, "cel.expression"))
        out.append(CELSelector(expression=expression))
    return tuple(out)


def _config(
    r: c._Reader, d: c._Dict, path: str, known: tuple[str, ...] = (), *, requests: bool = True
) -> tuple[DeviceClaimConfiguration, ...]:
    """``config`` entries; a DeviceClass's (``requests=False``) name no requests."""
    out = []
    for cfg, p in r.items(d, "config", path):
        r.known(cfg, p, known)
        opaque = r.map_(cfg, "opaque", p)
        if opaque is None:
            r.required(c._join(p, "opaque"))
            opaque = {}
        op = c._join(p, "opaque")
        driver = r.text(opaque, "driver", op)
        params = r.map_(opaque, "parameters", op, open_=True)  # the driver's own object
        if not driver:
            r.required(c._join(op, "driver"))
        out.append(
            DeviceClaimConfiguration(
                requests=r.texts(cfg, "requests", p) if requests else (),
                driver=driver,
                parameters=dict(params or {}),
            )
        )
    return tuple(out)


def _config_out(config: tuple[DeviceClaimConfiguration, ...]) -> list[dict[str, object]]:
    out = []
    for cfg in config:
        entry: dict[str, object] = {}
        c._put(entry, "requests", list(cfg.requests))
        opaque: dict[str, object] = {"driver": cfg.driver}
        c._put(opaque, "parameters", dict(cfg.parameters))
        entry["opaque"] = opaque
        out.append(entry)
    return out


def _node_selector(r: c._Reader, d: c._Dict, key: str, path: str) -> NodeSelector | None:
    sel = r.map_(d, key, path)
    if sel is None:
        return None
    where = c._join(path, key)
    terms = tuple(
        c._node_selector_term(r, t, p) for t, p in r.items(sel, "nodeSelectorTerms", where)
    )
    if not terms:
        r.required(c._join(where, "nodeSelectorTerms"), "must have at least one node selector term")
    return NodeSelector(node_selector_terms=terms)


def _node_selector_out(sel: NodeSelector) -> dict[str, object]:
    return {"nodeSelectorTerms": [c._term_out(t) for t in sel.node_selector_terms]}


def _tolerations(r: c._Reader, d: c._Dict, path: str) -> tuple[DeviceToleration, ...]:
    out = []
    for t, p in r.items(d, "tolerations", path):
        operator = r.text(t, "operator", p, "Equal")
        key = r.text(t, "key", p)
        value = r.text(t, "value", p)
        effect = r.text(t, "effect", p)
        if operator not in _TOLERATION_OPERATORS:
            r.unsupported(c._join(p, "operator"), operator, _TOLERATION_OPERATORS)
        elif operator == "Exists" and value:
            r.invalid(
                c._join(p, "operator"), operator, "value must be empty when `operator` is 'Exists'"
            )
        if effect and effect not in _DEVICE_TAINT_EFFECTS:
            r.unsupported(c._join(p, "effect"), effect, _DEVICE_TAINT_EFFECTS)
        out.append(
            DeviceToleration(
                key=key,
                operator=operator,
                value=value,
                effect=effect,
                toleration_seconds=r.opt_integer(t, "tolerationSeconds", p),
            )
        )
    return tuple(out)


def _tolerations_out(tolerations: tuple[DeviceToleration, ...]) -> list[dict[str, object]]:
    out = []
    for t in tolerations:
        entry: dict[str, object] = {}
        c._put(entry, "key", t.key)
        entry["operator"] = t.operator
        c._put(entry, "value", t.value)
        c._put(entry, "effect", t.effect)
        if t.toleration_seconds is not None:
            entry["tolerationSeconds"] = t.toleration_seconds
        out.append(entry)
    return out


def _namespaced_meta(r: c._Reader, obj: c._Dict, base: str) -> ObjectMeta:
    meta = c._metadata(r, obj, base, default_namespace="default")
    if not meta.uid:
        meta = c._with_uid(meta, f"{meta.namespace}/{meta.name}")
    return meta


def _cluster_meta(r: c._Reader, obj: c._Dict, base: str) -> ObjectMeta:
    meta = c._metadata(r, obj, base, default_namespace="")
    if not meta.uid:
        meta = c._with_uid(meta, meta.name)
    return meta


# ---- DeviceClass ----------------------------------------------------------------------------


def _device_class(r: c._Reader, obj: c._Dict, base: str) -> DeviceClass:
    c._check_kind(r, obj, base, "DeviceClass")
    meta = _cluster_meta(r, obj, base)
    path = c._join(base, "spec")
    spec = r.map_(obj, "spec", base) or {}
    return DeviceClass(
        metadata=meta,
        selectors=_selectors(r, spec, path),
        config=_config(r, spec, path, requests=False),
        extended_resource_name=r.opt_text(spec, "extendedResourceName", path),
    )


def _device_class_out(dc: DeviceClass) -> dict[str, object]:
    spec: dict[str, object] = {}
    c._put(spec, "selectors", [{"cel": {"expression": s.expression}} for s in dc.selectors])
    c._put(spec, "config", _config_out(dc.config))
    if dc.extended_resource_name is not None:
        spec["extendedResourceName"] = dc.extended_resource_name
    return _object("DeviceClass", dc.metadata, spec)


# ---- ResourceSlice --------------------------------------------------------------------------


def _attribute(r: c._Reader, d: c._Dict, path: str) -> DeviceAttribute:
    attr = DeviceAttribute(
        int_value=r.opt_integer(d, "int", path),
        bool_value=None if d.get("bool") is None else r.flag(d, "bool", path),
        string_value=r.opt_text(d, "string", path),
        version_value=r.opt_text(d, "version", path),
    )
    given = [k for k in ("int", "bool", "string", "version") if d.get(k) is not None]
    if len(given) != 1:
        r.invalid(path, "", "exactly one value must be specified")
    return attr


def _device(r: c._Reader, d: c._Dict, path: str, per_device: bool) -> Device:
    name = r.text(d, "name", path)
    if not name:
        r.required(c._join(path, "name"))
    attrs_map = r.map_(d, "attributes", path, open_=True) or {}  # names are its keys
    attributes = {}
    for key, value in attrs_map.items():
        p = f"{c._join(path, 'attributes')}[{key}]"
        if not isinstance(key, str) or not isinstance(value, Mapping):
            r.wrong_type(p, value, "an attribute mapping")
            continue
        r.track(value, p)  # its keys other than the four values are unknown fields
        attributes[key] = _attribute(r, value, p)
    cap_map = r.map_(d, "capacity", path, open_=True) or {}  # names are its keys
    capacity = {}
    for key, value in cap_map.items():
        p = f"{c._join(path, 'capacity')}[{key}]"
        if not isinstance(key, str) or not isinstance(value, Mapping):
            r.wrong_type(p, value, "a capacity mapping")
            continue
        r.track(value, p)
        capacity[key] = DeviceCapacity(
            value=_required_quantity(r, value, "value", p),
            request_policy=_request_policy(r, value, p),
        )
    consumes = tuple(
        DeviceCounterConsumption(
            counter_set=r.text(cc, "counterSet", p), counters=_counters(r, cc, p)
        )
        for cc, p in r.items(d, "consumesCounters", path)
    )
    taints = []
    for t, p in r.items(d, "taints", path):
        effect = r.text(t, "effect", p)
        if effect not in _DEVICE_TAINT_EFFECTS:
            r.unsupported(c._join(p, "effect"), effect, _DEVICE_TAINT_EFFECTS)
        key = r.text(t, "key", p)
        if not key:
            r.required(c._join(p, "key"))
        taints.append(
            DeviceTaint(
                key=key,
                value=r.text(t, "value", p),
                effect=effect,
                time_added=r.time(t, "timeAdded", p),
            )
        )
    node_name = r.opt_text(d, "nodeName", path)
    node_selector = _node_selector(r, d, "nodeSelector", path)
    all_nodes = None if d.get("allNodes") is None else r.flag(d, "allNodes", path)
    set_count = sum(x is not None for x in (node_name, node_selector, all_nodes))
    if per_device and set_count != 1:
        r.invalid(
            path,
            "",
            "exactly one of `nodeName`, `nodeSelector`, `allNodes` is required "
            "when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )
    elif not per_device and set_count:
        r.invalid(
            path,
            "",
            "`nodeName`, `nodeSelector` and `allNodes` can only be set "
            "if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        )
    return Device(
        name=name,
        attributes=attributes,
        capacity=capacity,
        consumes_counters=consumes,
        node_name=node_name,
        node_selector=node_selector,
        all_nodes=all_nodes,
        taints=tuple(taints),
        binds_to_node=None if d.get("bindsToNode") is None else r.flag(d, "bindsToNode", path),
        binding_conditions=r.texts(d, "bindingConditions", path),
        binding_failure_conditions=r.texts(d, "bindingFailureConditions", path),
        allow_multiple_allocations=(
            None
            if d.get("allowMultipleAllocations") is None
            else r.flag(d, "allowMultipleAllocations", path)
        ),
    )


def _resource_slice(r: c._Reader, obj: c._Dict, base: str) -> ResourceSlice:
    c._check_kind(r, obj, base, "ResourceSlice")
    meta = _cluster_meta(r, obj, base)
    path = c._join(base, "spec")
    spec = r.map_(obj, "spec", base) or {}
    driver = r.text(spec, "driver", path)
    if not driver:
        r.required(c._join(path, "driver"))
    pool_path = c._join(path, "pool")
    pool_d = r.map_(spec, "pool", path)
    if pool_d is None:
        r.required(pool_path)
        pool_d = {}
    pool = ResourcePool(
        name=r.text(pool_d, "name", pool_path),
        generation=r.integer(pool_d, "generation", pool_path),
        resource_slice_count=r.integer(pool_d, "resourceSliceCount", pool_path, 1),
    )
    if not pool.name:
        r.required(c._join(pool_path, "name"))
    if pool.resource_slice_count <= 0:
        r.invalid(
            c._join(pool_path, "resourceSliceCount"),
            pool.resource_slice_count,
            "must be greater than zero",
        )
    node_name = r.opt_text(spec, "nodeName", path)
    node_selector = _node_selector(r, spec, "nodeSelector", path)
    all_nodes = r.flag(spec, "allNodes", path) if spec.get("allNodes") is not None else None
    per_device = (
        r.flag(spec, "perDeviceNodeSelection", path)
        if spec.get("perDeviceNodeSelection") is not None
        else None
    )
    chosen = [
        x
        for x in (node_name or None, node_selector, all_nodes or None, per_device or None)
        if x is not None
    ]
    if not chosen:
        r.required(path, f"exactly one of {_NODE_SELECTION} is required")
    elif len(chosen) > 1:
        r.invalid(
            path, "", f"exactly one of {_NODE_SELECTION} is required, but multiple fields are set"
        )
    devices = tuple(_device(r, dd, p, bool(per_device)) for dd, p in r.items(spec, "devices", path))
    if len(devices) > _MAX_DEVICES_PER_SLICE:
        r.issues.append(
            FieldIssue(
                path=c._join(path, "devices"),
                kind=_TOO_MANY,
                value=len(devices),
                detail=f"must have at most {_MAX_DEVICES_PER_SLICE} items",
            )
        )
    seen: set[str] = set()
    for i, dev in enumerate(devices):
        if dev.name and dev.name in seen:
            r.issues.append(
                FieldIssue(
                    path=f"{c._join(path, 'devices')}[{i}].name",
                    kind=DUPLICATE,
                    value=dev.name,
                    detail="",
                )
            )
        seen.add(dev.name)
    shared = tuple(
        CounterSet(name=r.text(cs, "name", p), counters=_counters(r, cs, p))
        for cs, p in r.items(spec, "sharedCounters", path)
    )
    return ResourceSlice(
        metadata=meta,
        driver=driver,
        pool=pool,
        node_name=node_name or None,
        node_selector=node_selector,
        all_nodes=all_nodes or None,
        per_device_node_selection=per_device or None,
        devices=devices,
        shared_counters=shared,
    )


def _attribute_out(a: DeviceAttribute) -> dict[str, object]:
    if a.int_value is not None:
        return {"int": a.int_value}
    if a.bool_value is not None:
        return {"bool": a.bool_value}
    if a.string_value is not None:
        return {"string": a.string_value}
    return {"version": a.version_value}


def _request_policy(r: c._Reader, d: c._Dict, path: str) -> CapacityRequestPolicy | None:
    """``requestPolicy`` of a capacity (DRAConsumableCapacity), with the API's checks: at
    most one of ``validValues`` and ``validRange``; values ascending and unique; a range's
    ``min`` required and ``max`` not below it; ``default`` one of the allowed values."""
    pol = r.map_(d, "requestPolicy", path)
    if pol is None:
        return None
    where = c._join(path, "requestPolicy")
    default = _quantity(r, pol, "default", where)
    values: list[Quantity] = []
    vpath = c._join(where, "validValues")
    for i, raw in enumerate(r.seq(pol, "validValues", where)):
        if isinstance(raw, bool) or not isinstance(raw, str | int | float):
            r.wrong_type(f"{vpath}[{i}]", raw, "a quantity")
            continue
        try:
            q = parse_quantity(raw)
        except ValueError as exc:
            r.invalid(f"{vpath}[{i}]", raw, str(exc))
            continue
        if values and q.amount <= values[-1].amount:
            r.invalid(f"{vpath}[{i}]", raw, "must be sorted in ascending order and unique")
        values.append(q)
    rng = r.map_(pol, "validRange", where)
    vmin = vmax = step = None
    if rng is not None:
        rpath = c._join(where, "validRange")
        vmin = _required_quantity(r, rng, "min", rpath)
        vmax = _quantity(r, rng, "max", rpath)
        step = _quantity(r, rng, "step", rpath)
        if vmax is not None and vmax.amount < vmin.amount:
            r.invalid(c._join(rpath, "max"), str(vmax), "must be greater than or equal to min")
        if step is not None and step.amount <= 0:
            r.invalid(c._join(rpath, "step"), str(step), "must be greater than zero")
        if values:
            r.forbidden(rpath, "exactly one of validValues and validRange may be set")
    if default is not None:
        if values and default not in values:
            r.invalid(c._join(where, "default"), str(default), "must be one of validValues")
        if vmin is not None and (
            default.amount < vmin.amount or (vmax is not None and default.amount > vmax.amount)
        ):
            r.invalid(c._join(where, "default"), str(default), "must be within validRange")
    return CapacityRequestPolicy(
        default=default,
        valid_values=tuple(values),
        valid_range_min=vmin,
        valid_range_max=vmax,
        valid_range_step=step,
    )


def _request_policy_out(p: CapacityRequestPolicy) -> dict[str, object]:
    out: dict[str, object] = {}
    if p.default is not None:
        out["default"] = str(p.default)
    if p.valid_values:
        out["validValues"] = [str(v) for v in p.valid_values]
    if p.valid_range_min is not None:
        rng: dict[str, object] = {"min": str(p.valid_range_min)}
        if p.valid_range_max is not None:
            rng["max"] = str(p.valid_range_max)
        if p.valid_range_step is not None:
            rng["step"] = str(p.valid_range_step)
        out["validRange"] = rng
    return out


def _capacity_out(cap: DeviceCapacity) -> dict[str, object]:
    out: dict[str, object] = {"value": str(cap.value)}
    if cap.request_policy is not None:
        out["requestPolicy"] = _request_policy_out(cap.request_policy)
    return out


def _counters_out(counters: Mapping[str, Counter]) -> dict[str, object]:
    return {name: {"value": str(cnt.value)} for name, cnt in counters.items()}


def _device_out(d: Device) -> dict[str, object]:
    out: dict[str, object] = {"name": d.name}
    c._put(out, "attributes", {k: _attribute_out(v) for k, v in d.attributes.items()})
    c._put(out, "capacity", {k: _capacity_out(v) for k, v in d.capacity.items()})
    c._put(
        out,
        "consumesCounters",
        [
            {"counterSet": cc.counter_set, "counters": _counters_out(cc.counters)}
            for cc in d.consumes_counters
        ],
    )
    if d.node_name is not None:
        out["nodeName"] = d.node_name
    if d.node_selector is not None:
        out["nodeSelector"] = _node_selector_out(d.node_selector)
    if d.all_nodes is not None:
        out["allNodes"] = d.all_nodes
    taints = []
    for t in d.taints:
        entry: dict[str, object] = {"key": t.key}
        c._put(entry, "value", t.value)
        entry["effect"] = t.effect
        if t.time_added is not None:
            entry["timeAdded"] = c._time_str(t.time_added)
        taints.append(entry)
    c._put(out, "taints", taints)
    if d.binds_to_node is not None:
        out["bindsToNode"] = d.binds_to_node
    c._put(out, "bindingConditions", list(d.binding_conditions))
    c._put(out, "bindingFailureConditions", list(d.binding_failure_conditions))
    if d.allow_multiple_allocations is not None:
        out["allowMultipleAllocations"] = d.allow_multiple_allocations
    return out


def _resource_slice_out(s: ResourceSlice) -> dict[str, object]:
    spec: dict[str, object] = {
        "driver": s.driver,
        "pool": {
            "name": s.pool.name,
            "generation": s.pool.generation,
            "resourceSliceCount": s.pool.resource_slice_count,
        },
    }
    if s.node_name is not None:
        spec["nodeName"] = s.node_name
    if s.node_selector is not None:
        spec["nodeSelector"] = _node_selector_out(s.node_selector)
    if s.all_nodes is not None:
        spec["allNodes"] = s.all_nodes
    if s.per_device_node_selection is not None:
        spec["perDeviceNodeSelection"] = s.per_device_node_selection
    c._put(spec, "devices", [_device_out(d) for d in s.devices])
    c._put(
        spec,
        "sharedCounters",
        [{"name": cs.name, "counters": _counters_out(cs.counters)} for cs in s.shared_counters],
    )
    return _object("ResourceSlice", s.metadata, spec)


# ---- ResourceClaim and ResourceClaimTemplate ------------------------------------------------


def _mode_and_count(r: c._Reader, d: c._Dict, path: str) -> tuple[str, int]:
    mode = r.one_of(d, "allocationMode", path, ALLOCATION_MODES, "ExactCount")
    raw = d.get("count")
    count = r.integer(d, "count", path, 1 if mode == "ExactCount" else 0)
    if mode == "ExactCount" and c._is_int(raw) and count <= 0:
        r.invalid(c._join(path, "count"), count, "must be greater than zero")
    elif mode == "All" and raw is not None:
        r.invalid(
            c._join(path, "count"), count, "must not be specified when allocationMode is 'All'"
        )
    return mode, count


def _capacity_requests(r: c._Reader, d: c._Dict, path: str) -> dict[str, Quantity]:
    cap = r.map_(d, "capacity", path)
    if cap is None:
        return {}
    return _quantity_map(r, cap, "requests", c._join(path, "capacity"))


def _class_name(r: c._Reader, d: c._Dict, path: str) -> str:
    name = r.text(d, "deviceClassName", path)
    if not name:
        r.required(c._join(path, "deviceClassName"))
    return name


def _request(r: c._Reader, d: c._Dict, path: str) -> DeviceRequest:
    name = r.text(d, "name", path)
    if not name:
        r.required(c._join(path, "name"))
    exactly_d = r.map_(d, "exactly", path)
    exactly = None
    if exactly_d is not None:
        p = c._join(path, "exactly")
        mode, count = _mode_and_count(r, exactly_d, p)
        exactly = ExactDeviceRequest(
            device_class_name=_class_name(r, exactly_d, p),
            selectors=_selectors(r, exactly_d, p),
            allocation_mode=mode,
            count=count,
            admin_access=(
                None
                if exactly_d.get("adminAccess") is None
                else r.flag(exactly_d, "adminAccess", p)
            ),
            tolerations=_tolerations(r, exactly_d, p),
            capacity_requests=_capacity_requests(r, exactly_d, p),
        )
    subs = []
    sub_names: set[str] = set()
    for sd, p in r.items(d, "firstAvailable", path):
        mode, count = _mode_and_count(r, sd, p)
        sub_name = r.text(sd, "name", p)
        if not sub_name:
            r.required(c._join(p, "name"))
        elif sub_name in sub_names:
            r.issues.append(
                FieldIssue(path=c._join(p, "name"), kind=DUPLICATE, value=sub_name, detail="")
            )
        sub_names.add(sub_name)
        subs.append(
            DeviceSubRequest(
                name=sub_name,
                device_class_name=_class_name(r, sd, p),
                selectors=_selectors(r, sd, p),
                allocation_mode=mode,
                count=count,
                tolerations=_tolerations(r, sd, p),
                capacity_requests=_capacity_requests(r, sd, p),
            )
        )
    if (exactly is None) == (not subs):
        r.invalid(path, "", "exactly one of `exactly` or `firstAvailable` is required")
    return DeviceRequest(name=name, exactly=exactly, first_available=tuple(subs))


def _claim_spec(r: c._Reader, spec: c._Dict, path: str, meta: ObjectMeta) -> ResourceClaim:
    devices_path = c._join(path, "devices")
    devices = r.map_(spec, "devices", path) or {}
    requests = tuple(_request(r, d, p) for d, p in r.items(devices, "requests", devices_path))
    names: dict[str, set[str]] = {}
    for i, req in enumerate(requests):
        if req.name in names:
            r.issues.append(
                FieldIssue(
                    path=f"{c._join(devices_path, 'requests')}[{i}].name",
                    kind=DUPLICATE,
                    value=req.name,
                    detail="",
                )
            )
        names[req.name] = {s.name for s in req.first_available}
    constraints = []
    for cd, p in r.items(devices, "constraints", devices_path):
        refs = r.texts(cd, "requests", p)
        for i, ref in enumerate(refs):
            parent, _, sub = ref.partition("/")
            if parent not in names or (sub and sub not in names[parent]):
                r.invalid(
                    f"{c._join(p, 'requests')}[{i}]",
                    ref,
                    "must be the name of a request in the claim or the name of a request "
                    "and a subrequest separated by '/'",
                )
        match = r.opt_text(cd, "matchAttribute", p)
        distinct = r.opt_text(cd, "distinctAttribute", p)
        if (match is None) == (distinct is None):
            r.invalid(p, "", "exactly one of `matchAttribute` or `distinctAttribute` is required")
        constraints.append(
            DeviceConstraint(requests=refs, match_attribute=match, distinct_attribute=distinct)
        )
    return ResourceClaim(
        metadata=meta,
        requests=requests,
        constraints=tuple(constraints),
        config=_config(r, devices, devices_path),
    )


def _allocation(r: c._Reader, d: c._Dict, path: str) -> AllocationResult:
    dev_path = c._join(path, "devices")
    dev = r.map_(d, "devices", path) or {}
    results = tuple(
        DeviceRequestAllocationResult(
            request=r.text(x, "request", p),
            driver=r.text(x, "driver", p),
            pool=r.text(x, "pool", p),
            device=r.text(x, "device", p),
            admin_access=None if x.get("adminAccess") is None else r.flag(x, "adminAccess", p),
            tolerations=_tolerations(r, x, p),
            binding_conditions=r.texts(x, "bindingConditions", p),
            binding_failure_conditions=r.texts(x, "bindingFailureConditions", p),
            share_id=r.opt_text(x, "shareID", p),
            consumed_capacity=_quantity_map(r, x, "consumedCapacity", p),
        )
        for x, p in r.items(dev, "results", dev_path)
    )
    return AllocationResult(
        devices=DeviceAllocationResult(
            results=results,
            config=_config(r, dev, dev_path, _fields.DEVICE_ALLOCATION_CONFIGURATION),
        ),
        node_selector=_node_selector(r, d, "nodeSelector", path),
        allocation_timestamp=r.time(d, "allocationTimestamp", path),
    )


def _resource_claim(r: c._Reader, obj: c._Dict, base: str) -> ResourceClaim:
    c._check_kind(r, obj, base, "ResourceClaim")
    meta = _namespaced_meta(r, obj, base)
    claim = _claim_spec(r, r.map_(obj, "spec", base) or {}, c._join(base, "spec"), meta)
    spath = c._join(base, "status")
    status = r.map_(obj, "status", base) or {}
    r.known(status, spath, _fields.RESOURCE_CLAIM_STATUS)
    alloc = r.map_(status, "allocation", spath)
    reserved = tuple(
        ResourceClaimConsumerReference(
            resource=r.text(x, "resource", p),
            name=r.text(x, "name", p),
            uid=r.text(x, "uid", p),
            api_group=r.text(x, "apiGroup", p),
        )
        for x, p in r.items(status, "reservedFor", spath)
    )
    return ResourceClaim(
        metadata=meta,
        requests=claim.requests,
        constraints=claim.constraints,
        config=claim.config,
        allocation=None if alloc is None else _allocation(r, alloc, c._join(spath, "allocation")),
        reserved_for=reserved,
        devices=tuple(_device_status(r, d, p) for d, p in r.items(status, "devices", spath)),
    )


def _device_status(r: c._Reader, d: c._Dict, path: str) -> AllocatedDeviceStatus:
    network = r.map_(d, "networkData", path, open_=True)
    return AllocatedDeviceStatus(
        driver=r.text(d, "driver", path),
        pool=r.text(d, "pool", path),
        device=r.text(d, "device", path),
        share_id=r.opt_text(d, "shareID", path),
        conditions=tuple(
            DeviceCondition(
                type=r.text(x, "type", p),
                status=r.text(x, "status", p),
                reason=r.text(x, "reason", p),
                message=r.text(x, "message", p),
                last_transition_time=r.time(x, "lastTransitionTime", p),
                observed_generation=r.opt_integer(x, "observedGeneration", p),
            )
            for x, p in r.items(d, "conditions", path)
        ),
        data=r.get(d, "data", path),
        network_data=None if network is None else dict(network),
    )


def _device_status_out(s: AllocatedDeviceStatus) -> dict[str, object]:
    out: dict[str, object] = {"driver": s.driver, "pool": s.pool, "device": s.device}
    if s.share_id is not None:
        out["shareID"] = s.share_id
    conditions = []
    for x in s.conditions:
        entry: dict[str, object] = {"type": x.type, "status": x.status}
        if x.observed_generation is not None:
            entry["observedGeneration"] = x.observed_generation
        if x.last_transition_time is not None:
            entry["lastTransitionTime"] = c._time_str(x.last_transition_time)
        entry["reason"] = x.reason
        entry["message"] = x.message
        conditions.append(entry)
    c._put(out, "conditions", conditions)
    if s.data is not None:
        out["data"] = s.data
    if s.network_data is not None:
        out["networkData"] = dict(s.network_data)
    return out


def _resource_claim_template(r: c._Reader, obj: c._Dict, base: str) -> ResourceClaimTemplate:
    c._check_kind(r, obj, base, "ResourceClaimTemplate")
    meta = _namespaced_meta(r, obj, base)
    path = c._join(base, "spec")
    spec = r.map_(obj, "spec", base) or {}
    inner_meta_d = r.map_(spec, "metadata", path) or {}
    mp = c._join(path, "metadata")
    r.known(inner_meta_d, mp, _fields.CLAIM_TEMPLATE_META)
    claim_meta = ObjectMeta(
        name="",
        labels=r.text_map(inner_meta_d, "labels", mp),
        annotations=r.text_map(inner_meta_d, "annotations", mp),
    )
    inner = r.map_(spec, "spec", path) or {}
    claim = _claim_spec(r, inner, c._join(path, "spec"), ObjectMeta(name=""))
    return ResourceClaimTemplate(metadata=meta, claim_metadata=claim_meta, claim=claim)


def _request_out(req: DeviceRequest) -> dict[str, object]:
    out: dict[str, object] = {"name": req.name}
    if req.exactly is not None:
        e = req.exactly
        ex: dict[str, object] = {"deviceClassName": e.device_class_name}
        c._put(ex, "selectors", [{"cel": {"expression": s.expression}} for s in e.selectors])
        ex["allocationMode"] = e.allocation_mode
        if e.allocation_mode == "ExactCount":
            ex["count"] = e.count
        if e.admin_access is not None:
            ex["adminAccess"] = e.admin_access
        c._put(ex, "tolerations", _tolerations_out(e.tolerations))
        if e.capacity_requests:
            ex["capacity"] = {"requests": {k: str(v) for k, v in e.capacity_requests.items()}}
        out["exactly"] = ex
    subs = []
    for s in req.first_available:
        sub: dict[str, object] = {"name": s.name, "deviceClassName": s.device_class_name}
        c._put(sub, "selectors", [{"cel": {"expression": x.expression}} for x in s.selectors])
        sub["allocationMode"] = s.allocation_mode
        if s.allocation_mode == "ExactCount":
            sub["count"] = s.count
        c._put(sub, "tolerations", _tolerations_out(s.tolerations))
        if s.capacity_requests:
            sub["capacity"] = {"requests": {k: str(v) for k, v in s.capacity_requests.items()}}
        subs.append(sub)
    c._put(out, "firstAvailable", subs)
    return out


def _claim_spec_out(claim: ResourceClaim) -> dict[str, object]:
    devices: dict[str, object] = {}
    c._put(devices, "requests", [_request_out(q) for q in claim.requests])
    constraints = []
    for con in claim.constraints:
        entry: dict[str, object] = {}
        c._put(entry, "requests", list(con.requests))
        if con.match_attribute is not None:
            entry["matchAttribute"] = con.match_attribute
        if con.distinct_attribute is not None:
            entry["distinctAttribute"] = con.distinct_attribute
        constraints.append(entry)
    c._put(devices, "constraints", constraints)
    c._put(devices, "config", _config_out(claim.config))
    out: dict[str, object] = {}
    c._put(out, "devices", devices)
    return out


def _allocation_out(a: AllocationResult) -> dict[str, object]:
    results = []
    for x in a.devices.results:
        entry: dict[str, object] = {
            "request": x.request,
            "driver": x.driver,
            "pool": x.pool,
            "device": x.device,
        }
        if x.admin_access is not None:
            entry["adminAccess"] = x.admin_access
        c._put(entry, "tolerations", _tolerations_out(x.tolerations))
        c._put(entry, "bindingConditions", list(x.binding_conditions))
        c._put(entry, "bindingFailureConditions", list(x.binding_failure_conditions))
        if x.share_id is not None:
            entry["shareID"] = x.share_id
        c._put(entry, "consumedCapacity", {k: str(v) for k, v in x.consumed_capacity.items()})
        results.append(entry)
    devices: dict[str, object] = {}
    c._put(devices, "results", results)
    c._put(devices, "config", _config_out(a.devices.config))
    out: dict[str, object] = {"devices": devices}
    if a.node_selector is not None:
        out["nodeSelector"] = _node_selector_out(a.node_selector)
    if a.allocation_timestamp is not None:
        out["allocationTimestamp"] = c._time_str(a.allocation_timestamp)
    return out


def _resource_claim_out(claim: ResourceClaim) -> dict[str, object]:
    out = _object("ResourceClaim", claim.metadata, _claim_spec_out(claim))
    status: dict[str, object] = {}
    if claim.allocation is not None:
        status["allocation"] = _allocation_out(claim.allocation)
    reserved = []
    for ref in claim.reserved_for:
        entry: dict[str, object] = {"resource": ref.resource, "name": ref.name, "uid": ref.uid}
        c._put(entry, "apiGroup", ref.api_group)
        reserved.append(entry)
    c._put(status, "reservedFor", reserved)
    c._put(status, "devices", [_device_status_out(d) for d in claim.devices])
    c._put(out, "status", status)
    return out


def _template_out(t: ResourceClaimTemplate) -> dict[str, object]:
    meta: dict[str, object] = {}
    c._put(meta, "labels", dict(t.claim_metadata.labels))
    c._put(meta, "annotations", dict(t.claim_metadata.annotations))
    spec: dict[str, object] = {}
    c._put(spec, "metadata", meta)
    spec["spec"] = _claim_spec_out(t.claim)
    return _object("ResourceClaimTemplate", t.metadata, spec)


def _object(kind: str, meta: ObjectMeta, spec: dict[str, object]) -> dict[str, object]:
    return {"apiVersion": _API_VERSION, "kind": kind, "metadata": c._meta_out(meta), "spec": spec}


def encode(obj: object) -> dict[str, object] | None:
    """The Kubernetes JSON of one of this module's kinds, or None for another object."""
    if isinstance(obj, DeviceClass):
        return _device_class_out(obj)
    if isinstance(obj, ResourceSlice):
        return _resource_slice_out(obj)
    if isinstance(obj, ResourceClaim):
        return _resource_claim_out(obj)
    if isinstance(obj, ResourceClaimTemplate):
        return _template_out(obj)
    return None


c._PARSERS.update(
    {
        "DeviceClass": _device_class,
        "ResourceSlice": _resource_slice,
        "ResourceClaim": _resource_claim,
        "ResourceClaimTemplate": _resource_claim_template,
    }
)
