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

#: ``v1.ResourceClaim`` (a container's ``resources.claims`` entry) fields the scheduler does
#: not read (only ``name``).
CONTAINER_RESOURCE_CLAIM: Final = ("request",)

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

#: ``v1.EphemeralVolumeSource`` fields the scheduler does not read (a pod's generic ephemeral
#: volume counts as a claim; its template is the API server's business).
EPHEMERAL_VOLUME_SOURCE: Final = ("volumeClaimTemplate",)

#: The fields of each in-tree or CSI volume source of a ``v1.PersistentVolumeSpec`` (a pod's
#: ``gcePersistentDisk``, ``awsElasticBlockStore``, ``rbd``, ``iscsi`` and ``azureDisk``
#: volumes have the same fields). The decoder reads a few of them (a disk's name, ``readOnly``,
#: a CSI volume's ``driver`` and ``volumeHandle``) and accepts the others.
VOLUME_SOURCE_FIELDS: Final[dict[str, tuple[str, ...]]] = {
    "awsElasticBlockStore": ("volumeID", "fsType", "partition", "readOnly"),
    "azureDisk": ("diskName", "diskURI", "cachingMode", "fsType", "readOnly", "kind"),
    "azureFile": ("secretName", "shareName", "readOnly", "secretNamespace"),
    "cephfs": ("monitors", "path", "user", "secretFile", "secretRef", "readOnly"),
    "cinder": ("volumeID", "fsType", "readOnly", "secretRef"),
    "csi": (
        "driver",
        "volumeHandle",
        "readOnly",
        "fsType",
        "volumeAttributes",
        "controllerPublishSecretRef",
        "nodeStageSecretRef",
        "nodePublishSecretRef",
        "controllerExpandSecretRef",
        "nodeExpandSecretRef",
    ),
    "fc": ("targetWWNs", "lun", "fsType", "readOnly", "wwids"),
    "flexVolume": ("driver", "fsType", "secretRef", "readOnly", "options"),
    "flocker": ("datasetName", "datasetUUID"),
    "gcePersistentDisk": ("pdName", "fsType", "partition", "readOnly"),
    "glusterfs": ("endpoints", "path", "readOnly", "endpointsNamespace"),
    "hostPath": ("path", "type"),
    "iscsi": (
        "targetPortal",
        "iqn",
        "lun",
        "iscsiInterface",
        "fsType",
        "readOnly",
        "portals",
        "chapAuthDiscovery",
        "chapAuthSession",
        "secretRef",
        "initiatorName",
    ),
    "local": ("path", "fsType"),
    "nfs": ("server", "path", "readOnly"),
    "photonPersistentDisk": ("pdID", "fsType"),
    "portworxVolume": ("volumeID", "fsType", "readOnly"),
    "quobyte": ("registry", "volume", "readOnly", "user", "group", "tenant"),
    "rbd": ("monitors", "image", "fsType", "pool", "user", "keyring", "secretRef", "readOnly"),
    "scaleIO": (
        "gateway",
        "system",
        "secretRef",
        "sslEnabled",
        "protectionDomain",
        "storagePool",
        "storageMode",
        "volumeName",
        "fsType",
        "readOnly",
    ),
    "storageos": ("volumeName", "volumeNamespace", "fsType", "readOnly", "secretRef"),
    "vsphereVolume": ("volumePath", "fsType", "storagePolicyName", "storagePolicyID"),
}

#: The in-tree disk sources of a pod volume (VolumeRestrictions, NodeVolumeLimits), by field.
DISK_SOURCES: Final = {
    k: VOLUME_SOURCE_FIELDS[k]
    for k in ("gcePersistentDisk", "awsElasticBlockStore", "rbd", "iscsi", "azureDisk")
}

#: ``v1.PersistentVolumeSpec`` fields the decoder does not read (besides the volume sources
#: other than the one given, which validation reports).
PV_SPEC: Final = ("mountOptions", "volumeAttributesClassName", *VOLUME_SOURCE_FIELDS)

#: ``v1.PersistentVolumeStatus`` fields the decoder does not read.
PV_STATUS: Final = ("message", "reason", "lastPhaseTransitionTime")

#: ``v1.ObjectReference`` fields of a volume's ``claimRef`` the decoder does not read.
CLAIM_REF: Final = ("kind", "apiVersion", "fieldPath")

#: ``v1.PersistentVolumeClaimSpec`` fields the decoder does not read.
PVC_SPEC: Final = ("dataSource", "dataSourceRef", "volumeAttributesClassName")

#: ``v1.VolumeResourceRequirements`` fields the decoder does not read.
VOLUME_RESOURCES: Final = ("limits",)

#: ``v1.PersistentVolumeClaimStatus`` fields the decoder does not read.
PVC_STATUS: Final = (
    "accessModes",
    "conditions",
    "allocatedResources",
    "allocatedResourceStatuses",
    "currentVolumeAttributesClassName",
    "modifyVolumeStatus",
    "healthStatus",
)

#: ``storage/v1`` ``StorageClass`` fields the decoder does not read.
STORAGE_CLASS: Final = ("mountOptions",)

#: ``storage/v1`` ``CSIDriverSpec`` fields the decoder does not read.
CSI_DRIVER_SPEC: Final = (
    "podInfoOnMount",
    "volumeLifecycleModes",
    "fsGroupPolicy",
    "tokenRequests",
    "requiresRepublish",
    "seLinuxMount",
    "nodeAllocatableUpdatePeriodSeconds",
    "serviceAccountTokenInSecrets",
    "preventPodSchedulingIfMissing",
)

#: ``storage/v1`` ``VolumeAttachmentSource`` fields the decoder does not read.
VOLUME_ATTACHMENT_SOURCE: Final = ("inlineVolumeSpec",)

#: ``storage/v1`` ``VolumeAttachmentStatus`` fields the decoder does not read.
VOLUME_ATTACHMENT_STATUS: Final = ("attachmentMetadata", "attachError", "detachError")

# ---- resource.k8s.io/v1 (Dynamic Resource Allocation) ---------------------------------------
# The DRA decoder reads nearly every field the allocator can use; these are the rest.

#: ``DeviceAllocationConfiguration`` fields the allocator does not read (a claim status's
#: ``allocation.devices.config`` entries; ``requests`` and ``opaque`` are read).
DEVICE_ALLOCATION_CONFIGURATION: Final = ("source",)

#: ``ResourceClaimStatus`` fields the scheduler does not read (the drivers' device statuses).
RESOURCE_CLAIM_STATUS: Final[tuple[str, ...]] = ()

#: ``metav1.ObjectMeta`` fields of a ResourceClaimTemplate's ``spec.metadata`` besides the
#: labels and annotations copied to the claims it makes.
CLAIM_TEMPLATE_META: Final = (
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "deletionTimestamp",
    "ownerReferences",
    *OBJECT_META,
)
