"""PodInfo affinity terms and NodeInfo aggregates."""

from __future__ import annotations

from schedframe.framework import NodeInfo, PodInfo
from schedframe.objects import Pod, node_from_dict, pod_from_dict


def pod(
    name: str, ns: str = "default", labels: dict[str, str] | None = None, **spec: object
) -> Pod:
    spec.setdefault("containers", [{"name": "c"}])
    return pod_from_dict(
        {"metadata": {"name": name, "namespace": ns, "labels": labels or {}}, "spec": spec}
    )


def anti_affinity_pod(term: dict[str, object]) -> Pod:
    return pod(
        "owner",
        labels={"app": "web"},
        containers=[{"name": "c"}],
        affinity={"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}},
    )


def test_empty_namespace_selector_matches_even_without_namespace_labels() -> None:
    info = PodInfo(
        anti_affinity_pod(
            {
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "kubernetes.io/hostname",
                "namespaceSelector": {},
            }
        )
    )
    (term,) = info.required_anti_affinity_terms
    other = pod("x", ns="elsewhere", labels={"app": "web"})
    assert term.matches(other, None)
    assert term.matches(other, {"team": "a"})


def test_no_namespaces_and_no_selector_means_the_owners_namespace() -> None:
    info = PodInfo(
        anti_affinity_pod({"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"})
    )
    (term,) = info.required_anti_affinity_terms
    assert term.namespaces == frozenset({"default"})
    assert term.namespace_selector is None
    assert term.matches(pod("a", labels={"app": "web"}), None)
    assert not term.matches(pod("b", ns="other", labels={"app": "web"}), None)


def test_match_label_keys_merge_the_owners_values() -> None:
    info = PodInfo(
        anti_affinity_pod(
            {
                "labelSelector": {"matchLabels": {"app": "web"}},
                "topologyKey": "zone",
                "matchLabelKeys": ["app"],
                "mismatchLabelKeys": ["missing"],
            }
        )
    )
    (term,) = info.required_anti_affinity_terms
    assert term.matches(pod("a", labels={"app": "web"}), None)
    assert not term.matches(pod("b", labels={"app": "db"}), None)


def test_node_info_sums_and_swap_remove_order() -> None:
    node = node_from_dict({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}})
    pods = [
        pod(
            n,
            containers=[
                {
                    "name": "c",
                    "resources": {"requests": {"cpu": "100m"}},
                    "ports": [{"containerPort": 80, "hostPort": 8000 + i}],
                }
            ],
        )
        for i, n in enumerate("abc")
    ]
    info = NodeInfo(node, pods)
    gen = info.generation
    assert info.requested == {"cpu": 300}
    assert info.non_zero_requested == {"cpu": 300, "memory": 3 * 200 * 1024 * 1024}
    assert info.used_ports.check_conflict("", "TCP", 8001)
    info.remove_pod(pods[0])
    # Upstream moves the last pod into the removed one's place.
    assert [p.pod.name for p in info.pods] == ["c", "b"]
    assert info.requested == {"cpu": 200}
    assert not info.used_ports.check_conflict("127.0.0.1", "TCP", 8000)
    assert info.generation > gen
    clone = info.clone()
    clone.add_pod(pods[0])
    assert len(info.pods) == 2 and len(clone.pods) == 3


def test_fit_error_message_matches_a_real_clusters_failed_scheduling_note() -> None:
    # As kube-scheduler prints it (one period at the very end: PostFilter's message is appended
    # without a separator period of its own).
    from schedframe.framework import Code, Diagnosis, FitError, NodeToStatus, Status

    statuses = NodeToStatus(
        {
            "a": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) had untolerated taint(s)"),
            "b": Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"),
            "c": Status(Code.UNSCHEDULABLE, "Insufficient cpu", "Insufficient memory"),
        }
    )
    diagnosis = Diagnosis(
        node_to_status=statuses,
        post_filter_msg=(
            "preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
        ),
    )
    assert str(FitError(pod("p"), 3, diagnosis)) == (
        "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu, "
        "2 Insufficient memory. preemption: 0/3 nodes are available: 3 Preemption is not "
        "helpful for scheduling."
    )


def test_fit_error_message_follows_every_change_to_what_it_counts() -> None:
    """The reasons are counted once per message and kept; any write to the statuses, a new
    absent status, a new node count, a replaced map or a PreFilter message is seen."""
    from schedframe.framework import Code, Diagnosis, FitError, NodeToStatus, Status

    cpu = Status(Code.UNSCHEDULABLE, "Insufficient cpu")
    statuses = NodeToStatus({"a": cpu, "b": cpu})
    fit = FitError(pod("p"), 3, Diagnosis(node_to_status=statuses))
    absent = "node(s) didn't satisfy plugin(s) [NodeAffinity]"
    assert fit.message() == "0/3 nodes are available: 2 Insufficient cpu."
    fit.diagnosis.post_filter_msg = "preemption: not helpful."
    assert fit.message() == "0/3 nodes are available: 2 Insufficient cpu. preemption: not helpful."
    statuses.set("b", Status(Code.UNSCHEDULABLE, "Too many pods"))
    assert fit.message().startswith("0/3 nodes are available: 1 Insufficient cpu, 1 Too many pods.")
    statuses.update([("c", cpu)])
    assert fit.message().startswith("0/3 nodes are available: 1 Too many pods, 2 Insufficient cpu.")
    fit.num_all_nodes = 4  # the absent node's status gives no reason yet
    assert fit.message().startswith("0/4 nodes are available: 1 Too many pods, 2 Insufficient")
    unresolvable = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, absent)
    statuses.absent_nodes_status = unresolvable
    assert fit.message().startswith(
        f"0/4 nodes are available: 1 Too many pods, 1 {absent}, 2 Insufficient cpu."
    )
    fit.num_all_nodes = 5
    assert fit.message().startswith(
        f"0/5 nodes are available: 1 Too many pods, 2 Insufficient cpu, 2 {absent}."
    )
    other = NodeToStatus({"a": cpu, "b": cpu, "c": cpu})  # as many writes, the same absent status
    other.absent_nodes_status = unresolvable
    other.set("c", cpu)
    other.update([("d", cpu)])
    assert (other._changes, other.absent_nodes_status) == (statuses._changes, unresolvable)
    fit.diagnosis.node_to_status = other
    assert fit.message().startswith(f"0/5 nodes are available: 1 {absent}, 4 Insufficient cpu.")
    fit.diagnosis.pre_filter_msg = "node(s) didn't match Pod's node affinity/selector"
    assert fit.message() == (
        "0/5 nodes are available: node(s) didn't match Pod's node affinity/selector. "
        "preemption: not helpful."
    )


def test_node_to_status_selects_nodes_by_code_absent_ones_included() -> None:
    from schedframe.framework import Code, NodeToStatus, Status

    infos = [NodeInfo(node_from_dict({"metadata": {"name": n}})) for n in ("a", "b", "c", "d")]
    statuses = NodeToStatus(
        {
            "a": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
            "b": Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match"),
            "d": Status(Code.UNSCHEDULABLE, "Insufficient cpu"),
        }
    )
    # "c" has no entry: it reads as the absent-nodes status (UnschedulableAndUnresolvable).
    picked = statuses.node_infos_with_code(Code.UNSCHEDULABLE, infos)
    assert [ni.name for ni in picked] == ["a", "d"]
    assert statuses.node_names_with_code(Code.UNSCHEDULABLE, ["a", "b", "c", "d"]) == ["a", "d"]
    statuses.absent_nodes_status = Status(Code.UNSCHEDULABLE)
    picked = statuses.node_infos_with_code(Code.UNSCHEDULABLE, infos)
    assert [ni.name for ni in picked] == ["a", "c", "d"]


def test_remove_pod_finds_the_last_pod_without_walking_the_others() -> None:
    # A binding's confirmation removes the pod just assumed, the node's last: the search
    # starts at the end (on a node with 20,000 pods a search from the front walked them all).
    reads: list[str] = []

    class Counted(PodInfo):
        @property
        def pod(self) -> Pod:  # type: ignore[override]
            real: Pod = self.__dict__["real"]
            reads.append(real.name)
            return real

    node = node_from_dict({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4"}}})
    pods = [pod(f"p{i}") for i in range(50)]
    info = NodeInfo(node, pods)
    counted = []
    for p in info.pods:
        c = Counted.__new__(Counted)
        c.__dict__["real"] = p.pod
        counted.append(c)
    info.pods[:] = counted
    info.remove_pod(pods[-1])
    assert reads.count("p49") >= 1 and set(reads) == {"p49"}
    reads.clear()
    # A pod further from the end: the pods after it are read, and the last moves into its place.
    info.remove_pod(pods[45])
    assert set(reads) == {"p48", "p47", "p46", "p45"}
    assert [p.pod.name for p in info.pods[44:]] == ["p44", "p48", "p46", "p47"]
