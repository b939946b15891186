"""Open a generated report.html in headless Chromium and check that every image loaded.

Skipped when no Chromium is installed (Debian: apt-get install chromium).
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from fpt.cli import main

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--virtual-time-budget=5000"]

# Written into the DOM once the page has loaded, so --dump-dom shows how many images decoded.
PROBE = """<script>
window.addEventListener("load", () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  const p = document.createElement("p");
  p.id = "img-probe";
  p.textContent = `images=${imgs.length} loaded=${ok} tables=${document.querySelectorAll("table").length}`;
  document.body.appendChild(p);
});
</script>"""


def browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def chromium(args: list[str], profile: Path) -> subprocess.CompletedProcess:
    exe = browser()
    if exe is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True,
                          timeout=120, check=False)


@pytest.fixture(scope="module")
def report(tiny_gpt2_dir, tmp_path_factory) -> Path:
    if browser() is None:
        pytest.skip("no Chromium installed (apt-get install chromium)")
    out = tmp_path_factory.mktemp("browser") / "xor"
    assert main(["train", "--body", tiny_gpt2_dir, "--init", "random", "--steps", "6", "--eval-every", "3",
                 "--batch-size", "4", "task.eval_size=32", "--device", "cpu", "--out", str(out), "--quiet"]) == 0
    assert main(["report", str(out)]) == 0  # computes the bit-xor attention maps too
    return out / "report.html"


def test_every_image_loads_in_chromium(report, tmp_path):
    page = report.read_text()
    expected = page.count("<img ")
    assert expected >= 4  # learning curves + three attention maps
    probed = tmp_path / "probed.html"
    probed.write_text(page.replace("</body>", PROBE + "</body>"))
    done = chromium(["--dump-dom", probed.as_uri()], tmp_path / "profile")
    found = re.search(r'id="img-probe">images=(\d+) loaded=(\d+) tables=(\d+)<', done.stdout)
    assert found, f"no probe in the DOM; chromium said: {done.stderr[-2000:]}"
    images, loaded, tables = map(int, found.groups())
    assert images == expected and loaded == images and tables >= 3


def test_screenshot(report, tmp_path):
    shot = tmp_path / "report.png"
    chromium([f"--screenshot={shot}", "--window-size=1280,2400", "--hide-scrollbars", report.as_uri()],
             tmp_path / "profile")
    assert shot.is_file() and shot.read_bytes()[:4] == b"\x89PNG" and shot.stat().st_size > 20_000
