"""Derive bourdon/query/common_words.txt, the common English words recognition ships with.

A word is common when ``wordfreq.zipf_frequency(word, "en") >= 3.0`` (at least once per
million words), the rule turn-start recognition follows (docs/federation.md). The list is
every such word of ``wordfreq.iter_wordlist("en")``, lower-cased, letters and digits only
(``str.isalnum``), one per line, sorted, after one header line saying how it was made. wordfreq
is a dev dependency (pinned in pyproject.toml), never a runtime one: it is 56 MB.

    python scripts/common_words.py            # rewrite the shipped file
    python scripts/common_words.py --check    # exit 1 when the shipped file differs
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version
from pathlib import Path

import wordfreq

THRESHOLD = 3.0
TARGET = Path(__file__).resolve().parent.parent / "bourdon" / "query" / "common_words.txt"


def header() -> str:
    return (
        f"# wordfreq {version('wordfreq')}: every word of iter_wordlist('en') with "
        f"zipf_frequency(word, 'en') >= {THRESHOLD}, lower-cased, isalnum() only, sorted; "
        "made by scripts/common_words.py"
    )


def derive() -> list[str]:
    """The common words, sorted. Every word of the list is measured: the zipf of a word with
    digits is not its band's, so the bands' order cannot be trusted to stop early."""
    words = {
        word.lower()
        for word in wordfreq.iter_wordlist("en")
        if word.isalnum() and wordfreq.zipf_frequency(word, "en") >= THRESHOLD
    }
    return sorted(words)


def render() -> str:
    return "\n".join([header(), *derive()]) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        same = TARGET.exists() and TARGET.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{TARGET.name} differs from wordfreq's list")
        return 0 if same else 1
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {len(text.splitlines()) - 1} words to {TARGET.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
