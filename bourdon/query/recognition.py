"""Turn-start recognition: which known entities a prompt mentions (pure, in memory, no I/O).

Runs at the start of every agent turn, so its cost must not grow with the library:

1. ``NameTable.build`` cuts one agent's names and aliases (at one access level) into word
   tokens, once: ``phrases`` maps a token tuple to the entities it names, ``lengths`` the
   first token to the phrase lengths that start with it, plus a typo index of its words.
2. ``Recognizer(tables)`` merges the tables' dictionaries (dict merges, no tokenising) and
   works out what needs every table at once: first names that two people share.
3. The prompt is cut into tokens the same way, each remembering how it was written (its
   case, the first word of a sentence or not) and whether it came from code (a `code span`,
   a fenced block, a path, a dotted or underscored identifier, a package, a URL).
4. Each token, corrected if unknown (a plural ``-s``/``-es`` dropped, or one typo fixed in a
   token of six letters or more that is no common English word), that starts a phrase tries
   the longest phrases first; where matches overlap, the longest wins.

The English of it (docs/federation.md, "How a mention is found"): a name made only of common
English words (``bourdon.query.english``) counts only as a proper noun, capitalised and not
the first word of a sentence, or written as code; aliases of one or two characters, common
one-word aliases and first names shared by two people never count on their own.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple, TypeVar

from bourdon.query.english import is_common
from bourdon.query.fuzzy import NearIndex

MAX_PHRASE: Final = 6  # tokens; longer names are matched on their first six
MIN_TYPO: Final = 6  # only prompt tokens this long get a typo corrected
TYPO_EDITS: Final = 1  # edits a typo correction may undo (bourdon.query.fuzzy counts them)
MIN_ALIAS: Final = 3  # characters an alias needs to count on its own
SHARED_BY: Final = 2  # people sharing a first name: it names none of them alone
CACHE_LIMIT: Final = 100_000  # corrections remembered per recognizer

K = TypeVar("K")
V = TypeVar("V")

_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_WORD = re.compile(r"\S+")
_SPAN = re.compile(r"(`[^`]*`)")
# Punctuation around a word that is prose, not part of it: "(kettle)", "**kettle**", "kettle,".
_EDGES = "\"'`*_()[]{}<>,;:.!?\u2018\u2019\u201c\u201d\u00ab\u00bb"
# Inside a word: a path, a dotted or underscored identifier, a package, a URL, a call.
_CODE = re.compile(r"[/\\._@=]|::|[^\W_]:[^\W_]|\(\)")
_POSSESSIVE = re.compile("(?<=[^\\W_])['\u2019]s(?![^\\W_])")
_SCHEME = re.compile(r"^([^\W_]+)(?=:/|@)")  # https://..., git@host: never a near miss
_DIST_TAG = re.compile(r"(?<=[^\W_])@([^\W_]+)$")  # react@latest: the tag never a near miss
_SENTENCE_END = (".", "!", "?", ":")
_CLOSERS = "\"'`*)]}\u2019\u201d\u00bb"


class Mention(NamedTuple):
    """One place in the prompt that names a known entity."""

    key: Hashable  # what the caller indexed: an entity id
    phrase: str  # the folded name or alias that matched
    kind: str  # exact (a name), alias, fuzzy (after a typo or plural fix)
    start: int  # token position in the prompt
    length: int  # tokens


class _Owner(NamedTuple):
    """One name or alias of one row, and what the rules need to know of it."""

    key: Hashable
    is_alias: bool
    common: bool  # every word of it is a common English word: a proper noun or code only
    alone: bool  # False for an alias too short or too common to count on its own
    ident: str | None  # written as one hyphenated word ("harbor-gateway"), folded


@dataclass(frozen=True)
class NameTable:
    """One agent's names at one access level, tokenised once."""

    phrases: dict[tuple[str, ...], tuple[_Owner, ...]]
    lengths: dict[str, tuple[int, ...]]  # longest first
    vocab: frozenset[str]
    near: NearIndex
    # A one-word alias that is the first word of a person's name -> those persons (folded).
    # Names of unknown type count as persons here: a first name is the likely reading.
    first_names: dict[str, frozenset[str]]

    @classmethod
    def build(cls, names: Iterable[tuple[Hashable, str, bool, str, str]]) -> NameTable:
        """``names``: (row key, name or alias as written, True when it is an alias, the
        entity's name, the entity's type). Rows of several agents that know the same entity
        share its name."""
        phrases: dict[tuple[str, ...], list[_Owner]] = defaultdict(list)
        lengths: dict[str, set[int]] = defaultdict(set)
        first_names: dict[str, set[str]] = defaultdict(set)
        for key, written, is_alias, entity, kind in names:
            text = _nfc(written)
            tokens = tuple(t.casefold() for t in _TOKEN.findall(text))[:MAX_PHRASE]
            if not tokens:
                continue
            common = all(is_common(t) for t in tokens)
            alone = len(tokens) > 1 or not is_alias or (len(tokens[0]) >= MIN_ALIAS and not common)
            ident = text.casefold() if "-" in text and " " not in text else None
            phrases[tokens].append(_Owner(key, is_alias, common, alone, ident))
            lengths[tokens[0]].add(len(tokens))
            if is_alias and len(tokens) == 1 and kind in ("person", "", None):
                whole = tuple(t.casefold() for t in _TOKEN.findall(_nfc(entity)))
                if len(whole) > 1 and whole[0] == tokens[0]:
                    first_names[tokens[0]].add(" ".join(whole))
        vocab = frozenset(t for phrase in phrases for t in phrase)
        return cls(
            phrases={p: tuple(o) for p, o in phrases.items()},
            lengths={t: tuple(sorted(s, reverse=True)) for t, s in lengths.items()},
            vocab=vocab,
            near=NearIndex(vocab, budget=TYPO_EDITS, min_length=MIN_TYPO - TYPO_EDITS),
            first_names={t: frozenset(s) for t, s in first_names.items()},
        )


class _Token(NamedTuple):
    text: str  # folded
    cap: bool  # written with a capital first letter
    code: bool  # inside a code span or block, a path, an identifier, a package or a URL
    start: bool  # the first word of the prompt, a line, a list item or a sentence
    word: int  # which whitespace-separated word of the prompt it comes from
    near: bool = True  # may be a typo (not a URL's scheme, not a package's dist-tag)


class _Prompt(NamedTuple):
    tokens: list[_Token]
    words: list[str]  # the prompt's whitespace-separated words, as written


Correction = tuple[str, str] | None  # (vocabulary token, "" | "plural" | "typo")


class Recognizer:
    """The merged n-gram dictionary and typo indexes of every known name and alias."""

    def __init__(
        self,
        tables: Sequence[NameTable] | Iterable[tuple[Hashable, str, bool, str]],
        previous: Recognizer | None = None,
    ) -> None:
        """``tables``: one ``NameTable`` per agent (and level). ``previous``: the recognizer
        these tables replace; the corrections it learnt that no changed word can affect are
        kept, so the first prompt after a change costs what a warm one does.

        For callers not yet building tables: an iterable of (key, written, is_alias, entity)
        rows is one table, of entities of unknown type."""
        given = list(tables)
        if given and not isinstance(given[0], NameTable):
            given = [NameTable.build((*row, "") for row in given)]  # type: ignore[misc]
        self.tables: tuple[NameTable, ...] = tuple(given)  # type: ignore[arg-type]
        self.phrases = _merge([t.phrases for t in self.tables], _join_owners)
        self.lengths = _merge([t.lengths for t in self.tables], _join_lengths)
        self.vocab: frozenset[str] = frozenset().union(*(t.vocab for t in self.tables))
        people = _merge([t.first_names for t in self.tables], frozenset.union)
        self.shared_first_names = frozenset(
            name for name, owners in people.items() if len(owners) >= SHARED_BY
        )
        self._near = (
            NearIndex.merged([t.near for t in self.tables])
            if self.tables
            else NearIndex((), budget=TYPO_EDITS, min_length=MIN_TYPO - TYPO_EDITS)
        )
        self._corrections: dict[str, Correction] = {}
        if previous is not None:
            self._corrections = _carry(previous, self.vocab)

    @classmethod
    def of(cls, names: Iterable[tuple[Hashable, str, bool, str, str]]) -> Recognizer:
        """A recognizer of one table: ``Recognizer([NameTable.build(names)])``."""
        return cls([NameTable.build(names)])

    def mentions(self, prompt: str) -> list[Mention]:
        """Every mention of a known name or alias in ``prompt``, left to right."""
        scanned = _tokenize(prompt)
        tokens = scanned.tokens
        fixed = [self._correct(t) for t in tokens]
        candidates: list[tuple[int, int, list[Mention]]] = []
        for i, head in enumerate(fixed):
            if head is None:
                continue
            sizes = self.lengths.get(head[0])
            if sizes is None:
                continue
            for size in sizes:
                if i + size > len(tokens):
                    continue
                window = fixed[i : i + size]
                if None in window:
                    continue
                phrase = tuple(w[0] for w in window if w is not None)
                owners = self.phrases.get(phrase)
                if not owners:
                    continue
                how = {w[1] for w in window if w is not None}
                written = tokens[i : i + size]
                found = self._standing(i, phrase, owners, written, how, scanned)
                if found:
                    candidates.append((i, size, found))
                    break  # at one start, only the longest can win
        return _longest_first(candidates)

    def _standing(
        self,
        start: int,
        phrase: tuple[str, ...],
        owners: tuple[_Owner, ...],
        written: Sequence[_Token],
        how: set[str],
        scanned: _Prompt,
    ) -> list[Mention]:
        """The mentions of this phrase, as written, that are enough to name an entity."""
        size = len(written)
        near = how != {""}
        text = " ".join(phrase)
        proper = any(t.cap and not t.start for t in written)
        exact_code: bool | None = None
        seen: dict[Hashable, Mention] = {}
        for owner in owners:
            if not owner.alone:
                continue
            if size == 1 and owner.is_alias and phrase[0] in self.shared_first_names:
                continue
            if owner.common and not proper:
                if near:
                    continue
                if exact_code is None:
                    exact_code = all(t.code for t in written)
                if not exact_code and not _as_identifier(owner, written, scanned):
                    continue
            kind = "fuzzy" if near else ("alias" if owner.is_alias else "exact")
            best = seen.get(owner.key)
            if best is None or (best.kind == "alias" and kind == "exact"):
                seen[owner.key] = Mention(owner.key, text, kind, start, size)
        return list(seen.values())

    def _correct(self, token: _Token) -> Correction:
        """The vocabulary token a prompt token stands for, and how it was corrected."""
        text = token.text
        if text in self.vocab:
            return text, ""
        try:
            found = self._corrections[text]
        except KeyError:
            found = self._corrections_of(text)
            if len(self._corrections) < CACHE_LIMIT:
                self._corrections[text] = found
        if found is not None and found[1] == "typo" and not token.near:
            return None
        return found

    def _corrections_of(self, text: str) -> Correction:
        for stem in (
            text[:-2] if text.endswith("es") else None,
            text[:-1] if text.endswith("s") else None,
        ):
            if stem and len(stem) >= 3 and stem in self.vocab:
                return stem, "plural"
        if len(text) < MIN_TYPO or is_common(text):
            return None
        # One edit, a swap of neighbours included ("borudon" for "bourdon"); when several
        # words are that close, the first in alphabetical order, so the answer never varies.
        close = self._near.near(text)
        return (min(word for word, _ in close), "typo") if close else None


def _as_identifier(owner: _Owner, written: Sequence[_Token], scanned: _Prompt) -> bool:
    """Written exactly as the name's own hyphenated form: "harbor-gateway" for harbor-gateway
    (a prose hyphenation such as "kettle-shaped" is no name, so it never gets here)."""
    if owner.ident is None:
        return False
    word = written[0].word
    if any(t.word != word for t in written):
        return False
    return _POSSESSIVE.sub("", scanned.words[word].strip(_EDGES)).casefold() == owner.ident


def _longest_first(candidates: list[tuple[int, int, list[Mention]]]) -> list[Mention]:
    """Of overlapping matches the longest (then the first) wins; the rest in prompt order."""
    taken: set[int] = set()
    kept: list[tuple[int, list[Mention]]] = []
    for start, size, found in sorted(candidates, key=lambda c: (-c[1], c[0])):
        span = range(start, start + size)
        if taken.isdisjoint(span):
            taken.update(span)
            kept.append((start, found))
    kept.sort(key=lambda k: k[0])
    return [m for _, found in kept for m in found]


def _join_owners(a: tuple[_Owner, ...], b: tuple[_Owner, ...]) -> tuple[_Owner, ...]:
    return a + b


def _join_lengths(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sorted({*a, *b}, reverse=True))


def _merge(parts: Sequence[dict[K, V]], join: Callable[[V, V], V]) -> dict[K, V]:
    """One dict of several: C-speed updates, with ``join`` only for keys two parts share."""
    merged: dict[K, V] = {}
    for part in parts:
        shared = merged.keys() & part.keys()
        fixes = {k: join(merged[k], part[k]) for k in shared}
        merged.update(part)
        merged.update(fixes)
    return merged


def _carry(previous: Recognizer, vocab: frozenset[str]) -> dict[str, Correction]:
    """The previous recognizer's corrections that the changed words cannot affect: a word
    added or removed changes the correction of itself, its plurals and its one-edit
    neighbours, and nothing else."""
    changed = previous.vocab ^ vocab
    if not changed:
        return dict(previous._corrections)
    near = NearIndex(changed, budget=TYPO_EDITS, min_length=MIN_TYPO - TYPO_EDITS)
    kept: dict[str, Correction] = {}
    for text, found in previous._corrections.items():
        if found is not None and found[0] in changed:
            continue
        stems = (text, text[:-1], text[:-2])
        if any(s in changed for s in stems):
            continue
        if len(text) >= MIN_TYPO and near.near(text):
            continue
        kept[text] = found
    return kept


def _nfc(text: str) -> str:
    return text if text.isascii() else unicodedata.normalize("NFC", text)


def _tokenize(prompt: str) -> _Prompt:
    tokens: list[_Token] = []
    words: list[str] = []
    in_fence = False
    for line in _nfc(prompt).splitlines() or [prompt]:
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            continue
        starts = True  # a line, and so a list item, starts a sentence
        for chunk_index, chunk in enumerate(_SPAN.split(line)):
            ticked = in_fence or chunk_index % 2 == 1
            for match in _WORD.finditer(chunk):
                raw = match.group()
                number = len(words)
                words.append(raw)
                if raw.isalpha():  # most words: one plain token
                    tokens.append(_Token(raw.casefold(), raw[0].isupper(), ticked, starts, number))
                    starts = False
                    continue
                bare = _POSSESSIVE.sub("", raw.strip(_EDGES))
                code = ticked or bool(_CODE.search(bare))
                fixed = {m.group(1) for m in (_SCHEME.match(bare), _DIST_TAG.search(bare)) if m}
                for part in _TOKEN.findall(bare):
                    near = part not in fixed
                    tokens.append(
                        _Token(part.casefold(), part[0].isupper(), code, starts, number, near)
                    )
                    starts = False
                if raw.rstrip(_CLOSERS).endswith(_SENTENCE_END):
                    starts = True
    return _Prompt(tokens, words)
