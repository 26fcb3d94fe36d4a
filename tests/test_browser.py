"""The published site in a real browser: headless Chromium loads reports/index.html and follows every link.

Chromium and its driver are Debian's (`chromium`, `chromium-driver`); selenium is pointed at
`/usr/bin/chromedriver` so selenium-manager never downloads a browser. Skips with a reason when
they are missing (e.g. not root, no apt).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
from toy_site import STATEMENT, toy_site

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="Debian chromium and chromium-driver are not installed (make setup installs them as root)",
    ),
]


@pytest.fixture(scope="module")
def browser():
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="actlab-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _severe(driver, local_only: bool = False):
    entries = [e for e in driver.get_log("browser") if e["level"] == "SEVERE"]
    if local_only:  # nbconvert pages pull require.js and MathJax from a CDN; offline those fail to load
        entries = [e for e in entries if not (e.get("source") == "network" and "https://" in e["message"])]
    return entries


def _images_decoded(driver) -> tuple[int, bool]:
    return driver.execute_script(
        "const imgs = Array.from(document.images);"
        "return [imgs.length, imgs.every(i => i.complete && i.naturalWidth > 0)];"
    )


def test_index_loads_without_errors_and_shows_injected_html_as_text(browser):
    config, _ = toy_site()
    index = (config.out_dir / "index.html").resolve()
    browser.get(index.as_uri())
    assert _severe(browser) == []
    assert browser.title == "actlab report"
    assert browser.execute_script("return typeof window.__actlab_injected") == "undefined"
    cell = browser.find_element("css selector", "#claim-toy-loss td")
    assert STATEMENT in cell.text  # the <script> tag is shown as text, not run
    count, decoded = _images_decoded(browser)
    assert decoded
    verdict = browser.find_element("css selector", "#claim-toy-loss td:nth-child(7)").text
    assert verdict in ("supported", "not supported", "inconclusive")


def test_every_link_resolves_and_every_image_decodes(browser):
    config, _ = toy_site()
    index = (config.out_dir / "index.html").resolve()
    browser.get(index.as_uri())
    links = browser.execute_script("return Array.from(document.links).map(a => a.href)")
    assert links, "the index links to its pages and evidence"
    images_seen = 0
    for href in sorted(set(links)):
        url = urlparse(href)
        assert url.scheme == "file", f"link leaves the site: {href}"
        target = Path(unquote(url.path))
        assert target.is_file(), f"broken link {href}"
        browser.get(href)
        assert not browser.current_url.startswith("chrome-error"), href
        assert _severe(browser, local_only=True) == [], href
        count, decoded = _images_decoded(browser)
        assert decoded, f"an image on {href} does not decode"
        images_seen += count
    assert images_seen >= 1  # the study page's figure
