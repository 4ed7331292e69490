"""The explorer page in a real browser: headless Chromium (Debian's package), driven by Playwright.

Builds the docs site, serves it on loopback, and follows a path the *model* says leads from an empty group
to the double ownership of ``cooperative-direct-transfer``, clicking the page's own buttons. Asserts the red
banner, that back/forward and the URL restore the same state, and saves screenshots under
``build/screenshots/`` (printed at the end). Then: "show me how it breaks" walks a broken variant to its
red banner (every broken variant whose counterexample breaks an invariant, each drawn as its state says)
and cooperative-flappy to its deadlock (drawn as the deadlocked state says, no step offered); the pictures of
the double owner and of the deadlock match reference PNGs (``tests/reference/``: under 0.1% of pixels may
differ; a missing arrow is 0.35%; ``GS_UPDATE_REFERENCE=1`` rewrites them); a cut-off graph's
frontier says "unexplored"; an unknown variant in a link is an error; keys step; a phone-width page does
not scroll sideways.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
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
FLAPPY = "cooperative-flappy-2x2"
CUT = "eager-to-cooperative-3x4"  # cut off at the export's state limit
REFERENCE = ROOT / "tests" / "reference" / "explorer-double-owner.png"
SHOTS = ROOT / "build" / "screenshots"


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


def _graph(instance):
    return json.loads((ROOT / "docs/assets/explorer/graphs" / f"{instance}.json").read_text())


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


def _differs(shot: Path, reference: Path) -> float:
    """The fraction of pixels whose colour differs by more than 48 (of 255) in any channel."""
    import numpy as np
    from PIL import Image

    a = np.asarray(Image.open(shot).convert("RGB"), dtype=np.int16)
    b = np.asarray(Image.open(reference).convert("RGB"), dtype=np.int16)
    if a.shape != b.shape:
        return 1.0
    return float((np.abs(a - b).max(axis=2) > 48).mean())


def _state_at(graph, path):
    s = graph["initial"][0]
    for k in path:
        s = graph["edges"][s][k][0]
    return graph["states"][s]


def _path_in(url):
    text = url.rsplit("path=", 1)[1]
    return [int(x) for x in text.split(".")] if text else []


def drawing_problems(page, graph, state):
    """How the picture on the page differs from the exported state (empty: drawn as the state says): each
    member's box holds a token for exactly the partitions it owns, red ones exactly where two members own a
    partition, a member not running is drawn down, and one arrow per answer in flight."""
    pic, names = state["picture"], graph["partitions"]
    bad = []
    owners = [[i for i, m in enumerate(pic["own"]) if (m >> p) & 1] for p in range(len(names))]
    for i, who in enumerate(graph["members"]):
        box = page.locator(f".gs-member[data-who='{who}']")
        drawn = sorted(box.locator(".gs-token").evaluate_all("ts => ts.map(t => t.dataset.partition)"))
        owns = sorted(names[p] for p in range(len(names)) if i in owners[p])
        if drawn != owns:
            bad.append(f"{who}: tokens {drawn}, owns {owns}")
        red = sorted(box.locator(".gs-token.gs-double").evaluate_all("ts => ts.map(t => t.dataset.partition)"))
        twice = sorted(names[p] for p in range(len(names)) if i in owners[p] and len(owners[p]) > 1)
        if red != twice:
            bad.append(f"{who}: red tokens {red}, owned twice {twice}")
        down = "gs-down" in (box.get_attribute("class") or "")
        if down == bool(pic["up"][i]):
            bad.append(f"{who}: drawn {'down' if down else 'running'}, up={pic['up'][i]}")
    arrows = page.locator(".gs-msg").count()
    if arrows != len(pic["msg"]):
        bad.append(f"{arrows} arrows for {len(pic['msg'])} answers in flight")
    return bad


def matches_reference(page, name):
    """Screenshot the picture and compare it with ``tests/reference/NAME.png`` (under 0.1% of pixels differ)."""
    reference = ROOT / "tests" / "reference" / f"{name}.png"
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / f"{name}.png"
    page.locator("#gs-picture").screenshot(path=str(shot))
    if os.environ.get("GS_UPDATE_REFERENCE") == "1" or not reference.exists():
        reference.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, reference)
        pytest.fail(f"reference written to {reference}: check it by eye, commit it, run again")
    diff = _differs(shot, reference)
    print(f"{name}: the picture differs from the reference in {diff:.3%} of its pixels (tolerance 0.1%); {shot}")
    assert diff < 0.001, f"{shot} differs from {reference} in {diff:.2%} of its pixels"


# the other broken variants whose counterexample breaks an invariant: the button walks each to its red banner
BROKEN_INVARIANT = ["eager-no-revoke-2x2", "unfenced-commits-2x2", "consumer-no-wait-release-2x2",
                    "upgrade-unvalidated-2x2"]


@pytest.mark.parametrize("instance", BROKEN_INVARIANT)
def test_every_broken_variant_walks_to_its_red_banner_drawn_as_the_state_says(site, browser, instance):
    graph = _graph(instance)
    broken = {k for k, v in graph["check"]["verdicts"].items() if v.get("held") is False}
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    page.goto(f"{site}/learn/explorer/#v={instance}&path=")
    page.wait_for_selector("#gs-banner.gs-ok")
    assert drawing_problems(page, graph, _state_at(graph, [])) == []
    page.click("#gs-break")
    banner = page.wait_for_selector("#gs-banner[data-kind='invariant']", timeout=20000)
    assert "gs-bad" in banner.get_attribute("class")
    assert any(name in banner.inner_text() for name in broken), banner.inner_text()
    path = _path_in(page.url)
    walked = [graph["check"]["verdicts"][k]["path"] for k in broken if graph["check"]["verdicts"][k].get("path")]
    assert path in walked  # the checker's own counterexample, step for step
    assert drawing_problems(page, graph, _state_at(graph, path)) == []
    page.close()


def test_show_me_how_it_breaks_walks_to_the_red_banner_and_draws_the_double_owner(site, browser):
    graph = _graph(INSTANCE)
    expected = graph["check"]["verdicts"]["exclusive_ownership"]["path"]
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    page.goto(f"{site}/learn/explorer/#v={INSTANCE}&path=")
    page.wait_for_selector("#gs-banner.gs-ok")
    assert page.locator(".gs-token.gs-double").count() == 0
    page.click("#gs-break")
    banner = page.wait_for_selector("#gs-banner[data-kind='invariant']", timeout=20000)
    assert "exclusive_ownership" in banner.inner_text()
    page.wait_for_function(f"location.hash.endsWith('path={'.'.join(map(str, expected))}')")
    # the drawing: one partition as a red token in each of the two members' boxes
    doubles = page.locator(".gs-member .gs-token.gs-double")
    assert doubles.count() == 2
    names = doubles.evaluate_all("ts => ts.map(t => t.dataset.partition)")
    owners = doubles.evaluate_all("ts => ts.map(t => t.closest('.gs-member').dataset.who)")
    fills = doubles.evaluate_all("ts => ts.map(t => t.querySelector('circle').getAttribute('fill'))")
    assert names[0] == names[1] and owners[0] != owners[1] and fills == ["#c62828", "#c62828"]
    assert page.locator(".gs-box.gs-changed").count() >= 1  # the last step's change is highlighted
    assert "Last step:" in page.inner_text("#gs-last")
    # the picture compared with the committed reference
    SHOTS.mkdir(parents=True, exist_ok=True)
    shot = SHOTS / "explorer-picture-double-owner.png"
    page.locator("#gs-picture").screenshot(path=str(shot))
    if os.environ.get("GS_UPDATE_REFERENCE") == "1" or not REFERENCE.exists():
        REFERENCE.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(shot, REFERENCE)
        pytest.fail(f"reference written to {REFERENCE}: check it by eye, commit it, run again")
    diff = _differs(shot, REFERENCE)
    print(f"picture differs from the reference in {diff:.3%} of its pixels (tolerance 0.1%); {shot}")
    assert diff < 0.001, f"{shot} differs from {REFERENCE} in {diff:.2%} of its pixels"
    page.close()


def test_flappy_walks_to_its_deadlock(site, browser):
    graph = _graph(FLAPPY)
    conv = graph["check"]["verdicts"]["convergence"]
    assert conv["held"] is False and conv["path"]
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    page.goto(f"{site}/learn/explorer/#v={FLAPPY}&path=")
    page.wait_for_selector("#gs-banner.gs-ok")
    page.click("#gs-break")
    banner = page.wait_for_selector("#gs-banner[data-kind='deadlock']", timeout=20000)
    assert "deadlock" in banner.inner_text() and "gs-bad" in banner.get_attribute("class")
    assert page.url.endswith("path=" + ".".join(map(str, conv["path"])))
    # the count shown is the checker's, on the same bounds
    assert page.inner_text("#gs-check-states") == f"{graph['check']['states']:,}"
    assert graph["check"]["states"] == len(graph["states"]) == 93
    # the drawing: the deadlocked state as exported (who owns what, nobody down, nothing in flight), no step
    state = _state_at(graph, conv["path"])
    assert state["deadlock"] and not state["converged"]
    assert drawing_problems(page, graph, state) == []
    assert page.locator("#gs-steps button[data-index]").count() == 0
    assert page.locator(".gs-token.gs-double").count() == 0  # a liveness failure: no one owns twice
    matches_reference(page, "explorer-flappy-deadlock")  # before the full-page shot, which resizes the window
    page.screenshot(path=str(SHOTS / "explorer-flappy-deadlock-page.png"), full_page=True)
    page.close()


def test_frontier_of_a_cut_off_graph_says_unexplored(site, browser):
    graph = _graph(CUT)
    assert graph["truncated"] and graph["frontier"]
    frontier = set(graph["frontier"])
    start = graph["initial"][0]
    prev = {start: None}
    queue = deque([start])
    while queue:  # the nearest frontier state
        s = queue.popleft()
        if s in frontier:
            break
        for k, e in enumerate(graph["edges"][s]):
            if e[0] not in prev:
                prev[e[0]] = (s, k)
                queue.append(e[0])
    path = []
    while prev[s] is not None:
        s, k = prev[s]
        path.append(k)
    page = browser.new_page()
    page.goto(f"{site}/learn/explorer/#v={CUT}&path={'.'.join(map(str, path[::-1]))}")
    banner = page.wait_for_selector("#gs-banner[data-kind='unexplored']", timeout=30000)
    assert "Unexplored" in banner.inner_text()
    assert "stutters" not in page.inner_text("#gs-steps")
    page.close()


def test_unknown_variant_in_a_link_is_an_error_and_keys_step(site, browser):
    page = browser.new_page()
    page.goto(f"{site}/learn/explorer/#v=no-such-variant&path=0.1")
    banner = page.wait_for_selector("#gs-banner[data-kind='error']")
    assert "no-such-variant" in banner.inner_text()
    assert page.locator("#gs-picture").count() == 0 and "no-such-variant" in page.url
    page.goto(f"{site}/learn/explorer/#v={INSTANCE}&path=")
    page.wait_for_selector("#gs-picture")
    page.keyboard.press("1")
    page.wait_for_function("location.hash.endsWith('path=0')")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("location.hash.endsWith('path=')")
    page.close()


def test_phone_width_does_not_scroll_sideways(site, browser):
    page = browser.new_page(viewport={"width": 375, "height": 740}, device_scale_factor=2)
    page.goto(f"{site}/learn/explorer/#v={INSTANCE}&path=")
    page.wait_for_selector("#gs-picture")
    page.click("#gs-break")
    page.wait_for_selector("#gs-banner[data-kind='invariant']", timeout=20000)
    box = page.locator("#gs-picture").bounding_box()
    assert box["width"] <= 375
    over = page.evaluate("""() => [...document.querySelectorAll('#gs-explorer *')]
        .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1).map(e => e.tagName + '.' + e.className)""")
    assert not over, over
    page.screenshot(path=str(SHOTS / "explorer-phone.png"), full_page=True)
    page.close()
