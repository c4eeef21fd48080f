"""The ``schedframe`` command: simulate, explain, plugins, config (and ``run``).

Every problem with an input file is one line on stderr naming the file, the field path and
what was expected, and exit code 2; ``--debug`` shows the traceback instead. Every command that
prints a result takes ``-o/--output table|json|yaml`` (``--json`` is ``-o json``), and ``-``
as a configuration file reads it from standard input.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

import click

from schedframe._cli_gates import gate_options
from schedframe.cli._report import check_report_path, report_option, write_report_file
from schedframe.errors import SchedframeError

if TYPE_CHECKING:
    from schedframe.config import KubeSchedulerConfiguration
    from schedframe.objects import Pod
    from schedframe.runtime import Registry
    from schedframe.simulation import Workload

__all__ = ["EXIT_BAD_INPUT", "EXIT_INTERNAL", "cli", "main"]

#: Exit code for bad input (files, options): click's usage-error code.
EXIT_BAD_INPUT: Final = 2
#: Exit code for a failure that is schedframe's fault (a bug): the traceback is with ``--debug``.
EXIT_INTERNAL: Final = 1

_DEBUG_KEY = "schedframe.debug"
_RICH_KEY = "schedframe.rich"
_VALIDATE_KEY = "schedframe.validate"
_ARGS_API_VERSION = "kubescheduler.config.k8s.io/v1"

F = TypeVar("F", bound=Callable[..., Any])


class InputError(SchedframeError):
    """Something wrong with what the user gave (a missing pod, a missing extra)."""


def _set_flag(key: str) -> Callable[[click.Context, click.Parameter, bool], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            ctx.find_root().meta[key] = True

    return callback


def _common(fn: F) -> F:
    """``--debug`` and ``--rich`` on every command (they also work before the command name)."""
    fn = click.option(
        "--rich",
        is_flag=True,
        expose_value=False,
        callback=_set_flag(_RICH_KEY),
        help="Draw tables and progress with rich (needs rich installed).",
    )(fn)
    fn = click.option(
        "--debug",
        is_flag=True,
        expose_value=False,
        callback=_set_flag(_DEBUG_KEY),
        help="Show tracebacks instead of one-line errors.",
    )(fn)
    return fn


#: What ``-o/--output`` takes; ``table`` is the text for people.
OUTPUT_FORMATS: Final = ("table", "json", "yaml")


def _output_option(fn: F) -> F:
    """``-o/--output FORMAT`` and its shorthand ``--json``."""
    fn = click.option(
        "--json", "as_json", is_flag=True, help="Print the result as JSON (same as -o json)."
    )(fn)
    fn = click.option(
        "--output",
        "-o",
        "output_format",
        type=click.Choice(OUTPUT_FORMATS),
        default=None,
        help="How to print the result: table (text, the default), json or yaml.",
    )(fn)
    return fn


def _format(output_format: str | None, as_json: bool) -> str:
    if as_json and output_format not in (None, "json"):
        raise click.UsageError(f"--json contradicts -o {output_format}")
    return "json" if as_json else (output_format or "table")


def _emit(document: object, output_format: str, text: Callable[[], str]) -> None:
    """Print ``document`` as JSON or YAML, or ``text()`` for ``table``."""
    if output_format == "json":
        click.echo(json.dumps(document, indent=2))
    elif output_format == "yaml":
        import yaml

        click.echo(yaml.safe_dump(document, sort_keys=False, default_flow_style=False).rstrip())
    else:
        click.echo(text())


def _validate_option(fn: F) -> F:
    """``--validate``, as kubectl's: how unknown fields in manifests are treated."""

    def callback(ctx: click.Context, param: click.Parameter, value: str) -> None:
        ctx.find_root().meta[_VALIDATE_KEY] = value

    return click.option(
        "--validate",
        type=click.Choice(["strict", "warn", "ignore"]),
        default="strict",
        show_default=True,
        expose_value=False,
        callback=callback,
        help="Unknown fields in manifests: an error (exit 2), one warning line each, or "
        "not looked for. API validation (negative quantities, bad names) applies always.",
    )(fn)


def _validate() -> Any:
    ctx = click.get_current_context(silent=True)
    return "strict" if ctx is None else ctx.find_root().meta.get(_VALIDATE_KEY, "strict")


@contextlib.contextmanager
def _manifest_warnings() -> Iterator[None]:
    """Print each manifest warning (``--validate=warn``) as one ``warning:`` line on stderr."""
    from schedframe.errors import ManifestWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ManifestWarning)
        yield
    for w in caught:
        if issubclass(w.category, ManifestWarning):
            click.echo(f"warning: {w.message}", err=True)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)


def _debug() -> bool:
    ctx = click.get_current_context(silent=True)
    return bool(ctx is not None and ctx.find_root().meta.get(_DEBUG_KEY))


def _rich() -> bool:
    ctx = click.get_current_context(silent=True)
    if ctx is None or not ctx.find_root().meta.get(_RICH_KEY):
        return False
    import importlib.util

    if importlib.util.find_spec("rich") is None:
        raise InputError("--rich needs rich: pip install rich")
    return True


def _errors(fn: F) -> F:
    """Turn schedframe's errors into one line per issue and exit code 2 (unless --debug)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except SchedframeError as exc:
            if _debug():
                raise
            for line in str(exc).splitlines() or [type(exc).__name__]:
                click.echo(f"error: {line}", err=True)
            raise click.exceptions.Exit(EXIT_BAD_INPUT) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except Exception as exc:
            if _debug():
                raise
            click.echo(
                f"error: internal error: {type(exc).__name__}: {exc} "
                "(run with --debug for the traceback)",
                err=True,
            )
            raise click.exceptions.Exit(EXIT_INTERNAL) from None

    return wrapper  # type: ignore[return-value]


@click.group(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(package_name="schedframe", prog_name="schedframe")
@_common
def cli() -> None:
    """Simulate and explain kube-scheduler decisions, in Python."""


# --------------------------------------------------------------------------------------------
# Inputs
# --------------------------------------------------------------------------------------------


#: Where each object was first read: ``(kind, namespace, name) -> file``, per command run.
_Seen = dict[tuple[str, str, str], str]


def _note(seen: _Seen, obj: object, source: str) -> None:
    """Refuse a second object of one kind, namespace and name, naming both files."""
    from schedframe.errors import DUPLICATE, FieldIssue, ManifestError

    meta = getattr(obj, "metadata", None)
    name = getattr(meta, "name", None)
    if not isinstance(name, str):
        return
    kind = type(obj).__name__
    namespace = getattr(meta, "namespace", "") or ""
    if kind == "Pod":
        namespace = namespace or "default"
    key = (kind, namespace, name)
    first = seen.get(key)
    seen.setdefault(key, source)
    if first is not None:
        where = "earlier in this file" if first == source else f"in {first}"
        issue = FieldIssue(
            path="metadata.name",
            kind=DUPLICATE,
            value=f"{namespace}/{name}" if namespace else name,
            detail=f"a {kind} of this name is already {where}",
        )
        raise ManifestError([issue], source=source)


def _load_cluster(paths: Sequence[str], seen: _Seen | None = None) -> list[object]:
    from schedframe.objects import LoadReport, load_manifests

    seen = {} if seen is None else seen
    objects: list[object] = []
    report = LoadReport()
    with _manifest_warnings():
        for path in dict.fromkeys(paths):  # a file named twice is read once
            loaded = load_manifests(path, report=report, validate=_validate())
            for obj in loaded:
                _note(seen, obj, str(path))
            objects.extend(loaded)
    for line in report.lines():  # one line per skipped kind: never silently
        click.echo(line, err=True)
    return objects


def _load_workload(paths: Sequence[str], seen: _Seen | None = None) -> Workload:
    from schedframe.simulation import Workload, load_workload

    seen = {} if seen is None else seen
    workload = Workload()
    with _manifest_warnings():
        for path in dict.fromkeys(paths):
            loaded = load_workload(path, validate=_validate())
            for pod in loaded.pods:
                _note(seen, pod, str(path))
            workload = workload + loaded
    return workload


def _load_config(path: str | None) -> KubeSchedulerConfiguration:
    """The configuration in ``path`` (``-``: standard input; ``None``: the defaults)."""
    from schedframe._cli_gates import gate_settings
    from schedframe.config import load_config, loads_config

    feature_gates, emulated_version = gate_settings()
    if path == "-":
        return loads_config(
            sys.stdin.read(),
            source="<stdin>",
            feature_gates=feature_gates,
            emulated_version=emulated_version,
        )
    return load_config(path, feature_gates=feature_gates, emulated_version=emulated_version)


def _find_pod(spec: str, candidates: Sequence[Pod]) -> Pod:
    """A pod by ``[namespace/]name`` among ``candidates``, or the one Pod in a manifest file."""
    from schedframe.objects import Pod, load_manifests

    path = Path(spec)
    if path.is_file():
        with _manifest_warnings():
            objects = load_manifests(path, validate=_validate())
        pods = [o for o in objects if isinstance(o, Pod)]
        if len(pods) != 1:
            raise InputError(f"{spec}: expected exactly one Pod, found {len(pods)}")
        return pods[0]
    namespace, _, name = spec.rpartition("/")
    found = [
        p for p in candidates if p.name == name and (not namespace or p.namespace == namespace)
    ]
    if not found:
        raise InputError(
            f'no pod "{spec}" in the cluster or workload (give [namespace/]name, or a Pod manifest file)'
        )
    if len({p.key for p in found}) > 1:
        keys = ", ".join(sorted({p.key for p in found}))
        raise InputError(f'pod name "{spec}" is ambiguous: {keys}; give namespace/name')
    return found[0]


def _with_source(exc: SchedframeError, source: str | None) -> SchedframeError:
    from schedframe.errors import ConfigError, PluginError

    if source is None:
        return exc
    if isinstance(exc, ConfigError) and exc.source is None:
        return exc.with_source(source)
    if isinstance(exc, PluginError):
        return PluginError(f"{source}: {exc}")
    return exc


# --------------------------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------------------------


@cli.command()
@click.option(
    "--cluster",
    "-c",
    "clusters",
    multiple=True,
    required=True,
    metavar="PATH",
    help="Nodes and running Pods (and Namespaces, PDBs): YAML, JSON or a folder. Repeatable.",
)
@click.option(
    "--workload",
    "-w",
    "workloads",
    multiple=True,
    metavar="PATH",
    help="Pods to schedule: Pod manifests or a generator spec (kind: Workload). Repeatable.",
)
@click.option(
    "--config",
    "-f",
    "config_path",
    metavar="FILE",
    help="KubeSchedulerConfiguration (default: kube-scheduler's default profile; - reads stdin).",
)
@click.option(
    "--seed", default=0, show_default=True, help="Seed of the tie-breaking random source."
)
@click.option(
    "--until",
    type=click.FloatRange(min=0, max=1e10),
    metavar="SECONDS",
    help="Stop at this virtual time (default: when every arrival and completion happened).",
)
@click.option(
    "--max-virtual-time",
    type=click.FloatRange(min=0, max=1e10),
    default=365 * 24 * 3600.0,
    show_default=True,
    metavar="SECONDS",
    help="Never run past this virtual time (one year by default); says so if work was left.",
)
@click.option(
    "--decisions",
    "decisions_path",
    metavar="FILE",
    help="Write every decision as JSON lines to FILE.",
)
@click.option(
    "--plot",
    "plot_dir",
    metavar="DIR",
    help="Write PNG plots to DIR (needs matplotlib: pip install 'schedframe[viz]').",
)
@click.option(
    "--plot-pod",
    metavar="POD",
    help="[namespace/]name of the pod whose score heatmap --plot draws (default: the last to arrive).",
)
@click.option(
    "--explain",
    "explain_pods",
    multiple=True,
    metavar="POD",
    help="Also explain POD's first attempt, on the cluster as it saw it. Repeatable.",
)
@click.option(
    "--metrics",
    "metrics_path",
    metavar="FILE",
    help="Write kube-scheduler's Prometheus metrics (text format) to FILE at the end "
    "(needs prometheus-client: pip install 'schedframe[metrics]').",
)
@report_option
@_output_option
@click.option(
    "--progress/--no-progress",
    default=True,
    show_default=True,
    help="Show progress on stderr once a run takes more than a second.",
)
@_validate_option
@gate_options
@_common
@_errors
def simulate(
    clusters: tuple[str, ...],
    workloads: tuple[str, ...],
    config_path: str | None,
    seed: int,
    until: float | None,
    max_virtual_time: float,
    decisions_path: str | None,
    plot_dir: str | None,
    plot_pod: str | None,
    explain_pods: tuple[str, ...],
    metrics_path: str | None,
    report_path: str | None,
    output_format: str | None,
    as_json: bool,
    progress: bool,
) -> None:
    """Run a workload on a cluster with the real scheduler, in deterministic virtual time.

    Prints a summary: bound / unschedulable / preempted pods, why pods stayed pending,
    per-node and per-zone utilisation, scheduling latency (virtual time) and throughput.
    The same inputs and seed always give the same decisions.

    \b
    Example:
      schedframe simulate -c examples/basic/cluster.yaml \\
          -w examples/basic/workload.yaml -f examples/basic/binpack.yaml
    """
    from schedframe.cli._render import ProgressDisplay, render_explanation
    from schedframe.simulation import plot_simulation
    from schedframe.simulation import simulate as run_simulation
    from schedframe.simulation._plot import require_matplotlib

    fmt = _format(output_format, as_json)
    # With a machine-readable summary on stdout, the other lines go to stderr.
    machine = fmt != "table"
    use_rich = _rich()
    if plot_dir is not None:
        try:
            require_matplotlib()  # fail before a long run, not after it
        except ImportError as exc:
            raise InputError(f"--plot: {exc}") from None
    # Unwritable outputs fail before a long run, not after it.
    if decisions_path is not None:
        try:
            Path(decisions_path).open("w", encoding="utf-8").close()
        except OSError as exc:
            raise InputError(f"{decisions_path}: cannot write: {exc.strerror or exc}") from None
    check_report_path(report_path)
    scheduler_metrics = None
    if metrics_path is not None:
        try:
            from schedframe.metrics import SchedulerMetrics
        except ImportError as exc:
            raise InputError(f"--metrics: {exc} (pip install 'schedframe[metrics]')") from None
        try:
            Path(metrics_path).open("w", encoding="utf-8").close()
        except OSError as exc:
            raise InputError(f"{metrics_path}: cannot write: {exc.strerror or exc}") from None
        scheduler_metrics = SchedulerMetrics()
    if plot_dir is not None:
        try:
            Path(plot_dir).mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{plot_dir}: cannot create: {exc.strerror or exc}") from None
    seen: _Seen = {}
    cluster = _load_cluster(clusters, seen)
    workload = _load_workload(workloads, seen)
    config = _load_config(config_path)

    from schedframe.objects import Pod

    candidates = [*workload.pods, *(o for o in cluster if isinstance(o, Pod))]
    explained = [_find_pod(name, candidates).key for name in explain_pods]
    capture: list[str] = []
    if plot_dir is not None:
        if plot_pod is not None:
            capture.append(_find_pod(plot_pod, candidates).key)
        else:
            pending = [p for p in candidates if not p.spec.node_name]
            if pending:
                # The last to arrive sees the fullest cluster.
                capture.append(pending[len(workload.pods) - 1 if workload.pods else -1].key)

    try:
        result = run_simulation(
            cluster=cluster,
            workload=workload,
            config=config,
            seed=seed,
            until=until,
            progress=ProgressDisplay(use_rich=use_rich) if progress else None,
            capture=[*capture, *explained],
            max_virtual_time=max_virtual_time,
            metrics=scheduler_metrics,
        )
    except SchedframeError as exc:
        raise _with_source(exc, "<stdin>" if config_path == "-" else config_path) from None

    for sentence in result.unsettled:
        click.echo(f"warning: the scenario did not settle: {sentence}", err=True)
    summary = result.summary()
    _emit(summary.to_dict(), fmt, summary.to_text)
    if decisions_path is not None:
        result.write_jsonl(decisions_path)
        click.echo(f"\nDecisions: {decisions_path} ({len(result.decisions)} lines)", err=machine)
    if scheduler_metrics is not None and metrics_path is not None:
        Path(metrics_path).write_text(scheduler_metrics.exposition(), encoding="utf-8")
        click.echo(f"Metrics: {metrics_path}", err=machine)
    if plot_dir is not None:
        written = plot_simulation(result, plot_dir, pod=capture[0] if capture else None)
        click.echo(f"Plots: {', '.join(str(p) for p in written)}", err=machine)
    write_report_file(result, report_path, to_stderr=machine)
    for key in explained:
        if key not in result.captured:
            click.echo(f"\n{key}: never attempted, nothing to explain", err=machine)
            continue
        record = next((r for r in result.pods if r.key == key), None)
        when = f" at t={record.arrival:g}s" if record is not None else ""
        click.echo(f"\nFirst attempt of {key}{when}, as the cluster stood then:", err=machine)
        click.echo(render_explanation(result.explain(key), use_rich=use_rich), err=machine)


# --------------------------------------------------------------------------------------------
# explain
# --------------------------------------------------------------------------------------------


@cli.command()
@click.argument("pod")
@click.option(
    "--cluster",
    "-c",
    "clusters",
    multiple=True,
    required=True,
    metavar="PATH",
    help="Nodes and running Pods (and Namespaces, PDBs): YAML, JSON or a folder. Repeatable.",
)
@click.option(
    "--workload",
    "-w",
    "workloads",
    multiple=True,
    metavar="PATH",
    help="Where else to look for POD by name (the workload's pods are not placed).",
)
@click.option(
    "--config",
    "-f",
    "config_path",
    metavar="FILE",
    help="KubeSchedulerConfiguration (- reads stdin).",
)
@click.option(
    "--profile", metavar="NAME", help="Profile to run (default: the pod's schedulerName)."
)
@click.option(
    "--seed", default=0, show_default=True, help="Seed of the tie-break among equal totals."
)
@click.option(
    "--no-post-filter",
    is_flag=True,
    help="Do not run PostFilter (preemption, dry run) when no node fits.",
)
@_output_option
@_validate_option
@gate_options
@_common
@_errors
def explain(
    pod: str,
    clusters: tuple[str, ...],
    workloads: tuple[str, ...],
    config_path: str | None,
    profile: str | None,
    seed: int,
    no_post_filter: bool,
    output_format: str | None,
    as_json: bool,
) -> None:
    """Why POD goes where it goes, or why it stays pending.

    POD is [namespace/]name of a pod in the cluster or workload files, or a file holding one
    Pod. Every node is evaluated (no sampling): each node's filter verdict (plugin, reasons),
    every score plugin's raw, normalized and weighted score, the chosen node, and one
    "why not" line for every other node.

    \b
    Example:
      schedframe explain stuck -c examples/taints-affinity/cluster.yaml \\
          -w examples/taints-affinity/workload.yaml
    """
    from schedframe.cli._render import render_explanation
    from schedframe.explain import explain as run_explain
    from schedframe.objects import Namespace, Node, Pod, PodDisruptionBudget, PriorityClass

    fmt = _format(output_format, as_json)
    use_rich = _rich()
    seen: _Seen = {}
    cluster = _load_cluster(clusters, seen)
    workload = _load_workload(workloads, seen)
    config = _load_config(config_path)
    pods = [o for o in cluster if isinstance(o, Pod)]
    target = _find_pod(pod, [*pods, *workload.pods])
    try:
        result = run_explain(
            target,
            nodes=[o for o in cluster if isinstance(o, Node)],
            pods=pods,
            namespaces=[o for o in cluster if isinstance(o, Namespace)],
            pdbs=[o for o in cluster if isinstance(o, PodDisruptionBudget)],
            workloads=[*cluster, *workload.objects],
            priority_classes=[o for o in cluster if isinstance(o, PriorityClass)],
            config=config,
            profile=profile,
            seed=seed,
            post_filter=not no_post_filter,
        )
    except SchedframeError as exc:
        raise _with_source(exc, "<stdin>" if config_path == "-" else config_path) from None
    _emit(result.to_dict(), fmt, lambda: render_explanation(result, use_rich=use_rich))


# --------------------------------------------------------------------------------------------
# plugins
# --------------------------------------------------------------------------------------------


def extension_points(factory: object) -> list[str]:
    """The extension points (config keys, upstream order) a plugin class implements.

    A point counts when the class subclasses its Protocol or defines all of its methods.
    A factory that is not a class gives ``[]``: its points are known only once it builds a
    plugin, which needs args and a Handle.
    """
    from schedframe.runtime import EXTENSION_POINTS

    if not isinstance(factory, type):
        return []
    points = []
    for _, proto, _, key in EXTENSION_POINTS:
        methods = [m for m, v in vars(proto).items() if callable(v) and not m.startswith("_")]
        if proto in factory.__mro__ or all(
            callable(getattr(factory, m, None)) and getattr(factory, m) is not getattr(proto, m)
            for m in methods
        ):
            points.append(key)
    return points


@cli.command()
@click.option(
    "--no-points",
    is_flag=True,
    help="Skip extension points: list names and versions without importing any plugin.",
)
@_output_option
@_common
@_errors
def plugins(no_points: bool, output_format: str | None, as_json: bool) -> None:
    """List the installed scheduler plugins (entry-point group schedframe.plugins).

    Names, distributions and versions come from installed metadata and import nothing.
    Extension points need each plugin's module imported; --no-points skips that.
    """
    from schedframe.runtime import Registry

    fmt = _format(output_format, as_json)
    registry = Registry.discover()
    entries: list[dict[str, object]] = []
    for source in registry.sources():
        entry: dict[str, object] = {
            "name": source.name,
            "distribution": source.distribution,
            "version": source.version,
            "value": source.value,
        }
        if not no_points:
            try:
                entry["points"] = extension_points(registry.load(source.name))
            except SchedframeError as exc:
                entry["points"] = None
                entry["error"] = str(exc)
        entries.append(entry)
    if fmt != "table":
        _emit(entries, fmt, str)
        return
    headers = ["name", "distribution", "version"]
    if not no_points:
        headers.append("extension points")
    rows: list[list[object]] = []
    for e in entries:
        row: list[object] = [e["name"], e["distribution"] or "(in-process)", e["version"]]
        if not no_points:
            points = e.get("points")
            if points is None:
                row.append(f"(cannot load: {e.get('error', '')})")
            else:
                assert isinstance(points, list)
                row.append(", ".join(points) or "(not a class)")
        rows.append(row)
    from schedframe.cli._render import render_table

    click.echo(render_table(headers, rows, use_rich=_rich()))


# --------------------------------------------------------------------------------------------
# config
# --------------------------------------------------------------------------------------------


def defaulted_config(
    config: KubeSchedulerConfiguration,
    *,
    registry: Registry | None = None,
    source: str | None = None,
) -> dict[str, object]:
    """The configuration as kube-scheduler would run it, as a camelCase document.

    Each profile's ``pluginConfig`` shows every enabled plugin's decoded args with their
    defaults (``encode_args``), as upstream's defaulting does: entries given in the file
    first, in their order, then one for every other enabled plugin that takes args, by name.

    Raises:
        ConfigError: a plugin is unknown or its args are invalid.
        PluginError: a plugin failed to build.
    """
    from schedframe.config import encode_args, to_dict
    from schedframe.runtime import Framework, Registry

    reg = registry if registry is not None else Registry.discover()
    doc = to_dict(config)
    profiles = doc["profiles"]
    assert isinstance(profiles, list)
    for index, profile in enumerate(config.profiles):
        fwk = Framework.from_profile(
            profile, reg, index=index, source=source, features=config.feature_gates
        )
        entries: list[dict[str, object]] = []

        def entry(name: str, args: object) -> dict[str, object]:
            encoded = {"apiVersion": _ARGS_API_VERSION, "kind": f"{name}Args"}
            encoded.update(encode_args(args))  # type: ignore[arg-type]
            return {"name": name, "args": encoded}

        given: set[str] = set()
        for pc in profile.plugin_config:
            given.add(pc.name)
            args = fwk.plugin_args.get(pc.name)
            entries.append(
                entry(pc.name, args)
                if args is not None
                else {"name": pc.name, "args": dict(pc.args)}
            )
        for name in sorted(fwk.plugin_args):
            args = fwk.plugin_args[name]
            if name not in given and args is not None:
                entries.append(entry(name, args))
        fwk.close()
        prof_doc = profiles[index]
        assert isinstance(prof_doc, dict)
        prof_doc["pluginConfig"] = entries
    return doc


@cli.command("config")
@click.argument("file", required=False)
@click.option(
    "--output",
    "-o",
    "output_format",
    type=click.Choice(["yaml", "json"]),
    default="yaml",
    show_default=True,
    help="How to print the configuration.",
)
@gate_options
@_common
@_errors
def config_command(file: str | None, output_format: str) -> None:
    """Print the fully defaulted configuration of FILE (default: kube-scheduler's).

    FILE ``-`` reads the configuration from standard input. Every profile lists its plugins
    after merging with the defaults, and every enabled plugin's args with their defaults
    filled in.
    """
    config = _load_config(file)
    doc = defaulted_config(config, source="<stdin>" if file == "-" else file)
    _emit(doc, output_format, str)


def _add_run_command() -> None:
    # `schedframe run` lives with the Kubernetes backend; importing the command needs neither
    # the kubernetes client nor urllib3 (a missing extra is reported when it runs).
    from schedframe.backends.kubernetes._cli import run_command

    cli.add_command(run_command, "run")


_add_run_command()


def _add_capacity_commands() -> None:
    # scenario, fit, whatif, compare: their own module (simulation layer commands).
    import schedframe.cli._capacity  # noqa: F401  (registers the commands on import)


_add_capacity_commands()


def _add_sweep_command() -> None:
    import schedframe.cli._sweep  # noqa: F401  (registers `schedframe sweep` on import)


_add_sweep_command()


def _add_replay_command() -> None:
    import schedframe.cli._replay  # noqa: F401  (registers `replay` on import)


_add_replay_command()


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``schedframe`` command with ``argv`` (default: ``sys.argv[1:]``); the exit code.

    This is the console script; ``examples/demo.py`` calls it too, so both take one path.
    """
    try:
        rv = cli.main(
            args=list(argv) if argv is not None else sys.argv[1:],
            prog_name="schedframe",
            standalone_mode=False,
        )
    except click.exceptions.Exit as exc:
        return int(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        return int(exc.exit_code)
    except click.Abort:
        click.echo("Aborted!", err=True)
        return 1
    return rv if isinstance(rv, int) else 0
