"""Fixtures of the web view's tests. The browser's (one Chromium per run, a fresh context per
test, screenshots) are defined in tests/web/browser.py; importing them here makes them found."""

from tests.web.browser import browse, chromium, shot  # noqa: F401
