"""Turn-start recognition: which known entities a prompt mentions (pure, in memory, no I/O).

Runs at the start of every agent turn, so its cost must not grow with the library:

1. Every name and alias is cut into word tokens; ``phrases`` maps a token tuple to the
   entities it names, ``lengths`` the first token to the phrase lengths that start with it.
2. The prompt is cut into tokens the same way, remembering for each token whether it came
   from code (a `code span`, a path, a dotted or dashed identifier) and how it was written.
3. Scanning left to right, each token (corrected if unknown: a plural ``-s``/``-es`` is
   dropped, or one typo is fixed through the vocabulary's ``fuzzy.NearIndex``) that starts a
   phrase tries the longest phrases first; the longest match wins.

Words that are not enough on their own: aliases of one or two characters, single common
English words ("at", "if", "me", "summary", ...) unless written in code or in the entity's
own capitalisation, and single tokens shared by several names (a first name such as "Priya"
when three Priyas are known). Typo correction applies to tokens of five characters or more.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from bourdon.query.fuzzy import NearIndex

MAX_PHRASE: Final = 6  # tokens; longer names are matched on their first six
MIN_TYPO: Final = 5  # only tokens this long get a typo corrected
TYPO_EDITS: Final = 1  # edits a typo correction may undo (bourdon.query.fuzzy counts them)
SHARED_BY: Final = 3  # a lone token shared by this many names is ambiguous

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_CODE_CHUNK = re.compile(r"[/\\._:-]")

# Common English words: never an entity on their own unless written as code or in the
# entity's own capitalisation. Short on purpose; the two-character rule covers the rest.
COMMON_WORDS: Final = frozenset(
    """
    about above after again against all also always am an and another any are around as ask
    at away back bad be because been before being below best better between big both bring
    build but by call came can case change check clean click close code come could data day did
    do does doing done down each edit end even every few file find first fix for from full
    get give go going good got great had has have he help her here him his how i if in into
    is it its just keep know last left let like line list little long look made make many
    may me might more most move much must my need never new next no not note now of off old
    on once one only open or other our out over own part plan put read real request requests
    right run same
    say see set she should show side since small so some start still stop such summary sure
    take tell test than thank thanks that the their them then there these they thing think
    this those through time to today too try turn two under up update us use used very want
    was way we well went were what when where which while who why will with word work would
    write yes yet you your
    """.split()
)


class Mention(NamedTuple):
    """One place in the prompt that names a known entity."""

    key: Hashable  # what the caller indexed: an entity id
    phrase: str  # the folded name or alias that matched
    kind: str  # exact (a name), alias, fuzzy (after a typo or plural fix)
    start: int  # token position in the prompt
    length: int  # tokens


@dataclass(frozen=True)
class _Token:
    text: str  # folded
    raw: str  # as written
    code: bool  # inside a code span, a path or a dotted/dashed identifier
    sentence_start: bool = False  # the first word of a line or of a sentence


class NameTable:
    """One agent's names at one access level: (row key, name or alias as written, is it an
    alias, the entity's name, the entity's type)."""

    def __init__(self, names: list[tuple[Hashable, str, bool, str, str]]) -> None:
        self.names = names

    @classmethod
    def build(cls, names: Iterable[tuple[Hashable, str, bool, str, str]]) -> NameTable:
        return cls(list(names))


class Recognizer:
    """The n-gram dictionary and typo index of every known name and alias."""

    def __init__(
        self,
        tables: Iterable[NameTable | tuple[Hashable, str, bool, str]],
        previous: Recognizer | None = None,
    ) -> None:
        """``tables``: the agents' ``NameTable``s (or bare (row key, name or alias as written,
        True when it is an alias, the entity's name) tuples). Rows of several agents that know
        the same entity share its name."""
        names: list[tuple[Hashable, str, bool, str]] = []
        for item in tables:
            if isinstance(item, NameTable):
                names.extend(n[:4] for n in item.names)
            else:
                names.append(item)
        self.phrases: dict[tuple[str, ...], list[tuple[Hashable, bool, str, str]]] = defaultdict(
            list
        )
        self.lengths: dict[str, set[int]] = defaultdict(set)
        self.vocab: set[str] = set()
        lone_owners: dict[str, set[str]] = defaultdict(set)
        for key, written, is_alias, entity in names:
            tokens = tuple(t.casefold() for t in _TOKEN.findall(written))[:MAX_PHRASE]
            if not tokens:
                continue
            self.phrases[tokens].append((key, is_alias, written, entity))
            self.lengths[tokens[0]].add(len(tokens))
            self.vocab.update(tokens)
            if len(tokens) > 1 and not re.search(r"[/\\.]", written):
                lone_owners[tokens[0]].add(entity.casefold())
        # A word that starts the names of several entities (a first name: "Priya" of "Priya
        # Raman" and "Priya Shah") does not name any of them on its own, even as an alias.
        # Paths and file names do not count: "bourdon/merge.py" is about bourdon.
        self.ambiguous = {t for t, owners in lone_owners.items() if len(owners) >= SHARED_BY}
        # A prompt word of MIN_TYPO letters may be a word one letter shorter with one extra.
        self.typos = NearIndex(self.vocab, budget=TYPO_EDITS, min_length=MIN_TYPO - TYPO_EDITS)
        self._corrections: dict[str, tuple[str, bool] | None] = {}

    def mentions(self, prompt: str) -> list[Mention]:
        """Every mention of a known name or alias in ``prompt``, left to right."""
        tokens = _tokenize(prompt)
        fixed = [self._correct(t.text) for t in tokens]
        found: list[Mention] = []
        i = 0
        while i < len(tokens):
            head = fixed[i]
            if head is None or head[0] not in self.lengths:
                i += 1
                continue
            for size in sorted(self.lengths[head[0]], reverse=True):
                if i + size > len(tokens):
                    continue
                window = fixed[i : i + size]
                if any(w is None for w in window):
                    continue
                phrase = tuple(w[0] for w in window if w is not None)
                owners = self.phrases.get(phrase)
                if not owners:
                    continue
                near = any(w is not None and w[1] for w in window)
                kept = [o for o in owners if self._stands(phrase, o, tokens[i : i + size], near)]
                if not kept:
                    continue
                for key, is_alias, _, _ in kept:
                    kind = "fuzzy" if near else ("alias" if is_alias else "exact")
                    found.append(Mention(key, " ".join(phrase), kind, i, size))
                i += size - 1
                break
            i += 1
        return found

    def _stands(
        self,
        phrase: tuple[str, ...],
        owner: tuple[Hashable, bool, str, str],
        written: Sequence[_Token],
        near: bool,
    ) -> bool:
        """Is this phrase, as written in the prompt, enough to name the entity on its own?"""
        if len(phrase) > 1:
            return True
        token = phrase[0]
        if len(token) <= 2:
            return False
        if token in self.ambiguous:
            return False
        if token in COMMON_WORDS:
            as_written = owner[2]
            cased = as_written != as_written.lower() and written[0].raw == as_written
            return not near and (written[0].code or cased)
        entity = tuple(t.casefold() for t in _TOKEN.findall(owner[3]))
        if owner[1] and len(entity) > 1 and token in entity:
            # A part of the entity's own name ("atlas" of "Atlas Pipeline", "Marco" of "Marco
            # Bianchi") names it only when written as a name: capitalised mid-sentence, or code.
            first = written[0]
            return first.code or (first.raw[:1].isupper() and not first.sentence_start)
        return True

    def _correct(self, token: str) -> tuple[str, bool] | None:
        """The vocabulary token this prompt token stands for, and whether it was corrected."""
        if token in self.vocab:
            return token, False
        if token in self._corrections:
            return self._corrections[token]
        found: tuple[str, bool] | None = None
        for stem in (
            token[:-2] if token.endswith("es") else None,
            token[:-1] if token.endswith("s") else None,
        ):
            if stem and stem in self.vocab and len(stem) >= 3:
                found = (stem, True)
                break
        if found is None and len(token) >= MIN_TYPO:
            # One edit, a swap of neighbours included ("borudon" for "bourdon"); when several
            # words are that close, the first in alphabetical order, so the answer never varies.
            close = self.typos.near(token)
            if close:
                found = (min(word for word, _ in close), True)
        if len(self._corrections) < 100_000:
            self._corrections[token] = found
        return found


def _tokenize(prompt: str) -> list[_Token]:
    tokens: list[_Token] = []
    in_fence = False
    for line in prompt.splitlines() or [prompt]:
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        starts = True
        for chunk_index, chunk in enumerate(re.split(r"(`[^`]*`)", line)):
            ticked = chunk_index % 2 == 1
            for word in chunk.split():
                code = in_fence or ticked or bool(_CODE_CHUNK.search(word.strip(".,;:!?()\"'")))
                for raw in _TOKEN.findall(word):
                    tokens.append(_Token(raw.casefold(), raw, code, starts))
                    starts = False
                starts = word.endswith((".", "!", "?", ":"))
    return tokens
