"""Real headless Chromium for the web view's tests: one browser per module, a fresh context each.

The browser is the system's chromium (``$BOURDON_CHROMIUM``, else ``chromium`` or
``chromium-browser`` on PATH), driven by playwright, which downloads nothing; ``.ci/run``
installs it with apt. Without one the browser tests skip and say why. tests/web/conftest.py
imports the fixtures, so every test under tests/web/ may ask for them.

``browse`` opens a page in a new context (a ``base_url``, a logged-in ``storage_state``);
``shot`` saves a full page at a phone's and a desktop's width into the test's temp folder, and
also into ``$BOURDON_UI_SCREENSHOTS`` when set (how the README's image is made);
``assert_fits_phone`` fails when a page scrolls sideways at 375 px; ``accessibility_problems``
lists what breaks the page rules that markup alone can show (headings, labels, table headers).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

CHROMIUM_ENV: Final = "BOURDON_CHROMIUM"
SHOTS_ENV: Final = "BOURDON_UI_SCREENSHOTS"
PHONE: Final = 375
DESKTOP: Final = 1440
HEIGHT: Final = 900
TIMEOUT_MS: Final = 30_000  # one action or navigation (the box may be busy)

# The elements (outside a `.scroll` wrapper) that stick out past the viewport's right edge.
_WIDE = """() => {
  const edge = document.documentElement.clientWidth;
  return [...document.querySelectorAll("body *")]
    .filter((e) => !e.closest(".scroll") && e.getBoundingClientRect().right > edge + 0.5)
    .slice(0, 5)
    .map((e) => e.tagName.toLowerCase() + (e.getAttribute("class") ? "." + e.getAttribute("class") : ""));
}"""


_RULES = """() => {
  const problems = [];
  const text = (e) => e.textContent.trim().slice(0, 40);
  const h1s = document.querySelectorAll("h1").length;
  if (h1s !== 1) problems.push(`${h1s} h1 headings`);
  let last = 0;
  for (const h of document.querySelectorAll("h1, h2, h3, h4, h5, h6")) {
    const level = Number(h.tagName[1]);
    if (level > last + 1) problems.push(`${h.tagName} "${text(h)}" follows h${last}`);
    last = level;
  }
  for (const c of document.querySelectorAll("input, select, textarea")) {
    if (["hidden", "submit", "button", "reset"].includes(c.type)) continue;
    if (!c.labels.length && !c.getAttribute("aria-label") && !c.getAttribute("aria-labelledby"))
      problems.push(`${c.tagName.toLowerCase()} "${c.name}" has no label`);
  }
  for (const th of document.querySelectorAll("th"))
    if (!th.getAttribute("scope")) problems.push(`th "${text(th)}" has no scope`);
  for (const e of document.querySelectorAll("a[href], button"))
    if (!text(e) && !e.getAttribute("aria-label")) problems.push(`${e.tagName} without a name`);
  return problems;
}"""


def chromium_path() -> str | None:
    """The chromium to drive: ``$BOURDON_CHROMIUM``, else the first on PATH."""
    return (
        os.environ.get(CHROMIUM_ENV) or shutil.which("chromium") or shutil.which("chromium-browser")
    )


@pytest.fixture(scope="module")
def chromium() -> Iterator[Browser]:
    """One headless Chromium per test module. Not per run: while playwright's sync API is
    started, its event loop counts as running in the main thread, and every async test that
    came after the browser tests would fail ("another loop is running")."""
    path = chromium_path()
    if path is None:
        pytest.skip(
            "browser tests need a chromium executable: install Debian's chromium "
            f"(.ci/run does) or point ${CHROMIUM_ENV} at one"
        )
    with sync_playwright() as driver:
        # Without a sandbox: CI and these machines run the tests as root, where Chromium's
        # sandbox refuses to start. The pages it opens are this project's own, on loopback.
        browser = driver.chromium.launch(
            executable_path=path, args=["--no-sandbox"], timeout=TIMEOUT_MS
        )
        yield browser
        browser.close()


@pytest.fixture
def browse(chromium: Browser) -> Iterator[Callable[..., Page]]:
    """``browse(**options)``: a page in a fresh context (``new_context`` options, such as
    ``base_url`` or a logged-in ``storage_state``), closed after the test."""
    contexts: list[BrowserContext] = []

    def open_page(**options: Any) -> Page:
        context = chromium.new_context(viewport={"width": DESKTOP, "height": HEIGHT}, **options)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


def at_width(page: Page, width: int) -> None:
    page.set_viewport_size({"width": width, "height": HEIGHT})


def accessibility_problems(page: Page) -> list[str]:
    """What breaks the web view's page rules: one h1, headings in order, a label for every
    form control, ``scope`` on every table header, a name for every link and button."""
    problems: list[str] = page.evaluate(_RULES)
    return problems


def assert_fits_phone(page: Page) -> None:
    """At 375 px the page itself never scrolls sideways (wide tables scroll in `.scroll`)."""
    at_width(page, PHONE)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, (
        f"{page.url} is {overflow} px wider than a 375 px phone; sticking out: "
        f"{page.evaluate(_WIDE)}"
    )


@pytest.fixture
def shot(tmp_path: Path) -> Callable[[Page, str], list[Path]]:
    """``shot(page, name)``: ``<name>-375.png`` and ``<name>-1440.png``, full page."""
    extra = os.environ.get(SHOTS_ENV)

    def save(page: Page, name: str) -> list[Path]:
        before = page.viewport_size
        saved = []
        for width in (PHONE, DESKTOP):
            at_width(page, width)
            path = tmp_path / f"{name}-{width}.png"
            page.screenshot(path=path, full_page=True)
            saved.append(path)
            if extra:
                Path(extra).mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, Path(extra) / path.name)
        if before is not None:
            page.set_viewport_size(before)
        return saved

    return save
