"""The HTML report in a real browser: headless Chromium renders it offline,
draws it (a screenshot with the charts' colours in it), logs no console
message (a blocked resource, a script, a CSP violation would each log one)
and asks the network for nothing (its net log holds no request from the page).

Two control pages show that each check can fail: the same report with an
image from the network, once under the report's Content-Security-Policy
(the browser blocks it and says so on its console) and once without one
(the browser asks the network, and the net log shows it).

Skipped where no Chromium or Chrome is on PATH (.ci/run installs Debian's
chromium where it can). Generous time limits, no timing asserts: a loaded
2-core machine only makes it slower.
"""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from gemmbench.output.charts import load_profile
from gemmbench.output.html import report_html
from gemmbench.output.svg import PALETTE
from gemmbench.records.store import load

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = ROOT / "results" / "reference"
PROFILE = ROOT / "tests" / "data" / "ncu_raw_rung14_h200.csv"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
WIDTH, HEIGHT = 1280, 2400
BROWSER_SECONDS = 300
EXTERNAL = '<img src="http://example.invalid/pixel.png" alt="">'


@pytest.fixture(scope="module")
def browser() -> str:
    found = next((path for path in map(shutil.which, BROWSERS) if path), None)
    if found is None:
        pytest.skip(f"no headless browser on PATH (looked for {', '.join(BROWSERS)}); "
                    "Debian: apt-get install chromium")
    return found


def render(browser: str, page: Path, folder: Path) -> tuple[Path, str, list[str]]:
    """Open ``page`` headless with every host name unresolvable; the
    screenshot, the browser's stderr, and the URLs the page asked the network for."""
    shot, netlog = folder / "shot.png", folder / "net.json"
    cmd = [browser, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
           "--disable-background-networking", "--disable-component-update", "--disable-sync",
           "--hide-scrollbars", f"--user-data-dir={folder / 'profile'}", "--enable-logging=stderr", "--v=0",
           "--host-resolver-rules=MAP * ~NOTFOUND", f"--log-net-log={netlog}",
           f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", page.resolve().as_uri()]
    done = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=BROWSER_SECONDS)
    assert done.returncode == 0, done.stderr[-3000:]
    return shot, done.stderr, page_requests(netlog)


def page_requests(netlog: Path) -> list[str]:
    """The URLs of network requests a page made: those whose network
    isolation key is a file:// page (the browser's own requests, for updates
    and the like, carry other keys or none)."""
    text = netlog.read_text()
    try:
        log = json.loads(text)
    except json.JSONDecodeError:  # a log cut short at exit: close it
        log = json.loads(text.rstrip().rstrip(",") + "]}")
    kinds = {number: name for name, number in log["constants"]["logEventTypes"].items()}
    urls = []
    for event in log.get("events", []):
        params = event.get("params") or {}
        if kinds.get(event["type"]) == "URL_REQUEST_START_JOB" and "url" in params and \
                "file://" in str(params.get("network_isolation_key", "")):
            urls.append(params["url"])
    return urls


def console_lines(stderr: str) -> list[str]:
    """What the page logged: its console (script errors, CSP violations, blocked loads)."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line or "CONSOLE(" in line]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR", data[:16]
    return struct.unpack(">II", data[16:24])


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    page = folder / "report.html"
    page.write_text(report_html([load(REFERENCE / "h200-compare-4096.json")], profiles=[load_profile(PROFILE)]))
    return page


def test_the_report_renders_offline_without_a_message(browser, report, tmp_path):
    shot, stderr, requests = render(browser, report, tmp_path)
    assert console_lines(stderr) == []
    assert requests == []
    data = shot.read_bytes()
    assert png_size(data) == (WIDTH, HEIGHT)
    image = pytest.importorskip("PIL.Image", reason="Pillow (matplotlib's dependency) reads the screenshot's pixels")
    pixels = image.open(shot).convert("RGB")
    colours = pixels.getcolors(WIDTH * HEIGHT)
    white = sum(n for n, c in colours if c == (255, 255, 255))
    assert white < 0.97 * WIDTH * HEIGHT  # drawn, not blank
    bar = tuple(int(PALETTE[0][i:i + 2], 16) for i in (1, 3, 5))
    assert sum(n for n, c in colours if c == bar) > 2000  # the bars of the FP32 rungs: the SVG was drawn


@pytest.mark.parametrize("policy", ["kept", "removed"])
def test_the_checks_see_an_external_resource(browser, report, tmp_path, policy):
    html = report.read_text().replace("<main>", "<main>" + EXTERNAL, 1)
    if policy == "removed":
        html = re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
    page = tmp_path / "control.html"
    page.write_text(html)
    _, stderr, requests = render(browser, page, tmp_path)
    if policy == "kept":  # blocked before any request, and said on the console
        assert any("example.invalid" in line for line in console_lines(stderr)), stderr[-3000:]
        assert requests == []
    else:
        assert "http://example.invalid/pixel.png" in requests
