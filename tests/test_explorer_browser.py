"""The explorer page in a real browser: headless Chromium (Debian's package), driven by Playwright.

Builds the docs site, serves it on loopback, and follows a path the *model* says leads from an empty group
to the double ownership of ``cooperative-direct-transfer``, clicking the page's own buttons. Asserts the red
banner, that back/forward and the URL restore the same state, and saves screenshots under
``build/screenshots/`` (printed at the end).
"""
from __future__ import annotations

import functools
import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections import deque
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
INSTANCE = "cooperative-direct-transfer-2x2"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "-q", "-d", str(out)], cwd=ROOT, check=True,
                   env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"})
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):  # keep the test's output readable
            pass

    handler = functools.partial(Quiet, directory=str(out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def shortest_path_to_violation(graph):
    """Edge indices from the initial state to the nearest state that breaks an invariant (BFS on the graph)."""
    start = graph["initial"][0]
    prev = {start: None}
    queue = deque([start])
    while queue:
        s = queue.popleft()
        if graph["states"][s]["violations"]:
            path = []
            while prev[s] is not None:
                s, k = prev[s]
                path.append(k)
            return path[::-1]
        for k, e in enumerate(graph["edges"][s]):
            if e[0] not in prev:
                prev[e[0]] = (s, k)
                queue.append(e[0])
    return None


def test_click_from_an_empty_group_to_a_double_ownership_and_back(site):
    from playwright.sync_api import sync_playwright

    graph = json.loads((ROOT / "docs/assets/explorer/graphs" / f"{INSTANCE}.json").read_text())
    path = shortest_path_to_violation(graph)
    assert path, "the exported graph of the broken variant has no violating state"
    shots = ROOT / "build" / "screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 1000})
            page.goto(f"{site}/learn/explorer/#v={INSTANCE}&path=")
            page.wait_for_selector("#gs-banner.gs-ok")
            assert "empty group" in page.inner_text("#gs-history")
            page.screenshot(path=str(shots / "explorer-0-empty-group.png"), full_page=True)
            for n, k in enumerate(path, 1):
                page.click(f"#gs-steps button[data-index='{k}']")
                page.wait_for_function(f"location.hash.endsWith('path={'.'.join(map(str, path[:n]))}')")
            banner = page.wait_for_selector("#gs-banner.gs-bad")
            assert "exclusive_ownership" in banner.inner_text()
            red_heading = page.inner_text("h3")
            red_url = page.url
            page.screenshot(path=str(shots / "explorer-1-violation.png"), full_page=True)
            # back: one step earlier, the banner is green again
            page.go_back()
            page.wait_for_selector("#gs-banner.gs-ok")
            assert page.url.endswith("path=" + ".".join(map(str, path[:-1])))
            # forward: the same violating state
            page.go_forward()
            page.wait_for_selector("#gs-banner.gs-bad")
            assert page.inner_text("h3") == red_heading
            # the page's own "step back" button
            page.click("#gs-back")
            page.wait_for_selector("#gs-banner.gs-ok")
            # a fresh page from the shared URL restores the same state
            other = browser.new_page()
            other.goto(red_url)
            other.wait_for_selector("#gs-banner.gs-bad")
            assert other.inner_text("h3") == red_heading
            other.screenshot(path=str(shots / "explorer-2-shared-url.png"), full_page=True)
        finally:
            browser.close()
    print(f"screenshots in {shots}")
