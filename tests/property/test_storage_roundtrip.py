"""Storage objects round-trip through ``to_dict``/YAML/``from_dict``, and the volume binder's
assume cache reverts exactly what it assumed."""

from __future__ import annotations

import attrs
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from schedframe.objects import (
    ClaimReference,
    CSIDriver,
    CSINode,
    CSINodeDriver,
    CSIStorageCapacity,
    LabelSelector,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    TopologySelectorTerm,
    VolumeAttachment,
    from_dict,
    loads_manifests,
    to_dict,
)
from schedframe.runtime._storage_lister import StorageStore
from schedframe.scheduler import VirtualClock
from schedframe_plugins.volumebinding.binder import VolumeBinder, get_bind_volume_to_claim

from .test_objects_roundtrip import labels, metas, names

pytestmark = pytest.mark.property

GI = 2**30
_sizes = st.integers(min_value=1, max_value=64).map(lambda n: n * GI)
_modes = st.lists(
    st.sampled_from(["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce"]),
    min_size=1,
    max_size=3,
    unique=True,
).map(tuple)
_affinity = st.none() | names.map(
    lambda zone: NodeSelector(
        node_selector_terms=(
            NodeSelectorTerm(
                match_expressions=(
                    NodeSelectorRequirement(
                        key="topology.kubernetes.io/zone", operator="In", values=(zone,)
                    ),
                )
            ),
        )
    )
)
_pvs = st.builds(
    PersistentVolume,
    metadata=metas(namespaced=False),
    capacity=_sizes,
    access_modes=_modes,
    claim_ref=st.none() | st.builds(ClaimReference, namespace=names, name=names),
    storage_class_name=st.just("") | names,
    source=st.just("csi"),
    csi_driver=names,
    volume_handle=names,
    node_affinity=_affinity,
    phase=st.sampled_from(["Pending", "Available", "Bound"]),
)
_pvcs = st.builds(
    PersistentVolumeClaim,
    metadata=metas(namespaced=True),
    access_modes=_modes,
    request=_sizes,
    storage_class_name=st.none() | st.just("") | names,
    volume_name=st.just("") | names,
    selector=st.none() | labels.map(lambda m: LabelSelector(match_labels=m)),
    phase=st.sampled_from(["Pending", "Bound"]),
)
_classes = st.builds(
    StorageClass,
    metadata=metas(namespaced=False),
    provisioner=names,
    volume_binding_mode=st.sampled_from(["Immediate", "WaitForFirstConsumer"]),
    allowed_topologies=st.lists(
        st.builds(
            TopologySelectorTerm,
            match_label_expressions=st.lists(
                st.tuples(names, st.lists(names, min_size=1, max_size=2).map(tuple)),
                min_size=1,
                max_size=2,
            ).map(tuple),
        ),
        max_size=2,
    ).map(tuple),
)
_others = st.one_of(
    st.builds(
        CSINode,
        metadata=metas(namespaced=False),
        drivers=st.lists(
            st.builds(
                CSINodeDriver,
                name=names,
                node_id=names,
                allocatable_count=st.none() | st.integers(0, 64),
            ),
            max_size=3,
            unique_by=lambda d: d.name,
        ).map(tuple),
    ),
    st.builds(CSIDriver, metadata=metas(namespaced=False), storage_capacity=st.booleans()),
    st.builds(
        CSIStorageCapacity,
        metadata=metas(namespaced=True),
        storage_class_name=names,
        node_topology=st.none() | labels.map(lambda m: LabelSelector(match_labels=m)),
        capacity=st.none() | _sizes,
    ),
    st.builds(
        VolumeAttachment,
        metadata=metas(namespaced=False),
        attacher=names,
        node_name=names,
        persistent_volume_name=names,
    ),
)


@given(st.one_of(_pvs, _pvcs, _classes, _others))
def test_storage_objects_round_trip_through_yaml(obj: object) -> None:
    text = yaml.safe_dump(to_dict(obj))
    (back,) = loads_manifests(text, source="x.yaml")
    assert back == obj
    assert from_dict(to_dict(obj)) == obj


@given(st.lists(_pvs, min_size=1, max_size=4, unique_by=lambda v: v.name), _pvcs)
def test_assume_then_restore_gives_back_the_api_objects(
    pvs: list[PersistentVolume], pvc: PersistentVolumeClaim
) -> None:
    versioned = [
        attrs.evolve(v, metadata=attrs.evolve(v.metadata, resource_version=str(i + 1)))
        for i, v in enumerate(pvs)
    ]
    store = StorageStore([*versioned, pvc])
    binder = VolumeBinder(store, lambda _: None, None, 1.0, VirtualClock())
    for pv in versioned:
        new, _ = get_bind_volume_to_claim(pv, pvc)
        binder.pv_cache.assume(pv.name, new)
        assert binder.pv_cache.get(pv.name).claim_ref is not None
    for pv in versioned:
        binder.pv_cache.restore(pv.name)
        assert binder.pv_cache.get(pv.name) == pv
    assert binder.pv_cache.assumed() == {}
