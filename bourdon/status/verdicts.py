"""What a problem doctor finds looks like: its code, severity, subject, message and fix."""

from __future__ import annotations

from typing import Final

ERROR: Final = "error"
WARNING: Final = "warning"

Problem = dict[str, str]


def problem(code: str, severity: str, subject: str, message: str, fix: str) -> Problem:
    return {"code": code, "severity": severity, "subject": subject, "message": message, "fix": fix}


def bourdon_command(lib: str, command: str) -> str:
    return f"bourdon --library {lib} {command}"
