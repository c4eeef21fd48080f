"""A real headless Chromium, driven through the Chrome DevTools Protocol over aiohttp.

Debian's ``chromium`` is used (browser builds cannot be downloaded here); ``nox -s tests``
installs it when missing. :func:`load_page` opens one URL in a fresh profile and returns what
the page did: its text, console errors, uncaught exceptions, every network request, and a
screenshot.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

#: Where Debian puts its browser.
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser")


def find_chromium() -> str | None:
    """The Chromium executable, or ``None``."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return next((p for p in CHROMIUM_PATHS if os.access(p, os.X_OK)), None)


@attrs.frozen(kw_only=True)
class PageRun:
    """What loading a page did."""

    text: str
    exceptions: tuple[str, ...]
    console_errors: tuple[str, ...]
    log_errors: tuple[str, ...]
    requests: tuple[str, ...]
    failed_requests: tuple[str, ...]
    evaluated: tuple[Any, ...]
    screenshot: bytes


class _Cdp:
    """One DevTools websocket: numbered commands, events gathered in order."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self.loaded = asyncio.Event()
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for msg in self.ws:
            data = msg.json()
            if "id" in data:
                fut = self.pending.pop(data["id"], None)
                if fut is not None and not fut.done():
                    fut.set_result(data)
            else:
                self.events.append(data)
                if data.get("method") == "Page.loadEventFired":
                    self.loaded.set()

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> dict[str, Any]:
        msg_id = next(self.ids)
        fut: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = fut
        message: dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self.ws.send_json(message)
        reply = await asyncio.wait_for(fut, timeout=20)
        if "error" in reply:
            raise RuntimeError(f"{method}: {reply['error']}")
        result: dict[str, Any] = reply.get("result", {})
        return result


def _wait_for_port(profile: Path, proc: subprocess.Popen[bytes], deadline: float) -> str:
    """The browser's websocket URL, from DevToolsActivePort in its profile folder."""
    active = profile / "DevToolsActivePort"
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited with {proc.returncode} before listening")
        if active.exists():
            lines = active.read_text().split("\n")
            if len(lines) >= 2 and lines[0].strip() and lines[1].strip():
                return f"ws://127.0.0.1:{lines[0].strip()}{lines[1].strip()}"
        time.sleep(0.05)
    raise RuntimeError("chromium did not write DevToolsActivePort in time")


async def _drive(ws_url: str, url: str, scripts: tuple[str, ...]) -> PageRun:
    import aiohttp

    async with aiohttp.ClientSession() as http, http.ws_connect(ws_url, max_msg_size=0) as ws:
        cdp = _Cdp(ws)
        try:
            target = await cdp.send("Target.createTarget", {"url": "about:blank"})
            attached = await cdp.send(
                "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
            )
            session = attached["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                await cdp.send(f"{domain}.enable", session=session)
            await cdp.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                session=session,
            )
            cdp.loaded.clear()
            await cdp.send("Page.navigate", {"url": url}, session=session)
            await asyncio.wait_for(cdp.loaded.wait(), timeout=20)
            text = await cdp.send(
                "Runtime.evaluate",
                {"expression": "document.body.innerText", "returnByValue": True},
                session=session,
            )
            evaluated = []
            for script in scripts:
                out = await cdp.send(
                    "Runtime.evaluate",
                    {"expression": script, "returnByValue": True},
                    session=session,
                )
                if "exceptionDetails" in out:
                    raise RuntimeError(f"{script}: {out['exceptionDetails']}")
                evaluated.append(out["result"].get("value"))
            shot = await cdp.send(
                "Page.captureScreenshot",
                {"format": "png", "captureBeyondViewport": False},
                session=session,
            )
            # Let late console messages and requests arrive before reading the events.
            await asyncio.sleep(0.2)
        finally:
            cdp.reader.cancel()
    events = [e for e in cdp.events if e.get("sessionId") == session]

    def of(method: str) -> list[dict[str, Any]]:
        return [e["params"] for e in events if e.get("method") == method]

    return PageRun(
        text=str(text["result"].get("value", "")),
        exceptions=tuple(
            str(p["exceptionDetails"].get("exception", {}).get("description", p))
            for p in of("Runtime.exceptionThrown")
        ),
        console_errors=tuple(
            " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))
            for p in of("Runtime.consoleAPICalled")
            if p.get("type") in ("error", "assert", "warning")
        ),
        log_errors=tuple(
            f"{p['entry'].get('source')}: {p['entry'].get('text')}"
            for p in of("Log.entryAdded")
            if p["entry"].get("level") in ("error", "warning")
        ),
        requests=tuple(p["request"]["url"] for p in of("Network.requestWillBeSent")),
        failed_requests=tuple(
            f"{p.get('errorText')} ({p.get('blockedReason', '')})"
            for p in of("Network.loadingFailed")
        ),
        evaluated=tuple(evaluated),
        screenshot=base64.b64decode(shot["data"]),
    )


def load_page(chromium: str, url: str, scripts: tuple[str, ...] = ()) -> PageRun:
    """Open ``url`` in a fresh headless Chromium, run ``scripts`` (their values are returned),
    take a screenshot and close the browser."""
    with tempfile.TemporaryDirectory(prefix="schedframe-chromium-") as folder:
        profile = Path(folder)
        args = [
            chromium,
            "--headless=new",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-gpu",
            "--disable-extensions",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            "about:blank",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with a sandbox
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            ws_url = _wait_for_port(profile, proc, time.monotonic() + 20)
            return asyncio.run(_drive(ws_url, url, scripts))
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
