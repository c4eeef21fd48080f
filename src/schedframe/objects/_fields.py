"""Field names of the Kubernetes API that the decoder accepts without reading them.

Strict decoding reports every key of a mapping the decoder neither read nor lists here as an
unknown field, as ``kubectl --validate=strict`` does. A name listed here is accepted with any
content: the scheduler does not read it (a container's ``livenessProbe``, a node's
``nodeInfo``, ``metadata.managedFields``), so its content is the API server's business. The
parts the scheduler reads are checked key by key by the decoder itself.

The lists follow ``k8s.io/api`` up to v1.36 (``core/v1/types.go``, ``policy/v1/types.go``,
``meta/v1/types.go``), alpha and beta fields included, so that a ``kubectl get -o yaml`` dump
of a current cluster decodes.
"""

from __future__ import annotations

from typing import Final

#: Top-level keys every object may carry besides ``metadata``/``spec``/``status``.
TYPE_META: Final = ("apiVersion", "kind")

#: ``metav1.ObjectMeta`` fields the decoder does not read.
OBJECT_META: Final = (
    "selfLink",
    "generation",
    "deletionGracePeriodSeconds",
    "finalizers",
    "managedFields",
)

#: ``metav1.OwnerReference`` fields the decoder does not read.
OWNER_REFERENCE: Final = ("blockOwnerDeletion",)

#: ``v1.PodSpec`` fields the scheduler does not read.
POD_SPEC: Final = (
    "ephemeralContainers",
    "restartPolicy",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "hostAliases",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "resourceClaims",
    "hostnameOverride",
    "schedulingGroup",
    "evictionResponders",
)

#: ``v1.Container`` fields the scheduler does not read.
CONTAINER: Final = (
    "command",
    "args",
    "workingDir",
    "envFrom",
    "env",
    "resizePolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty",
)

#: ``v1.ContainerRestartRule`` fields the scheduler does not read.
CONTAINER_RESTART_RULE: Final = ("exitCodes",)

#: ``v1.PodResourceClaim`` fields the scheduler does not read (only ``name``).
POD_RESOURCE_CLAIM: Final = ("resourceClaimName", "resourceClaimTemplateName")

#: ``v1.ResourceRequirements`` fields the scheduler does not read.
RESOURCE_REQUIREMENTS: Final = ("claims",)

#: ``v1.Volume`` sources other than ``persistentVolumeClaim``.
VOLUME_SOURCES: Final = (
    "hostPath",
    "emptyDir",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "downwardAPI",
    "fc",
    "azureFile",
    "configMap",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "projected",
    "portworxVolume",
    "scaleIO",
    "storageos",
    "csi",
    "ephemeral",
    "image",
)

#: ``v1.PersistentVolumeClaimVolumeSource`` fields the scheduler does not read.
PVC_VOLUME_SOURCE: Final = ("readOnly",)

#: ``v1.PodStatus`` fields the scheduler does not read.
POD_STATUS: Final = (
    "observedGeneration",
    "message",
    "reason",
    "hostIP",
    "hostIPs",
    "podIP",
    "podIPs",
    "initContainerStatuses",
    "containerStatuses",
    "qosClass",
    "ephemeralContainerStatuses",
    "resize",
    "resourceClaimStatuses",
    "extendedResourceClaimStatus",
    "allocatedResources",
    "resources",
    "nodeAllocatableResourceClaimStatuses",
    "volumeHealth",
)

#: ``v1.PodCondition`` fields the scheduler does not read.
POD_CONDITION: Final = ("observedGeneration", "lastProbeTime")

#: ``v1.NodeSpec`` fields the scheduler does not read.
NODE_SPEC: Final = (
    "podCIDRs",
    "providerID",
    "configSource",
    "externalID",
    "podPreemptionPolicy",
)

#: ``v1.NodeStatus`` fields the scheduler does not read.
NODE_STATUS: Final = (
    "phase",
    "addresses",
    "daemonEndpoints",
    "nodeInfo",
    "volumesInUse",
    "volumesAttached",
    "config",
    "runtimeHandlers",
    "features",
)

#: ``v1.NodeCondition`` fields the scheduler does not read.
NODE_CONDITION: Final = ("lastHeartbeatTime", "lastTransitionTime")

#: ``v1.Namespace`` parts (spec and status), none of which the scheduler reads.
NAMESPACE: Final = ("spec", "status")

#: ``policy/v1`` ``PodDisruptionBudgetSpec`` fields the scheduler does not read.
PDB_SPEC: Final = ("unhealthyPodEvictionPolicy",)

#: ``policy/v1`` ``PodDisruptionBudgetStatus`` fields the scheduler does not read.
PDB_STATUS: Final = (
    "observedGeneration",
    "currentHealthy",
    "desiredHealthy",
    "expectedPods",
    "conditions",
)

#: Top-level parts of the workload kinds the scheduler does not read.
WORKLOAD: Final = ("status",)

#: ``v1.ServiceSpec`` fields the scheduler does not read (only ``selector`` is read).
SERVICE_SPEC: Final = (
    "allocateLoadBalancerNodePorts",
    "clusterIP",
    "clusterIPs",
    "externalIPs",
    "externalName",
    "externalTrafficPolicy",
    "healthCheckNodePort",
    "internalTrafficPolicy",
    "ipFamilies",
    "ipFamilyPolicy",
    "loadBalancerClass",
    "loadBalancerIP",
    "loadBalancerSourceRanges",
    "ports",
    "publishNotReadyAddresses",
    "sessionAffinity",
    "sessionAffinityConfig",
    "trafficDistribution",
    "type",
)

#: ``ReplicationControllerSpec``/``ReplicaSetSpec`` fields the scheduler does not read.
REPLICA_SET_SPEC: Final = ("minReadySeconds",)

#: ``apps/v1`` ``StatefulSetSpec`` fields the scheduler does not read.
STATEFUL_SET_SPEC: Final = (
    "minReadySeconds",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
    "revisionHistoryLimit",
    "updateStrategy",
    "volumeClaimTemplates",
)

#: ``apps/v1`` ``DeploymentSpec`` fields the scheduler does not read.
DEPLOYMENT_SPEC: Final = (
    "minReadySeconds",
    "paused",
    "progressDeadlineSeconds",
    "revisionHistoryLimit",
    "strategy",
)

#: ``apps/v1`` ``DaemonSetSpec`` fields the scheduler does not read.
DAEMON_SET_SPEC: Final = ("minReadySeconds", "revisionHistoryLimit", "updateStrategy")

#: ``batch/v1`` ``JobSpec`` fields the scheduler does not read.
JOB_SPEC: Final = (
    "activeDeadlineSeconds",
    "backoffLimit",
    "backoffLimitPerIndex",
    "completionMode",
    "managedBy",
    "manualSelector",
    "maxFailedIndexes",
    "podFailurePolicy",
    "podReplacementPolicy",
    "scheduling",
    "successPolicy",
    "suspend",
    "ttlSecondsAfterFinished",
)
