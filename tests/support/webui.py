"""A real ``bourdon ui`` in a subprocess on 127.0.0.1, and browsers-without-a-browser for it.

``UiServer`` starts one over a library and a home (``with server:`` starts and stops it), and
keeps the one-time operator link it prints. ``operator`` follows that link with a real HTTP client (``httpx2``, cookies kept; use
``contextlib.closing``), and later calls reuse the session it opened;
``member`` logs a member in through the token form, as a person would. ``csrf`` is the form
token of the page a client last loaded. The browser tests drive Chromium against the same
server class.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import httpx2

from bourdon.access.trust import MemberRegistry
from bourdon.serve.web.sessions import COOKIE
from bourdon.testing.serving import child_env, free_port, stop_process, wait_for_port

STARTUP = 90.0  # seconds for the subprocess to listen (the box may be busy)
TIMEOUT = 30.0  # seconds for one request
LINK = re.compile(r"http://\S+/ui/login/[0-9a-f]+")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')


@dataclass
class UiServer:
    """``bourdon ui`` over the library at ``root``; ``user`` is its home (``.bourdon`` in it)."""

    root: Path
    user: Path
    port: int = field(default_factory=free_port)
    args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    link: str = ""
    operator_cookie: str = ""  # the session the link opened: the link works only once

    @property
    def home(self) -> Path:
        return self.user / ".bourdon"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.user / "ui.log"

    def add_member(
        self, name: str, tier: str = "quarantined", grants: list[str] | None = None
    ) -> str:
        """Enrol ``name`` in this server's registry; its token (works while the server runs)."""
        return MemberRegistry(self.home).add(name, tier, grants)

    def start(self, *extra: str) -> None:
        command = [sys.executable, "-m", "bourdon", "--library", str(self.root), "ui"]
        command += ["--port", str(self.port), "--no-watch", "--no-peers", *self.args, *extra]
        with open(self.log, "wb") as err:
            self.proc = subprocess.Popen(
                command,
                env=child_env(self.user),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        printed = threading.Event()
        said: list[str] = []

        def drain(pipe: IO[bytes]) -> None:
            # Every line is read as the child prints it (so its pipe never fills); the first
            # link, or the end of its stdout, wakes start() up.
            for raw in pipe:
                said.append(raw.decode(errors="replace"))
                if LINK.search(said[-1]):
                    printed.set()
            printed.set()

        assert self.proc.stdout is not None
        threading.Thread(target=drain, args=(self.proc.stdout,), daemon=True).start()
        wait_for_port(self.proc, self.port, timeout=STARTUP, log=self.log)
        printed.wait(STARTUP)
        found = LINK.search("".join(said))
        assert found, f"no login link printed: {''.join(said)}"
        self.link = found.group(0)

    def stop(self) -> None:
        if self.proc is not None:
            stop_process(self.proc)
            self.proc = None

    def __enter__(self) -> UiServer:
        """Started (and stopped again if it does not come up); stopped on leaving."""
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def client(self) -> httpx2.Client:
        """A client with no session yet (cookies kept, redirects not followed)."""
        return httpx2.Client(base_url=self.base, timeout=TIMEOUT, follow_redirects=False)

    def operator(self) -> httpx2.Client:
        """A client logged in as the local operator: through the printed one-time link the
        first time, with the session that link opened afterwards."""
        client = self.client()
        if self.operator_cookie:
            client.cookies.set(COOKIE, self.operator_cookie, domain="127.0.0.1", path="/ui")
            return client
        answer = client.get(self.link)
        assert answer.status_code == 303, answer.text
        self.operator_cookie = client.cookies[COOKIE]
        return client

    def member(self, token: str) -> httpx2.Client:
        """A client logged in through the token form, as the member holding ``token``."""
        client = self.client()
        form = client.get("/ui/login")
        answer = client.post("/ui/login", data={"token": token, "csrf": csrf(form.text)})
        assert answer.status_code == 303, answer.text
        return client


def csrf(html: str) -> str:
    """The CSRF token of a page's forms."""
    found = CSRF.search(html)
    assert found, "the page has no form with a CSRF token"
    return found.group(1)
