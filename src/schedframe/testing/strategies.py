"""Hypothesis strategies for schedframe objects, configurations and whole consistent clusters.

Requires the hypothesis package to be installed (``pip install schedframe[testing]``).

Every strategy takes keyword-only arguments; the parts it is built from are sub-strategies you
can swap (``pods(tolerations=st.just(()))``). Objects are valid by construction (no heavy
``.filter()``), drawn from small vocabularies so that selectors, taints and tolerations
actually meet, and small by default so failures shrink to something readable::

    from hypothesis import given
    from schedframe.testing import strategies as sst

    @given(sst.clusters(max_nodes=3, max_pending=4, taints=True))
    def test_nothing_overcommitted(cluster): ...

After the ``hypothesis`` entry point ran (it does when hypothesis is imported and schedframe
is installed), ``st.from_type(Pod)`` and friends use these strategies.

Over 1,000 lines on purpose: it is one public module of many small strategies (one per object
kind and part) that are built from one another and share the same small vocabularies; split,
each part would import most of the others.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import UTC as _UTC
from datetime import datetime, timedelta
from fractions import Fraction
from typing import Final, Literal

import attrs
from hypothesis import strategies as st

from schedframe.config import KubeSchedulerConfiguration, load_config
from schedframe.objects import (
    BINARY_SI as _BINARY_SI,
)
from schedframe.objects import (
    CPU as _CPU,
)
from schedframe.objects import (
    DECIMAL_EXPONENT as _DECIMAL_EXPONENT,
)
from schedframe.objects import (
    DECIMAL_SI as _DECIMAL_SI,
)
from schedframe.objects import (
    DEFAULT_SCHEDULER_NAME as _DEFAULT_SCHEDULER_NAME,
)
from schedframe.objects import (
    EPHEMERAL_STORAGE as _EPHEMERAL_STORAGE,
)
from schedframe.objects import (
    MEMORY as _MEMORY,
)
from schedframe.objects import (
    PODS as _PODS,
)
from schedframe.objects import (
    TAINT_EFFECTS as _TAINT_EFFECTS,
)
from schedframe.objects import (
    Affinity,
    Container,
    ContainerImage,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    NodeSpec,
    NodeStatus,
    ObjectMeta,
    Pod,
    PodAffinity,
    PodAffinityTerm,
    PodAntiAffinity,
    PodDisruptionBudget,
    PodSpec,
    PodStatus,
    PreferredSchedulingTerm,
    Quantity,
    ResourceList,
    Taint,
    Toleration,
    TopologySpreadConstraint,
    Volume,
    WeightedPodAffinityTerm,
    resource_quantity,
)
from schedframe.objects._apivalidation import is_overcommit_allowed
from schedframe.testing._cluster import Cluster
from schedframe.testing._fit import fits_on, reserve_on
from schedframe.testing.builders import LABEL_HOSTNAME as _LABEL_HOSTNAME
from schedframe.testing.builders import LABEL_ZONE as _LABEL_ZONE

__all__ = [
    "DEFAULT_IMAGES",
    "DEFAULT_ZONES",
    "GPU",
    "LABEL_KEYS",
    "LABEL_VALUES",
    "NODE_LABEL_KEYS",
    "Cluster",
    "affinities",
    "clusters",
    "configs",
    "containers",
    "label_selectors",
    "labels",
    "names",
    "namespaces",
    "node_affinities",
    "node_selector_requirements",
    "node_selector_terms",
    "node_selectors",
    "nodes",
    "pod_affinity_terms",
    "pod_disruption_budgets",
    "pods",
    "quantities",
    "resource_amounts",
    "resource_lists",
    "taints",
    "tolerations",
    "topology_spread_constraints",
    "volumes",
]

#: An extended resource the strategies use (devices are counted in units).
GPU: Final = "nvidia.com/gpu"
#: Zones :func:`clusters` spreads nodes over.
DEFAULT_ZONES: Final = ("zone-a", "zone-b", "zone-c")
#: Pod label keys drawn by default; selectors use the same ones, so they match something.
LABEL_KEYS: Final = ("app", "tier", "example.com/team")
#: Label values drawn by default.
LABEL_VALUES: Final = ("a", "b", "c")
#: Node label keys (besides hostname and zone) that node selectors and affinities target.
NODE_LABEL_KEYS: Final = ("disktype", "example.com/generation")
#: Images pods run and nodes hold.
DEFAULT_IMAGES: Final = ("registry.k8s.io/pause:3.10", "nginx:1.27", "redis:7")

_NODE_LABEL_VALUES: Final = {"disktype": ("ssd", "hdd"), "example.com/generation": ("1", "2", "3")}
_TAINT_KEYS: Final = ("dedicated", "example.com/gpu", "node.kubernetes.io/maintenance")
_TAINT_VALUES: Final = ("", "a", "b")
_NAMESPACES: Final = ("default", "team-a", "team-b")
_CLAIMS: Final = ("data", "logs")
_HOST_PORTS: Final = (80, 443, 8080)
_START: Final = datetime(2024, 1, 1, tzinfo=_UTC)
_ALNUM: Final = "abcdefghijklmnopqrstuvwxyz0123456789"
_KI: Final = 1024
_MI: Final = 1024 * 1024
_GI: Final = 1024 * 1024 * 1024

_Strategy = st.SearchStrategy


# --------------------------------------------------------------------------------------------
# Names, labels, quantities
# --------------------------------------------------------------------------------------------


def names(*, min_size: int = 1, max_size: int = 8) -> _Strategy[str]:
    """DNS-1123 labels (``[a-z0-9]([-a-z0-9]*[a-z0-9])?``), valid object names.

    Requires the hypothesis package to be installed.
    """
    if min_size < 1 or max_size < min_size or max_size > 63:
        raise ValueError("names need 1 <= min_size <= max_size <= 63")
    plain = st.text(_ALNUM, min_size=min_size, max_size=max_size)
    if max_size < 3:
        return plain

    def dashed(parts: tuple[str, str]) -> str:
        return f"{parts[0]}-{parts[1]}"[:max_size].rstrip("-")

    half = max(1, (max_size - 1) // 2)
    return plain | st.tuples(
        st.text(_ALNUM, min_size=1, max_size=half), st.text(_ALNUM, min_size=1, max_size=half)
    ).map(dashed).filter(lambda s: len(s) >= min_size)


def labels(
    *,
    keys: _Strategy[str] | None = None,
    values: _Strategy[str] | None = None,
    max_size: int = 2,
) -> _Strategy[dict[str, str]]:
    """Label maps, by default over :data:`LABEL_KEYS` and :data:`LABEL_VALUES`.

    Requires the hypothesis package to be installed.
    """
    return st.dictionaries(
        keys if keys is not None else st.sampled_from(LABEL_KEYS),
        values if values is not None else st.sampled_from(LABEL_VALUES),
        max_size=max_size,
    )


def resource_amounts(
    resource: str, *, kind: Literal["request", "capacity"] = "request"
) -> _Strategy[int]:
    """Amounts of ``resource`` in scheduler integers (millicores for ``cpu``, units otherwise).

    ``kind="request"`` gives what a container asks for (zero included); ``kind="capacity"``
    what a node offers. Amounts are round (multiples of 50m, 128Mi, ...) and sized so that a
    handful of pods fill a node.

    Requires the hypothesis package to be installed.
    """
    request = kind == "request"
    if resource == _CPU:
        return (
            st.integers(0, 40).map(lambda k: k * 50)
            if request
            else st.integers(1, 16).map(lambda k: k * 500)
        )
    if resource == _MEMORY:
        return (
            st.integers(0, 16).map(lambda k: k * 128 * _MI)
            if request
            else st.integers(1, 32).map(lambda k: k * 512 * _MI)
        )
    if resource == _EPHEMERAL_STORAGE:
        return (
            st.integers(0, 4).map(lambda k: k * _GI)
            if request
            else st.integers(4, 40).map(lambda k: k * _GI)
        )
    if resource == _PODS:
        return st.integers(0, 1) if request else st.integers(2, 16)
    if resource.startswith("hugepages-"):
        return (
            st.integers(0, 4).map(lambda k: k * 2 * _MI)
            if request
            else st.integers(0, 64).map(lambda k: k * 2 * _MI)
        )
    return st.integers(0, 2) if request else st.integers(0, 4)


def resource_lists(
    *,
    resources: Sequence[str] = (_CPU, _MEMORY, _EPHEMERAL_STORAGE, GPU),
    required: Sequence[str] = (),
    kind: Literal["request", "capacity"] = "request",
    amounts: Callable[[str], _Strategy[int]] | None = None,
) -> _Strategy[ResourceList]:
    """Resource lists (``{"cpu": 500, "memory": 1073741824}``) over ``resources``.

    Every name in ``required`` is present; the others may be. ``amounts(name)`` overrides
    :func:`resource_amounts`.

    Requires the hypothesis package to be installed.
    """
    amount_of = amounts if amounts is not None else (lambda n: resource_amounts(n, kind=kind))
    # Strategies are built once, here: building one per draw costs more than drawing from it.
    by_name = {name: amount_of(name) for name in (*resources, *required)}
    optional = [r for r in resources if r not in required]
    chosen: _Strategy[list[str]] = (
        st.lists(st.sampled_from(optional), unique=True) if optional else st.just([])
    )

    @st.composite
    def build(draw: st.DrawFn) -> ResourceList:
        out = {name: draw(by_name[name]) for name in required}
        for name in draw(chosen):
            out[name] = draw(by_name[name])
        return out

    return build()


def quantities(
    *,
    resource: str | None = None,
    min_amount: int = 0,
    max_amount: int = 2**40,
) -> _Strategy[Quantity]:
    """Exact :class:`~schedframe.objects.Quantity` values.

    With ``resource``, quantities of that resource as kubectl would print them, from
    scheduler integers in ``[min_amount, max_amount]``; without, any amount of whole or milli
    units in any of the three formats.

    Requires the hypothesis package to be installed.
    """
    amounts = st.integers(min_amount, max_amount)
    if resource is not None:
        return amounts.map(lambda a: resource_quantity(resource, a))
    scales = st.sampled_from((Fraction(1), Fraction(1, 1000), Fraction(1024), Fraction(_MI)))
    return st.builds(
        lambda a, s, f: Quantity(amount=a * s, format=f),
        amounts,
        scales,
        st.sampled_from((_DECIMAL_SI, _BINARY_SI, _DECIMAL_EXPONENT)),
    )


# --------------------------------------------------------------------------------------------
# Taints, tolerations, selectors, affinity, spreading
# --------------------------------------------------------------------------------------------


def taints(
    *,
    keys: _Strategy[str] | None = None,
    values: _Strategy[str] | None = None,
    effects: _Strategy[str] | None = None,
) -> _Strategy[Taint]:
    """Node taints over a small vocabulary of keys and values, any effect.

    Requires the hypothesis package to be installed.
    """
    return st.builds(
        Taint,
        key=keys if keys is not None else st.sampled_from(_TAINT_KEYS),
        value=values if values is not None else st.sampled_from(_TAINT_VALUES),
        effect=effects if effects is not None else st.sampled_from(_TAINT_EFFECTS),
    )


def tolerations(
    *,
    keys: _Strategy[str] | None = None,
    values: _Strategy[str] | None = None,
    effects: _Strategy[str] | None = None,
    operators: _Strategy[str] | None = None,
) -> _Strategy[Toleration]:
    """Tolerations the API server accepts, over the vocabulary of :func:`taints`.

    ``Exists`` has no value; an empty key needs ``Exists`` (it tolerates every taint);
    ``tolerationSeconds`` is set only for ``NoExecute``.

    Requires the hypothesis package to be installed.
    """
    keys = keys if keys is not None else st.sampled_from(("", *_TAINT_KEYS))
    values = values if values is not None else st.sampled_from(_TAINT_VALUES)
    effects = effects if effects is not None else st.sampled_from(("", *_TAINT_EFFECTS))
    operators = operators if operators is not None else st.sampled_from(("Equal", "Exists"))
    seconds_ = st.none() | st.integers(0, 600)

    @st.composite
    def build(draw: st.DrawFn) -> Toleration:
        key = draw(keys)
        operator = "Exists" if not key else draw(operators)
        value = "" if operator == "Exists" else draw(values)
        effect = draw(effects)
        seconds = draw(seconds_) if effect == "NoExecute" else None
        return Toleration(
            key=key, operator=operator, value=value, effect=effect, toleration_seconds=seconds
        )

    return build()


def label_selectors(
    *,
    keys: _Strategy[str] | None = None,
    values: _Strategy[str] | None = None,
    operators: Sequence[str] = ("In", "NotIn", "Exists", "DoesNotExist"),
    max_labels: int = 1,
    max_expressions: int = 1,
) -> _Strategy[LabelSelector]:
    """Label selectors over the pod label vocabulary (the empty selector included).

    Requires the hypothesis package to be installed.
    """
    keys = keys if keys is not None else st.sampled_from(LABEL_KEYS)
    values = values if values is not None else st.sampled_from(LABEL_VALUES)
    ops = st.sampled_from(tuple(operators))
    value_lists = st.lists(values, min_size=1, max_size=2, unique=True)

    @st.composite
    def requirement(draw: st.DrawFn) -> LabelSelectorRequirement:
        op = draw(ops)
        vals: tuple[str, ...] = ()
        if op in ("In", "NotIn"):
            vals = tuple(draw(value_lists))
        return LabelSelectorRequirement(key=draw(keys), operator=op, values=vals)

    return st.builds(
        LabelSelector,
        match_labels=st.dictionaries(keys, values, max_size=max_labels),
        match_expressions=st.lists(requirement(), max_size=max_expressions).map(tuple),
    )


def _node_label_values(key: str) -> tuple[str, ...]:
    if key == _LABEL_ZONE:
        return DEFAULT_ZONES
    if key == _LABEL_HOSTNAME:
        return tuple(f"node-{i}" for i in range(4))
    return _NODE_LABEL_VALUES.get(key, LABEL_VALUES)


def node_selector_requirements(
    *,
    keys: _Strategy[str] | None = None,
    operators: Sequence[str] = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"),
) -> _Strategy[NodeSelectorRequirement]:
    """Node selector expressions over node labels (zone, hostname, :data:`NODE_LABEL_KEYS`).

    ``Gt``/``Lt`` get one integer value; ``In``/``NotIn`` at least one value.

    Requires the hypothesis package to be installed.
    """
    keys = keys if keys is not None else st.sampled_from((_LABEL_ZONE, *NODE_LABEL_KEYS))
    ops = st.sampled_from(tuple(operators))
    numbers = st.integers(0, 4)
    value_lists: dict[str, _Strategy[list[str]]] = {}

    @st.composite
    def build(draw: st.DrawFn) -> NodeSelectorRequirement:
        key = draw(keys)
        op = draw(ops)
        vals: tuple[str, ...] = ()
        if op in ("In", "NotIn"):
            lists = value_lists.get(key)
            if lists is None:
                lists = value_lists[key] = st.lists(
                    st.sampled_from(_node_label_values(key)), min_size=1, max_size=2, unique=True
                )
            vals = tuple(draw(lists))
        elif op in ("Gt", "Lt"):
            vals = (str(draw(numbers)),)
        return NodeSelectorRequirement(key=key, operator=op, values=vals)

    return build()


def node_selector_terms(
    *,
    expressions: _Strategy[NodeSelectorRequirement] | None = None,
    max_expressions: int = 2,
    fields: bool = True,
) -> _Strategy[NodeSelectorTerm]:
    """Node selector terms with at least one requirement (an empty term selects nothing).

    With ``fields``, a term may also carry a ``metadata.name`` field requirement.

    Requires the hypothesis package to be installed.
    """
    exprs = expressions if expressions is not None else node_selector_requirements()
    field_reqs = (
        st.lists(
            st.builds(
                NodeSelectorRequirement,
                key=st.just("metadata.name"),
                operator=st.sampled_from(("In", "NotIn")),
                values=st.integers(0, 3).map(lambda i: (f"node-{i}",)),
            ),
            max_size=1,
        ).map(tuple)
        if fields
        else st.just(())
    )

    some = st.lists(exprs, min_size=1, max_size=max(max_expressions, 1))
    maybe = st.lists(exprs, max_size=max(max_expressions, 1))

    @st.composite
    def build(draw: st.DrawFn) -> NodeSelectorTerm:
        fields_ = draw(field_reqs)
        exprs_ = tuple(draw(maybe if fields_ else some))
        return NodeSelectorTerm(match_expressions=exprs_, match_fields=fields_)

    return build()


def node_selectors(
    *, terms: _Strategy[NodeSelectorTerm] | None = None, max_terms: int = 2
) -> _Strategy[NodeSelector]:
    """Required node selectors: one or more terms, ORed.

    Requires the hypothesis package to be installed.
    """
    return st.builds(
        NodeSelector,
        node_selector_terms=st.lists(
            terms if terms is not None else node_selector_terms(), min_size=1, max_size=max_terms
        ).map(tuple),
    )


def node_affinities(
    *,
    required: _Strategy[NodeSelector | None] | None = None,
    preferred: _Strategy[tuple[PreferredSchedulingTerm, ...]] | None = None,
) -> _Strategy[NodeAffinity]:
    """Node affinity: an optional required selector and up to two weighted preferences.

    Requires the hypothesis package to be installed.
    """
    return st.builds(
        NodeAffinity,
        required=required if required is not None else st.none() | node_selectors(),
        preferred=preferred
        if preferred is not None
        else st.lists(
            st.builds(
                PreferredSchedulingTerm,
                weight=st.integers(1, 100),
                preference=node_selector_terms(fields=False),
            ),
            max_size=2,
        ).map(tuple),
    )


def pod_affinity_terms(
    *,
    selectors: _Strategy[LabelSelector | None] | None = None,
    topology_keys: _Strategy[str] | None = None,
    namespaces: _Strategy[tuple[str, ...]] | None = None,
    namespace_selectors: _Strategy[LabelSelector | None] | None = None,
) -> _Strategy[PodAffinityTerm]:
    """Pod (anti-)affinity terms over hostname or zone, selecting pods by the label vocabulary.

    Requires the hypothesis package to be installed.
    """
    return st.builds(
        PodAffinityTerm,
        label_selector=selectors if selectors is not None else label_selectors(),
        topology_key=topology_keys
        if topology_keys is not None
        else st.sampled_from((_LABEL_HOSTNAME, _LABEL_ZONE)),
        namespaces=namespaces
        if namespaces is not None
        else st.just(())
        | st.lists(st.sampled_from(_NAMESPACES), max_size=2, unique=True).map(tuple),
        namespace_selector=namespace_selectors
        if namespace_selectors is not None
        else st.just(None),
    )


def _weighted(terms: _Strategy[PodAffinityTerm]) -> _Strategy[tuple[WeightedPodAffinityTerm, ...]]:
    return st.lists(
        st.builds(WeightedPodAffinityTerm, weight=st.integers(1, 100), term=terms), max_size=1
    ).map(tuple)


def affinities(
    *,
    node_affinity: _Strategy[NodeAffinity | None] | None = None,
    pod_affinity: _Strategy[PodAffinity | None] | None = None,
    pod_anti_affinity: _Strategy[PodAntiAffinity | None] | None = None,
) -> _Strategy[Affinity]:
    """A pod's affinity: each of node, pod and pod-anti affinity present or not.

    Requires the hypothesis package to be installed.
    """
    terms = pod_affinity_terms()
    return st.builds(
        Affinity,
        node_affinity=node_affinity if node_affinity is not None else st.none() | node_affinities(),
        pod_affinity=pod_affinity
        if pod_affinity is not None
        else st.none()
        | st.builds(
            PodAffinity,
            required=st.lists(terms, max_size=1).map(tuple),
            preferred=_weighted(terms),
        ),
        pod_anti_affinity=pod_anti_affinity
        if pod_anti_affinity is not None
        else st.none()
        | st.builds(
            PodAntiAffinity,
            required=st.lists(terms, max_size=1).map(tuple),
            preferred=_weighted(terms),
        ),
    )


def topology_spread_constraints(
    *,
    topology_keys: _Strategy[str] | None = None,
    selectors: _Strategy[LabelSelector | None] | None = None,
    max_skew: _Strategy[int] | None = None,
    when_unsatisfiable: _Strategy[str] | None = None,
) -> _Strategy[TopologySpreadConstraint]:
    """Topology spread constraints over hostname or zone.

    ``minDomains`` is only set with ``DoNotSchedule``, as validation requires; the node
    inclusion policies are unset, ``Honor`` or ``Ignore``.

    Requires the hypothesis package to be installed.
    """
    keys = (
        topology_keys
        if topology_keys is not None
        else st.sampled_from((_LABEL_HOSTNAME, _LABEL_ZONE))
    )
    sels = selectors if selectors is not None else label_selectors()
    skews = max_skew if max_skew is not None else st.integers(1, 3)
    whens = (
        when_unsatisfiable
        if when_unsatisfiable is not None
        else st.sampled_from(("DoNotSchedule", "ScheduleAnyway"))
    )
    policies = st.sampled_from((None, "Honor", "Ignore"))
    domains = st.none() | st.integers(1, 3)

    @st.composite
    def build(draw: st.DrawFn) -> TopologySpreadConstraint:
        when = draw(whens)
        min_domains = draw(domains) if when == "DoNotSchedule" else None
        return TopologySpreadConstraint(
            max_skew=draw(skews),
            topology_key=draw(keys),
            when_unsatisfiable=when,
            label_selector=draw(sels),
            min_domains=min_domains,
            node_affinity_policy=draw(policies),
            node_taints_policy=draw(policies),
        )

    return build()


# --------------------------------------------------------------------------------------------
# Pods, nodes, namespaces, budgets
# --------------------------------------------------------------------------------------------


def containers(
    *,
    name: _Strategy[str] | None = None,
    requests: _Strategy[ResourceList] | None = None,
    images: _Strategy[str] | None = None,
    host_ports: _Strategy[tuple[int, ...]] | None = None,
    limits_equal_requests: _Strategy[bool] | None = None,
) -> _Strategy[Container]:
    """Containers with requests (limits equal to them, or only for the resources that may not
    be overcommitted) and optional host ports.

    Requires the hypothesis package to be installed.
    """
    ports = (
        host_ports
        if host_ports is not None
        else st.just(())
        | st.lists(st.sampled_from(_HOST_PORTS), max_size=1, unique=True).map(tuple)
    )

    requests_ = requests if requests is not None else resource_lists()
    limited_ = limits_equal_requests if limits_equal_requests is not None else st.booleans()
    names_ = name if name is not None else st.just("c")
    images_ = images if images is not None else st.sampled_from(DEFAULT_IMAGES)

    @st.composite
    def build(draw: st.DrawFn) -> Container:
        reqs = draw(requests_)
        limited = draw(limited_)
        return Container(
            name=draw(names_),
            image=draw(images_),
            requests=reqs,
            # Extended resources and hugepages may not be overcommitted: the API server
            # wants their limit, equal to the request.
            limits=dict(reqs)
            if limited
            else {n: v for n, v in reqs.items() if not is_overcommit_allowed(n)},
            ports=tuple(ContainerPort(container_port=p, host_port=p) for p in draw(ports)),
        )

    return build()


def _unique_ports(items: Sequence[Container]) -> tuple[Container, ...]:
    # The API server refuses two containers claiming the same host port and protocol.
    seen: set[int] = set()
    out = []
    for i, c in enumerate(items):
        ports = tuple(p for p in c.ports if p.host_port not in seen)
        seen.update(p.host_port for p in ports)
        out.append(attrs.evolve(c, name=f"c{i}", ports=ports))
    return tuple(out)


def _unique_spread(
    items: Sequence[TopologySpreadConstraint],
) -> tuple[TopologySpreadConstraint, ...]:
    # Validation refuses two constraints with the same topologyKey and whenUnsatisfiable.
    seen: set[tuple[str, str]] = set()
    out = []
    for c in items:
        key = (c.topology_key, c.when_unsatisfiable)
        if key not in seen:
            seen.add(key)
            out.append(c)
    return tuple(out)


def pods(
    *,
    name: _Strategy[str] | None = None,
    namespace: _Strategy[str] | None = None,
    labels: _Strategy[dict[str, str]] | None = None,
    annotations: _Strategy[dict[str, str]] | None = None,
    containers: _Strategy[Sequence[Container]] | None = None,
    priority: _Strategy[int | None] | None = None,
    node_selector: _Strategy[dict[str, str]] | None = None,
    affinity: _Strategy[Affinity | None] | None = None,
    tolerations: _Strategy[Sequence[Toleration]] | None = None,
    topology_spread_constraints: _Strategy[Sequence[TopologySpreadConstraint]] | None = None,
    scheduling_gates: _Strategy[Sequence[str]] | None = None,
    volumes: _Strategy[Sequence[Volume]] | None = None,
    scheduler_name: _Strategy[str] | None = None,
    preemption_policy: _Strategy[str] | None = None,
    node_name: _Strategy[str] | None = None,
) -> _Strategy[Pod]:
    """Pods the API server would accept, unbound by default (``node_name=st.just("")``).

    The defaults draw every scheduling feature (node selector, affinity, tolerations, spread
    constraints) but keep each one small and often absent; pass ``st.just(...)`` to pin a
    part. The uid is ``namespace/name``, as the manifest codec gives it; host ports are made
    unique across containers, and spread constraints unique per key and policy.

    Requires the hypothesis package to be installed.
    """
    names_ = name if name is not None else names()
    namespaces_ = namespace if namespace is not None else st.just("default")
    labels_ = labels if labels is not None else _labels()
    annotations_ = annotations if annotations is not None else st.just({})
    containers_ = (
        containers if containers is not None else st.lists(_containers(), min_size=1, max_size=2)
    )
    priorities = priority if priority is not None else st.none() | st.integers(0, 1000)
    selectors = (
        node_selector
        if node_selector is not None
        else st.just({})
        | st.dictionaries(
            st.sampled_from(NODE_LABEL_KEYS),
            st.sampled_from(_NODE_LABEL_VALUES["disktype"]),
            max_size=1,
        )
    )
    affinities_ = affinity if affinity is not None else st.none() | affinities()
    tolerations_ = tolerations if tolerations is not None else st.lists(_tolerations(), max_size=2)
    spread = (
        topology_spread_constraints
        if topology_spread_constraints is not None
        else st.just(()) | st.lists(_spread(), max_size=2)
    )
    gates = scheduling_gates if scheduling_gates is not None else st.just(())
    volumes_ = volumes if volumes is not None else st.just(())
    schedulers = scheduler_name if scheduler_name is not None else st.just(_DEFAULT_SCHEDULER_NAME)
    policies = (
        preemption_policy if preemption_policy is not None else st.just("PreemptLowerPriority")
    )
    node_names = node_name if node_name is not None else st.just("")

    @st.composite
    def build(draw: st.DrawFn) -> Pod:
        pod_name = draw(names_)
        ns = draw(namespaces_)
        return Pod(
            metadata=ObjectMeta(
                name=pod_name,
                namespace=ns,
                uid=f"{ns}/{pod_name}",
                labels=dict(draw(labels_)),
                annotations=dict(draw(annotations_)),
            ),
            spec=PodSpec(
                node_name=draw(node_names),
                scheduler_name=draw(schedulers),
                priority=draw(priorities),
                preemption_policy=draw(policies),
                node_selector=dict(draw(selectors)),
                affinity=draw(affinities_),
                tolerations=tuple(draw(tolerations_)),
                containers=_unique_ports(draw(containers_)),
                topology_spread_constraints=_unique_spread(draw(spread)),
                scheduling_gates=tuple(draw(gates)),
                volumes=tuple(draw(volumes_)),
            ),
        )

    return build()


def volumes(*, claims: _Strategy[str] | None = None) -> _Strategy[Volume]:
    """Volumes backed by a PersistentVolumeClaim (over a small set of claim names).

    Requires the hypothesis package to be installed.
    """
    claim_names = claims if claims is not None else st.sampled_from(_CLAIMS)
    return claim_names.map(lambda c: Volume(name=c, persistent_volume_claim=c))


def nodes(
    *,
    name: _Strategy[str] | None = None,
    labels: _Strategy[dict[str, str]] | None = None,
    capacity: _Strategy[ResourceList] | None = None,
    taints: _Strategy[Sequence[Taint]] | None = None,
    unschedulable: _Strategy[bool] | None = None,
    zone: _Strategy[str | None] | None = None,
    images: _Strategy[Sequence[ContainerImage]] | None = None,
) -> _Strategy[Node]:
    """Nodes with capacity (allocatable equal to it), a hostname label and maybe a zone.

    Taints are unique per key and effect, as validation requires. By default nodes are
    untainted and schedulable; pass ``taints=st.lists(taints())`` for more.

    Requires the hypothesis package to be installed.
    """
    names_ = name if name is not None else names()
    labels_ = (
        labels
        if labels is not None
        else st.fixed_dictionaries(
            {},
            optional={k: st.sampled_from(v) for k, v in _NODE_LABEL_VALUES.items()},
        )
    )
    capacities = (
        capacity
        if capacity is not None
        else resource_lists(
            resources=(_CPU, _MEMORY, _PODS, _EPHEMERAL_STORAGE, GPU),
            required=(_CPU, _MEMORY, _PODS),
            kind="capacity",
        )
    )
    taints_ = taints if taints is not None else st.just(())
    cordoned = unschedulable if unschedulable is not None else st.just(False)
    zones = zone if zone is not None else st.none() | st.sampled_from(DEFAULT_ZONES)
    images_ = (
        images
        if images is not None
        else st.lists(
            st.builds(
                ContainerImage,
                names=st.sampled_from(DEFAULT_IMAGES).map(lambda n: (n,)),
                size_bytes=st.integers(1, 1000).map(lambda k: k * _MI),
            ),
            max_size=2,
            unique_by=lambda i: i.names,
        )
    )

    @st.composite
    def build(draw: st.DrawFn) -> Node:
        node_name = draw(names_)
        node_labels = {**draw(labels_), _LABEL_HOSTNAME: node_name}
        z = draw(zones)
        if z is not None:
            node_labels[_LABEL_ZONE] = z
        cap = dict(draw(capacities))
        unique: dict[tuple[str, str], Taint] = {}
        for t in draw(taints_):
            unique.setdefault((t.key, t.effect), t)
        return Node(
            metadata=ObjectMeta(name=node_name, uid=node_name, labels=node_labels),
            spec=NodeSpec(unschedulable=draw(cordoned), taints=tuple(unique.values())),
            status=NodeStatus(capacity=cap, allocatable=dict(cap), images=tuple(draw(images_))),
        )

    return build()


def namespaces(
    *, name: _Strategy[str] | None = None, labels: _Strategy[dict[str, str]] | None = None
) -> _Strategy[Namespace]:
    """Namespaces, labelled ``kubernetes.io/metadata.name`` as the API server does.

    Requires the hypothesis package to be installed.
    """
    names_ = name if name is not None else st.sampled_from(_NAMESPACES)
    labels_ = labels if labels is not None else _labels(max_size=1)
    return st.builds(
        lambda n, lb: Namespace(
            metadata=ObjectMeta(name=n, uid=n, labels={**lb, "kubernetes.io/metadata.name": n})
        ),
        names_,
        labels_,
    )


def pod_disruption_budgets(
    *,
    name: _Strategy[str] | None = None,
    namespace: _Strategy[str] | None = None,
    selector: _Strategy[LabelSelector | None] | None = None,
    disruptions_allowed: _Strategy[int] | None = None,
) -> _Strategy[PodDisruptionBudget]:
    """PodDisruptionBudgets with exactly one of ``minAvailable`` / ``maxUnavailable``.

    Requires the hypothesis package to be installed.
    """
    counts: _Strategy[int | str] = st.integers(0, 2) | st.sampled_from(("50%", "100%"))
    names_ = name if name is not None else names()
    namespaces_ = namespace if namespace is not None else st.just("default")
    selectors = selector if selector is not None else label_selectors()
    allowed = disruptions_allowed if disruptions_allowed is not None else st.integers(0, 2)

    @st.composite
    def build(draw: st.DrawFn) -> PodDisruptionBudget:
        n = draw(names_)
        ns = draw(namespaces_)
        use_min = draw(st.booleans())
        value = draw(counts)
        return PodDisruptionBudget(
            metadata=ObjectMeta(name=n, namespace=ns, uid=f"{ns}/{n}"),
            selector=draw(selectors),
            min_available=value if use_min else None,
            max_unavailable=None if use_min else value,
            disruptions_allowed=draw(allowed),
        )

    return build()


# --------------------------------------------------------------------------------------------
# Whole clusters
# --------------------------------------------------------------------------------------------


def _renamed_node(node: Node, name: str, zone: str | None) -> Node:
    node_labels = {**node.metadata.labels, _LABEL_HOSTNAME: name}
    if zone is not None and _LABEL_ZONE not in node_labels:
        node_labels[_LABEL_ZONE] = zone
    return attrs.evolve(
        node, metadata=attrs.evolve(node.metadata, name=name, uid=name, labels=node_labels)
    )


def _renamed_pod(pod: Pod, name: str, namespace: str) -> Pod:
    return attrs.evolve(
        pod,
        metadata=attrs.evolve(
            pod.metadata, name=name, namespace=namespace, uid=f"{namespace}/{name}"
        ),
    )


def _tolerate_no_execute(pod: Pod, node: Node) -> Pod:
    # A pod running on a NoExecute-tainted node must tolerate the taint, or it would be evicted.
    extra = tuple(
        Toleration(key=t.key, operator="Exists", effect="NoExecute")
        for t in node.spec.taints
        if t.effect == "NoExecute"
    )
    if not extra:
        return pod
    return attrs.evolve(
        pod, spec=attrs.evolve(pod.spec, tolerations=(*pod.spec.tolerations, *extra))
    )


def clusters(
    *,
    nodes: _Strategy[Node] | None = None,
    pods: _Strategy[Pod] | None = None,
    pending: _Strategy[Pod] | None = None,
    min_nodes: int = 1,
    max_nodes: int = 4,
    max_pods: int = 6,
    min_pending: int = 0,
    max_pending: int = 0,
    zones: Sequence[str] = DEFAULT_ZONES,
    namespaces: Sequence[str] = ("default",),
    taints: bool = False,
    affinities: bool = False,
    spread: bool = False,
    pdbs: bool = False,
) -> _Strategy[Cluster]:
    """Whole consistent clusters: nodes spread over ``zones``, running pods that fit them.

    Every running pod is bound to a node with room for its requests, pod count and host
    ports (a drawn pod that fits nowhere is left out), is ``Running`` with a start time, and
    tolerates its node's ``NoExecute`` taints. Names are assigned here (``node-0``,
    ``pod-0``, ``pending-0``), so uids are unique whatever the sub-strategies draw.

    Args:
        nodes: the node strategy (its names are replaced; a zone is added when missing).
        pods: the strategy for running pods (bound here).
        pending: the strategy for pending pods (default: like ``pods``).
        min_nodes: fewest nodes.
        max_nodes: most nodes.
        max_pods: most running pods drawn.
        min_pending: fewest pending pods.
        max_pending: most pending pods (none by default).
        zones: the zones nodes are put in (none when empty).
        namespaces: the namespaces pods are spread over.
        taints: taint nodes and give pods tolerations.
        affinities: give pods node selectors, node affinity and pod (anti-)affinity.
        spread: give pods topology spread constraints.
        pdbs: add PodDisruptionBudgets over the running pods.

    Requires the hypothesis package to be installed.
    """
    if not 0 <= min_nodes <= max_nodes or not 0 <= min_pending <= max_pending:
        raise ValueError("need 0 <= min_nodes <= max_nodes and 0 <= min_pending <= max_pending")
    if not namespaces:
        raise ValueError("clusters need at least one namespace")
    ns_names = tuple(namespaces)
    node_strategy = nodes if nodes is not None else _cluster_nodes(taints=taints)
    pod_strategy = (
        pods
        if pods is not None
        else _cluster_pods(namespaces=ns_names, taints=taints, affinities=affinities, spread=spread)
    )
    pending_strategy = pending if pending is not None else pod_strategy
    zone_choice = st.sampled_from(tuple(zones)) if zones else st.none()
    node_counts = st.integers(min_nodes, max_nodes)
    pod_counts = st.integers(0, max_pods)
    pending_counts = st.integers(min_pending, max_pending)
    ns_choice = st.sampled_from(ns_names)
    budgets_ = st.lists(pod_disruption_budgets(namespace=ns_choice), max_size=2)

    @st.composite
    def build(draw: st.DrawFn) -> Cluster:
        count = draw(node_counts)
        node_list = [
            _renamed_node(draw(node_strategy), f"node-{i}", draw(zone_choice)) for i in range(count)
        ]
        used: list[dict[str, int]] = [{} for _ in node_list]
        ports: list[set[int]] = [set() for _ in node_list]
        counts = [0 for _ in node_list]
        running: list[Pod] = []
        for j in range(draw(pod_counts) if node_list else 0):
            pod = draw(pod_strategy)
            ns = pod.namespace if pod.namespace in ns_names else draw(ns_choice)
            pod = _renamed_pod(pod, f"pod-{j}", ns)
            fitting = [
                i
                for i, node in enumerate(node_list)
                if fits_on(pod, node.status.allocatable, used[i], counts[i], ports[i])
            ]
            if not fitting:
                continue
            i = fitting[draw(st.integers(0, len(fitting) - 1))]
            reserve_on(pod, used[i], ports[i])
            counts[i] += 1
            pod = _tolerate_no_execute(pod, node_list[i])
            pod = attrs.evolve(
                pod,
                spec=attrs.evolve(pod.spec, node_name=node_list[i].metadata.name),
                status=PodStatus(phase="Running", start_time=_START + timedelta(seconds=j)),
            )
            running.append(pod)
        waiting = []
        for j in range(draw(pending_counts)):
            pod = draw(pending_strategy)
            ns = pod.namespace if pod.namespace in ns_names else draw(ns_choice)
            pod = _renamed_pod(pod, f"pending-{j}", ns)
            waiting.append(
                attrs.evolve(pod, spec=attrs.evolve(pod.spec, node_name=""), status=PodStatus())
            )
        budgets: list[PodDisruptionBudget] = []
        if pdbs:
            for k, pdb in enumerate(draw(budgets_)):
                budgets.append(
                    attrs.evolve(
                        pdb,
                        metadata=attrs.evolve(
                            pdb.metadata, name=f"pdb-{k}", uid=f"{pdb.namespace}/pdb-{k}"
                        ),
                    )
                )
        ns_objects = tuple(
            Namespace(
                metadata=ObjectMeta(
                    name=n,
                    uid=n,
                    labels={
                        "kubernetes.io/metadata.name": n,
                        "team": LABEL_VALUES[k % len(LABEL_VALUES)],
                    },
                )
            )
            for k, n in enumerate(ns_names)
        )
        return Cluster(
            nodes=tuple(node_list),
            pods=tuple(running),
            pending=tuple(waiting),
            namespaces=ns_objects,
            pdbs=tuple(budgets),
        )

    return build()


def _cluster_nodes(*, taints: bool) -> _Strategy[Node]:
    return nodes(
        name=st.just("node"),
        zone=st.none(),
        taints=st.lists(_taints(), max_size=2) if taints else st.just(()),
        unschedulable=st.booleans() if taints else st.just(False),
    )


def _cluster_pods(
    *, namespaces: Sequence[str], taints: bool, affinities: bool, spread: bool
) -> _Strategy[Pod]:
    return pods(
        name=st.just("pod"),
        namespace=st.sampled_from(tuple(namespaces)),
        node_selector=None if affinities else st.just({}),
        affinity=None if affinities else st.just(None),
        tolerations=st.lists(_tolerations(), max_size=2) if taints else st.just(()),
        topology_spread_constraints=None if spread else st.just(()),
    )


# --------------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------------

_SCORE_PLUGINS: Final = (
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
)


def configs(
    *,
    profiles: _Strategy[int] | None = None,
    score_plugins: Sequence[str] | None = None,
    scoring_strategies: Sequence[str] = ("LeastAllocated", "MostAllocated"),
) -> _Strategy[KubeSchedulerConfiguration]:
    """Valid ``KubeSchedulerConfiguration`` objects on top of kube-scheduler's defaults.

    Each profile may disable some default Score plugins (of ``score_plugins``, all default
    ones by default) or reweight them, and pick a NodeResourcesFit scoring strategy; the
    global ``percentageOfNodesToScore`` and backoffs vary. Built through
    :func:`schedframe.config.load_config`, so defaulting and validation apply. The result
    names only default plugins: a scheduler built from it needs ``schedframe-plugins``.

    Requires the hypothesis package to be installed.
    """
    counts = profiles if profiles is not None else st.integers(1, 2)
    allowed = (
        [(n, w) for n, w in _SCORE_PLUGINS if n in score_plugins]
        if score_plugins is not None
        else list(_SCORE_PLUGINS)
    )

    @st.composite
    def profile(draw: st.DrawFn, scheduler_name: str) -> dict[str, object]:
        disabled = (
            draw(st.lists(st.sampled_from([n for n, _ in allowed]), unique=True, max_size=3))
            if allowed
            else []
        )
        enabled = [
            {"name": n, "weight": draw(st.integers(1, 5))}
            for n, _ in allowed
            if n not in disabled and draw(st.booleans())
        ]
        out: dict[str, object] = {
            "schedulerName": scheduler_name,
            "plugins": {
                "score": {
                    "enabled": enabled,
                    "disabled": [{"name": n} for n in disabled],
                }
            },
        }
        if scoring_strategies and "NodeResourcesFit" not in disabled:
            out["pluginConfig"] = [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": draw(st.sampled_from(tuple(scoring_strategies)))
                        }
                    },
                }
            ]
        out["percentageOfNodesToScore"] = draw(st.none() | st.integers(0, 100))
        if out["percentageOfNodesToScore"] is None:
            del out["percentageOfNodesToScore"]
        return out

    @st.composite
    def build(draw: st.DrawFn) -> KubeSchedulerConfiguration:
        n = draw(counts)
        initial = draw(st.integers(1, 3))
        document: Mapping[str, object] = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "percentageOfNodesToScore": draw(st.integers(0, 100)),
            "podInitialBackoffSeconds": initial,
            "podMaxBackoffSeconds": draw(st.integers(initial, 10)),
            "profiles": [
                draw(profile(_DEFAULT_SCHEDULER_NAME if i == 0 else f"profile-{i}"))
                for i in range(n)
            ],
        }
        return load_config(document)

    return build()


# Parameters shadow these names inside the functions above; the aliases reach the functions.
_labels = labels
_taints = taints
_tolerations = tolerations
_spread = topology_spread_constraints
_containers = containers
