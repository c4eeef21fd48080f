"""The HTTP extender client (upstream ``pkg/scheduler/extender.go``, ``HTTPExtender``).

Requests and responses are the JSON of upstream's ``k8s.io/kube-scheduler/extender/v1``
types, field for field, so an extender written for kube-scheduler works unchanged. HTTP is
the standard library's ``http.client``: extenders are a core feature and the core has no
HTTP dependency.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import tempfile
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Final, final

from schedframe.errors import SchedframeError
from schedframe.objects import Pod, to_dict

if TYPE_CHECKING:
    from schedframe.config import Extender, ExtenderTLSConfig
    from schedframe.framework import NodeInfo

__all__ = [
    "DEFAULT_EXTENDER_TIMEOUT",
    "EXTENDER_NAME",
    "MAX_EXTENDER_PRIORITY",
    "ExtenderError",
    "HTTPExtender",
    "Victims",
]

#: Seconds an extender call may take when ``httpTimeout`` is 0 (upstream
#: ``DefaultExtenderTimeout``).
DEFAULT_EXTENDER_TIMEOUT: Final = 5.0
#: The highest score an extender's prioritize verb gives (upstream ``MaxExtenderPriority``).
MAX_EXTENDER_PRIORITY: Final = 10
#: The name extender rejections are recorded under among a pod's unschedulable plugins
#: (upstream ``framework.ExtenderName``).
EXTENDER_NAME: Final = "Extender"

#: One node's victims: the pods and how many PodDisruptionBudgets evicting them violates.
Victims = tuple[tuple[Pod, ...], int]


class ExtenderError(SchedframeError):
    """An extender call failed (transport, HTTP status, undecodable or inconsistent reply)."""


def _pod_names(pod: Pod) -> tuple[str, str, str]:
    return pod.metadata.name, pod.metadata.namespace, pod.uid


class _HTTPSConnection(http.client.HTTPSConnection):
    """HTTPS with a TLS server name other than the URL's host (``tlsConfig.serverName``)."""

    def __init__(
        self, host: str, port: int | None, *, timeout: float, context: ssl.SSLContext, sni: str
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=context)
        self._sni = sni
        self._ctx = context

    def connect(self) -> None:
        http.client.HTTPConnection.connect(self)
        self.sock = self._ctx.wrap_socket(self.sock, server_hostname=self._sni or self.host)


def _load_pem(context: ssl.SSLContext, cert: bytes, key: bytes) -> None:
    """``load_cert_chain`` reads files only: write in-memory PEM to private temporary files."""
    paths: list[str] = []
    try:
        for data in (cert, key):
            fd, path = tempfile.mkstemp(prefix="schedframe-extender-", suffix=".pem")
            paths.append(path)
            with os.fdopen(fd, "wb") as f:
                f.write(data)
        context.load_cert_chain(paths[0], paths[1])
    finally:
        for path in paths:
            os.unlink(path)


def _ssl_context(https: bool, tls: ExtenderTLSConfig | None) -> ssl.SSLContext:
    """Upstream ``makeTransport``: with HTTPS and no CA, verification is off (insecure)."""
    ca_file = tls.ca_file if tls is not None else ""
    ca_data = tls.ca_data if tls is not None else b""
    insecure = tls.insecure if tls is not None else False
    if https and not ca_file and not ca_data:
        insecure = True
    context = ssl.create_default_context(
        cafile=ca_file or None, cadata=ca_data.decode() if ca_data else None
    )
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    if tls is not None:
        if tls.cert_file or tls.key_file:
            context.load_cert_chain(tls.cert_file, tls.key_file or None)
        elif tls.cert_data or tls.key_data:
            _load_pem(context, tls.cert_data, tls.key_data)
    return context


@final
class HTTPExtender:
    """One configured extender (upstream ``HTTPExtender``).

    Args:
        config: the ``extenders[]`` entry of the configuration.

    Raises:
        ExtenderError: the TLS files cannot be read.
    """

    def __init__(self, config: Extender) -> None:
        self.config = config
        self.url_prefix = config.url_prefix
        self.weight = config.weight
        self.timeout = config.http_timeout or DEFAULT_EXTENDER_TIMEOUT
        self.node_cache_capable = config.node_cache_capable
        self.ignorable = config.ignorable
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        parsed = urllib.parse.urlsplit(config.url_prefix)
        self._scheme = parsed.scheme or ("https" if config.enable_https else "http")
        self._context: ssl.SSLContext | None = None
        if self._scheme == "https" or config.enable_https or config.tls_config is not None:
            try:
                self._context = _ssl_context(config.enable_https, config.tls_config)
            except (OSError, ssl.SSLError, ValueError) as exc:
                raise ExtenderError(f"cannot load the TLS configuration: {exc}") from None

    # -- what the extender does ----------------------------------------------------------------

    @property
    def name(self) -> str:
        """The URL prefix, which identifies the extender (upstream ``Name``)."""
        return self.url_prefix

    def is_filter(self) -> bool:
        """Whether a ``filterVerb`` is configured."""
        return bool(self.config.filter_verb)

    def is_prioritizer(self) -> bool:
        """Whether a ``prioritizeVerb`` is configured."""
        return bool(self.config.prioritize_verb)

    def is_binder(self) -> bool:
        """Whether a ``bindVerb`` is configured (upstream ``IsBinder``)."""
        return bool(self.config.bind_verb)

    def supports_preemption(self) -> bool:
        """Whether a ``preemptVerb`` is configured (upstream ``SupportsPreemption``)."""
        return bool(self.config.preempt_verb)

    def is_interested(self, pod: Pod) -> bool:
        """True without managed resources; else when a container or init container requests
        or limits one of them (upstream ``IsInterested``)."""
        if not self.managed_resources:
            return True
        for container in (*pod.spec.containers, *pod.spec.init_containers):
            if self.managed_resources.intersection(container.requests):
                return True
            if self.managed_resources.intersection(container.limits):
                return True
        return False

    # -- verbs ---------------------------------------------------------------------------------

    def _args(self, pod: Pod, nodes: Sequence[NodeInfo]) -> dict[str, object]:
        args: dict[str, object] = {"pod": to_dict(pod)}
        if self.node_cache_capable:
            args["nodenames"] = [n.name for n in nodes]
        else:
            args["nodes"] = {
                "metadata": {},
                "items": [to_dict(n.node) for n in nodes if n.node is not None],
            }
        return args

    def filter(
        self, pod: Pod, nodes: Sequence[NodeInfo]
    ) -> tuple[list[NodeInfo], dict[str, str], dict[str, str]]:
        """Upstream ``Filter``: the nodes kept, then ``failedNodes`` and
        ``failedAndUnresolvableNodes`` (node name -> reason).

        Raises:
            ExtenderError: the call failed or the extender reported an error.
        """
        if not self.config.filter_verb:
            return list(nodes), {}, {}
        by_name = {n.name: n for n in nodes}
        result = self._send(self.config.filter_verb, self._args(pod, nodes))
        if not isinstance(result, Mapping):
            raise ExtenderError(f"extender {self.url_prefix}: filter: expected a JSON object")
        error = result.get("error")
        if error:
            raise ExtenderError(str(error))
        kept: list[NodeInfo] = []
        names = result.get("nodenames")
        node_list = result.get("nodes")
        if self.node_cache_capable and names is not None:
            if not isinstance(names, list):
                raise ExtenderError(f"extender {self.url_prefix}: nodenames: expected a list")
            for name in names:
                if name not in by_name:
                    raise ExtenderError(
                        f"extender {self.url_prefix!r} claims a filtered node {str(name)!r} "
                        "which is not found in the input node list".replace("'", '"')
                    )
                kept.append(by_name[name])
        elif node_list is not None:
            items = node_list.get("items") if isinstance(node_list, Mapping) else None
            for item in items or ():
                meta = item.get("metadata") if isinstance(item, Mapping) else None
                name = meta.get("name") if isinstance(meta, Mapping) else None
                if name not in by_name:
                    raise ExtenderError(
                        f"extender {self.url_prefix!r} claims a filtered node {str(name)!r} "
                        "which is not found in the input node list".replace("'", '"')
                    )
                kept.append(by_name[str(name)])
        return (
            kept,
            _reasons(result.get("failedNodes")),
            _reasons(result.get("failedAndUnresolvableNodes")),
        )

    def prioritize(self, pod: Pod, nodes: Sequence[NodeInfo]) -> tuple[dict[str, int], int]:
        """Upstream ``Prioritize``: score per host, and this extender's weight.

        Raises:
            ExtenderError: the call failed.
        """
        if not self.config.prioritize_verb:
            return {n.name: 0 for n in nodes}, 0
        result = self._send(self.config.prioritize_verb, self._args(pod, nodes))
        if not isinstance(result, list):
            raise ExtenderError(f"extender {self.url_prefix}: prioritize: expected a JSON list")
        scores: dict[str, int] = {}
        for entry in result:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("score", 0), int):
                raise ExtenderError(
                    f"extender {self.url_prefix}: prioritize: expected {{host, score}} objects"
                )
            host = str(entry.get("host", ""))
            scores[host] = scores.get(host, 0) + int(entry.get("score", 0))
        return scores, self.weight

    def bind(self, pod: Pod, node_name: str) -> None:
        """Upstream ``Bind``: delegate the binding to the extender.

        Raises:
            ExtenderError: the call failed or the extender reported an error.
        """
        if not self.config.bind_verb:
            raise ExtenderError("unexpected empty bindVerb in extender")
        name, namespace, uid = _pod_names(pod)
        result = self._send(
            self.config.bind_verb,
            {"podName": name, "podNamespace": namespace, "podUID": uid, "node": node_name},
        )
        if isinstance(result, Mapping) and result.get("error"):
            raise ExtenderError(str(result["error"]))

    def process_preemption(
        self,
        pod: Pod,
        victims: Mapping[str, Victims],
        node_infos: Mapping[str, NodeInfo],
    ) -> dict[str, Victims]:
        """Upstream ``ProcessPreemption``: the candidates (node -> victims) the extender keeps.

        Node-cache-capable extenders get pod UIDs (``nodeNameToMetaVictims``), others whole
        pods (``nodeNameToVictims``); the reply is always meta victims, turned back into the
        pods on each node.

        Raises:
            ExtenderError: the call failed, or the reply names a node or pod we do not know.
        """
        if not self.config.preempt_verb:
            raise ExtenderError(
                f"preempt verb is not defined for extender {self.url_prefix} but run into "
                "ProcessPreemption"
            )
        args: dict[str, object] = {"pod": to_dict(pod)}
        if self.node_cache_capable:
            args["nodeNameToMetaVictims"] = {
                node: {"pods": [{"uid": p.uid} for p in pods], "numPDBViolations": violations}
                for node, (pods, violations) in victims.items()
            }
        else:
            args["nodeNameToVictims"] = {
                node: {"pods": [to_dict(p) for p in pods], "numPDBViolations": violations}
                for node, (pods, violations) in victims.items()
            }
        result = self._send(self.config.preempt_verb, args)
        meta = result.get("nodeNameToMetaVictims") if isinstance(result, Mapping) else None
        out: dict[str, Victims] = {}
        for node_name, entry in (meta or {}).items():
            info = node_infos.get(node_name)
            if info is None:
                raise ExtenderError(f'node "{node_name}" not found')
            if entry is None:
                out[node_name] = ((), 0)
                continue
            pods_on_node = {p.pod.uid: p.pod for p in info.pods}
            chosen: list[Pod] = []
            for meta_pod in entry.get("pods") or ():
                uid = meta_pod.get("uid") if isinstance(meta_pod, Mapping) else None
                found = pods_on_node.get(str(uid))
                if found is None:
                    raise ExtenderError(
                        f"extender: {self.url_prefix} claims to preempt pod (UID: {uid}) on "
                        f"node: {node_name}, but the pod is not found on that node"
                    )
                chosen.append(found)
            out[node_name] = (tuple(chosen), int(entry.get("numPDBViolations", 0)))
        return out

    # -- transport -----------------------------------------------------------------------------

    def _send(self, verb: str, args: object) -> object:
        """POST ``args`` as JSON to ``<urlPrefix>/<verb>`` and decode the reply (upstream
        ``send``); anything but 200 is an error."""
        url = self.url_prefix.rstrip("/") + "/" + verb
        parsed = urllib.parse.urlsplit(url)
        body = json.dumps(args, separators=(",", ":")).encode()
        host = parsed.hostname or ""
        conn: http.client.HTTPConnection
        if self._scheme == "https":
            assert self._context is not None
            sni = self.config.tls_config.server_name if self.config.tls_config else ""
            conn = _HTTPSConnection(
                host, parsed.port, timeout=self.timeout, context=self._context, sni=sni
            )
        else:
            conn = http.client.HTTPConnection(host, parsed.port, timeout=self.timeout)
        path = parsed.path or "/"
        if parsed.query:
            path += "?" + parsed.query
        try:
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            data = response.read()
        except TimeoutError:
            raise ExtenderError(
                f'Post "{url}": context deadline exceeded (Client.Timeout exceeded while '
                "awaiting headers)"
            ) from None
        except (OSError, http.client.HTTPException) as exc:
            raise ExtenderError(f'Post "{url}": {exc}') from None
        finally:
            conn.close()
        if response.status != 200:
            raise ExtenderError(f"failed {verb} with extender at URL {url}, code {response.status}")
        try:
            return json.loads(data)
        except ValueError as exc:
            raise ExtenderError(
                f"extender {self.url_prefix}: {verb}: invalid JSON: {exc}"
            ) from None

    def __repr__(self) -> str:
        return f"HTTPExtender({self.url_prefix!r})"


def _reasons(value: object) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}
