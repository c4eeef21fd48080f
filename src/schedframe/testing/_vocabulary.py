"""What a plugin reads, so the conformance kit's generated inputs reach its code paths.

The default strategies draw labels, taints and resources from a small fixed vocabulary; a
plugin keyed on its own label (``example.com/score``) never sees it, and the kit passes a
plugin that breaks the contract as soon as the label appears. A :class:`Vocabulary` names
what the plugin reads; :func:`learn_vocabulary` finds the literal label keys and resource
names in the plugin's module source; :func:`check_plugin` merges both into its pods, nodes
and clusters.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Mapping, Sequence
from typing import Final

import attrs
from hypothesis import strategies as st

from schedframe.objects import Node, Pod, Taint
from schedframe.testing._cluster import Cluster

__all__ = ["Vocabulary", "learn_vocabulary"]

#: Label values drawn for a key with no values of its own: names, and numbers in and out of
#: a score's range (a plugin that turns a label into a score must clamp it).
DEFAULT_VALUES: Final = ("a", "b", "0", "1", "7", "50", "100", "101", "120", "1000", "-1")
_QUALIFIED: Final = re.compile(
    r"^([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$"
)
_LABEL_ATTRS: Final = frozenset({"labels", "annotations", "node_selector"})
_RESOURCE_ATTRS: Final = frozenset({"requests", "limits", "allocatable", "capacity", "requested"})


@attrs.frozen(kw_only=True)
class Vocabulary:
    """The labels, taints, resources and objects a plugin reads.

    Attributes:
        pod_labels: label keys set on generated pods, each with the values to draw (empty:
            names, and numbers in and out of a score's range).
        node_labels: label keys set on generated nodes, likewise.
        annotations: annotation keys set on generated pods, likewise.
        taint_keys: taint keys put on nodes (any effect), with pods tolerating them now and
            then.
        resources: extended resource names: nodes get capacity, pods request them.
        objects: objects every generated cluster holds (custom objects a plugin lists through
            ``Handle.lister``, PodGroups, quotas...).
    """

    pod_labels: Mapping[str, Sequence[str]] = attrs.field(factory=dict)
    node_labels: Mapping[str, Sequence[str]] = attrs.field(factory=dict)
    annotations: Mapping[str, Sequence[str]] = attrs.field(factory=dict)
    taint_keys: Sequence[str] = ()
    resources: Sequence[str] = ()
    objects: Sequence[object] = ()

    def __bool__(self) -> bool:
        return bool(
            self.pod_labels
            or self.node_labels
            or self.annotations
            or self.taint_keys
            or self.resources
            or self.objects
        )

    def merged(self, other: Vocabulary) -> Vocabulary:
        """Both vocabularies (values of a key shared by both are joined)."""

        def join(
            a: Mapping[str, Sequence[str]], b: Mapping[str, Sequence[str]]
        ) -> dict[str, tuple[str, ...]]:
            out = {k: tuple(v) for k, v in a.items()}
            for k, v in b.items():
                out[k] = tuple(dict.fromkeys((*out.get(k, ()), *v)))
            return out

        return Vocabulary(
            pod_labels=join(self.pod_labels, other.pod_labels),
            node_labels=join(self.node_labels, other.node_labels),
            annotations=join(self.annotations, other.annotations),
            taint_keys=tuple(dict.fromkeys((*self.taint_keys, *other.taint_keys))),
            resources=tuple(dict.fromkeys((*self.resources, *other.resources))),
            objects=(*self.objects, *other.objects),
        )

    # -- strategies ------------------------------------------------------------------------

    def _draw_map(self, draw: st.DrawFn, keys: Mapping[str, Sequence[str]]) -> dict[str, str]:
        out: dict[str, str] = {}
        for key, values in keys.items():
            if draw(st.integers(0, 3)) > 0:  # mostly present
                out[key] = draw(st.sampled_from(tuple(values) or DEFAULT_VALUES))
        return out

    def pods(self, pods: st.SearchStrategy[Pod]) -> st.SearchStrategy[Pod]:
        """``pods`` with the vocabulary's labels, annotations, tolerations and requests."""

        @st.composite
        def build(draw: st.DrawFn) -> Pod:
            pod = draw(pods)
            labels = {**pod.metadata.labels, **self._draw_map(draw, self.pod_labels)}
            notes = {**pod.metadata.annotations, **self._draw_map(draw, self.annotations)}
            meta = attrs.evolve(pod.metadata, labels=labels, annotations=notes)
            spec = pod.spec
            if len(self.taint_keys) > 0 and draw(st.booleans()):
                from schedframe.objects import Toleration

                key = draw(st.sampled_from(tuple(self.taint_keys)))
                spec = attrs.evolve(
                    spec, tolerations=(*spec.tolerations, Toleration(key=key, operator="Exists"))
                )
            if len(self.resources) > 0 and spec.containers and draw(st.booleans()):
                name = draw(st.sampled_from(tuple(self.resources)))
                first = spec.containers[0]
                amount = draw(st.integers(1, 4))
                first = attrs.evolve(
                    first,
                    requests={**first.requests, name: amount},
                    limits={**first.limits, name: amount},
                )
                spec = attrs.evolve(spec, containers=(first, *spec.containers[1:]))
            if spec is pod.spec:
                return attrs.evolve(pod, metadata=meta)
            return Pod(metadata=meta, spec=spec, status=pod.status)

        return build()

    def nodes(self, nodes: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
        """``nodes`` with the vocabulary's labels, taints and extended resources."""

        @st.composite
        def build(draw: st.DrawFn) -> Node:
            node = draw(nodes)
            labels = {**node.metadata.labels, **self._draw_map(draw, self.node_labels)}
            taints = node.spec.taints
            if len(self.taint_keys) > 0 and draw(st.booleans()):
                key = draw(st.sampled_from(tuple(self.taint_keys)))
                effect = draw(st.sampled_from(("NoSchedule", "PreferNoSchedule")))
                if not any(t.key == key and t.effect == effect for t in taints):
                    taints = (*taints, Taint(key=key, value="", effect=effect))
            status = node.status
            if self.resources:
                extra = {r: draw(st.integers(0, 8)) for r in self.resources}
                status = attrs.evolve(
                    status,
                    capacity={**status.capacity, **extra},
                    allocatable={**status.allocatable, **extra},
                )
            return attrs.evolve(
                node,
                metadata=attrs.evolve(node.metadata, labels=labels),
                spec=attrs.evolve(node.spec, taints=taints),
                status=status,
            )

        return build()

    def clusters(self, clusters: st.SearchStrategy[Cluster]) -> st.SearchStrategy[Cluster]:
        """``clusters`` holding the vocabulary's objects (their nodes come from
        :meth:`nodes` when the cluster strategy is the kit's default)."""
        if not self.objects:
            return clusters
        return clusters.map(lambda c: attrs.evolve(c, custom=(*c.custom, *self.objects)))


# -- learning ---------------------------------------------------------------------------------


def _module_constants(tree: ast.Module) -> dict[str, str]:
    out: dict[str, str] = {}
    for node in tree.body:
        targets: list[ast.expr] = []
        value: ast.expr | None = None
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            for t in targets:
                if isinstance(t, ast.Name):
                    out[t.id] = value.value
    return out


def _string(node: ast.expr, constants: Mapping[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    if isinstance(node, ast.Attribute):  # a constant on the class: self.LABEL
        return constants.get(node.attr)
    return None


def _container(node: ast.expr) -> str | None:
    """The attribute name of what is read: ``pod.metadata.labels`` -> ``labels``."""
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def learn_vocabulary(plugin: type | object) -> Vocabulary:
    """The label and annotation keys, extended resources and taint keys a plugin's module
    reads as literals (or module constants): ``x.labels.get(KEY)``, ``x.labels[KEY]``,
    ``KEY in x.labels``, likewise for ``annotations`` and ``node_selector``; resources from
    ``requests``/``allocatable``/... lookups of a qualified name; taint keys compared with
    ``.key``. What cannot be read statically (keys built at run time) must be told with a
    :class:`Vocabulary`. An unreadable source learns nothing."""
    cls = plugin if isinstance(plugin, type) else type(plugin)
    module = inspect.getmodule(cls)
    try:
        source = inspect.getsource(module) if module is not None else inspect.getsource(cls)
    except (OSError, TypeError):
        return Vocabulary()
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return Vocabulary()
    constants = _module_constants(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            constants.update(_module_constants(ast.Module(body=node.body, type_ignores=[])))
    labels: dict[str, list[str]] = {}
    notes: dict[str, list[str]] = {}
    resources: list[str] = []
    taints: list[str] = []

    def note(container: str | None, key: str | None) -> None:
        if container is None or key is None or not _QUALIFIED.match(key):
            return
        if container in ("labels", "node_selector"):
            labels.setdefault(key, [])
        elif container == "annotations":
            notes.setdefault(key, [])
        elif container in _RESOURCE_ATTRS and "/" in key:
            resources.append(key)

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr == "get" and node.args:
                container = _container(node.func.value)
                if container in _LABEL_ATTRS or container in _RESOURCE_ATTRS:
                    note(container, _string(node.args[0], constants))
        elif isinstance(node, ast.Subscript):
            container = _container(node.value)
            if container in _LABEL_ATTRS or container in _RESOURCE_ATTRS:
                note(container, _string(node.slice, constants))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            if isinstance(node.ops[0], ast.In | ast.NotIn):
                note(_container(right), _string(left, constants))
            elif isinstance(node.ops[0], ast.Eq | ast.NotEq):
                for a, b in ((left, right), (right, left)):
                    if isinstance(a, ast.Attribute) and a.attr == "key":
                        key = _string(b, constants)
                        if key:
                            taints.append(key)
    return Vocabulary(
        pod_labels={k: tuple(v) for k, v in labels.items()},
        node_labels={k: tuple(v) for k, v in labels.items()},
        annotations={k: tuple(v) for k, v in notes.items()},
        taint_keys=tuple(dict.fromkeys(taints)),
        resources=tuple(dict.fromkeys(resources)),
    )
