"""The runtime: where plugins come from (:class:`Registry`) and how a profile runs them
(:class:`Framework`)."""

from __future__ import annotations

from schedframe.runtime._framework import (
    EXTENSION_POINTS,
    Framework,
    NodeScores,
    PluginRuntimeError,
    PluginScores,
)
from schedframe.runtime._metrics import PluginMetricsRecorder
from schedframe.runtime._registry import ENTRY_POINT_GROUP, PluginFactory, PluginSource, Registry
from schedframe.runtime._standalone import ClusterView, RecordedEvent, RecordingEventRecorder
from schedframe.runtime._waiting_pods import (
    MAX_PERMIT_TIMEOUT,
    ThreadTimers,
    Timers,
    WaitingPod,
    WaitingPods,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "EXTENSION_POINTS",
    "MAX_PERMIT_TIMEOUT",
    "ClusterView",
    "Framework",
    "NodeScores",
    "PluginFactory",
    "PluginMetricsRecorder",
    "PluginRuntimeError",
    "PluginScores",
    "PluginSource",
    "RecordedEvent",
    "RecordingEventRecorder",
    "Registry",
    "ThreadTimers",
    "Timers",
    "WaitingPod",
    "WaitingPods",
]
