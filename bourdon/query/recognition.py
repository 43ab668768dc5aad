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

Size: over 400 lines because the name tables, their merge, the lazy prompt reader and the
rules read the same token shapes on the turn-start hot path; split, each would export its
internals to the others.
"""

from __future__ import annotations

import bisect
import itertools
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
_TOKEN_SPLIT = re.compile(r"([^\W_]+)", re.UNICODE)
_ASCII_SEPARATORS: Final = {c: " " for c in range(128) if not chr(c).isalnum()}
_SPACE = re.compile(r"\s")
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
    """How one prompt token was written, worked out only for tokens that start a match."""

    text: str  # folded
    cap: bool  # written with a capital first letter
    code: bool  # inside a code span or block, a path, an identifier, a package or a URL
    start: bool  # the first word of the prompt, a line, a list item or a sentence
    word: tuple[int, int]  # the whitespace-separated word it is part of: (line, offset)
    near: bool  # may be a typo (not a URL's scheme, not a package's dist-tag)


Correction = tuple[str, str] | None  # (vocabulary token, "" | "plural" | "typo")


class Recognizer:
    """The merged n-gram dictionary and typo indexes of every known name and alias."""

    def __init__(self, tables: Sequence[NameTable], previous: Recognizer | None = None) -> None:
        """``tables``: one ``NameTable`` per agent (and level). ``previous``: the recognizer
        these tables replace; the corrections it learnt that no changed word can affect are
        kept, so the first prompt after a change costs what a warm one does."""
        self.tables: tuple[NameTable, ...] = tuple(tables)
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
        scanned = _Prompt(prompt)
        texts = scanned.texts
        # The corrections learnt so far first: a small dict, where most words of a prompt are.
        known = self._corrections
        fixed = [known[t] if t in known else self._correct(t) for t in texts]
        candidates: list[tuple[int, int, list[Mention]]] = []
        for i, head in enumerate(fixed):
            if head is None:
                continue
            sizes = self.lengths.get(head[0])
            if sizes is None:
                continue
            for size in sizes:
                if i + size > len(texts):
                    continue
                window = fixed[i : i + size]
                if None in window:
                    continue
                phrase = tuple(w[0] for w in window if w is not None)
                owners = self.phrases.get(phrase)
                if not owners:
                    continue
                written = [scanned.token(k) for k in range(i, i + size)]
                how = [w[1] for w in window if w is not None]
                if any(h == "typo" and not t.near for h, t in zip(how, written, strict=True)):
                    continue  # a URL's scheme or a package's dist-tag: never a near miss
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
        how: list[str],
        scanned: _Prompt,
    ) -> list[Mention]:
        """The mentions of this phrase, as written, that are enough to name an entity."""
        size = len(written)
        near = any(how)
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

    def _correct(self, text: str) -> Correction:
        """The vocabulary token a prompt token stands for, and how it was corrected (learnt
        once per token: the answer depends only on the vocabulary)."""
        found: Correction = (text, "") if text in self.vocab else self._corrections_of(text)
        if len(self._corrections) < CACHE_LIMIT:
            self._corrections[text] = found
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
    return scanned.bare_word(word).casefold() == owner.ident


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


class _Prompt:
    """A prompt cut into folded tokens; how each was written is read only when asked.

    Most of a prompt's words start no match, so cutting it is one regex pass per line, and
    the case, sentence start and code form of a token are worked out from the line (and
    cached) only for the tokens of a candidate match."""

    def __init__(self, prompt: str) -> None:
        self.texts: list[str] = []
        self.lines: list[tuple[str, bool]] = []  # each line with tokens, and whether in a fence
        self.first: list[int] = []  # the index of each line's first token
        self._starts: dict[int, list[int]] = {}  # line -> its tokens' offsets, when asked
        self._tokens: dict[int, _Token] = {}
        in_fence = False
        texts = self.texts
        for line in _nfc(prompt).splitlines():
            if line.lstrip().startswith("```"):
                in_fence = not in_fence
                continue
            if "'" in line or "\u2019" in line:
                line = _POSSESSIVE.sub("", line)  # "Dana's" is Dana
            if line.isascii():  # the same tokens as _TOKEN finds, at a third of the cost
                found = line.lower().translate(_ASCII_SEPARATORS).split()
            else:
                found = [t.casefold() for t in _TOKEN.findall(line)]
            if found:
                self.lines.append((line, in_fence))
                self.first.append(len(texts))
                texts.extend(found)

    def token(self, k: int) -> _Token:
        found = self._tokens.get(k)
        if found is None:
            found = self._tokens[k] = self._read(k)
        return found

    def bare_word(self, word: tuple[int, int]) -> str:
        """A word without the prose punctuation around it: "(harbor-gateway)," -> its name."""
        line = self.lines[word[0]][0]
        end = _SPACE.search(line, word[1])
        return line[word[1] : end.start() if end else len(line)].strip(_EDGES)

    def _read(self, k: int) -> _Token:
        number = bisect.bisect_right(self.first, k) - 1
        line, in_fence = self.lines[number]
        starts = self._starts.get(number)
        if starts is None:
            # Separators and tokens alternate in the split: the sums of their lengths are
            # where each token starts (no Python loop over a long line's tokens).
            lengths = itertools.accumulate(map(len, _TOKEN_SPLIT.split(line)))
            starts = self._starts[number] = list(lengths)[0::2]
        start = starts[k - self.first[number]]
        end = _TOKEN.match(line, start).end()  # type: ignore[union-attr]
        begin = start
        while begin > 0 and not line[begin - 1].isspace():
            begin -= 1
        bare = self.bare_word((number, begin))
        text = line[start:end]
        ticked = in_fence or line.count("`", 0, start) % 2 == 1
        code = ticked or bool(_CODE.search(bare))
        fixed = {m.group(1) for m in (_SCHEME.match(bare), _DIST_TAG.search(bare)) if m}
        first = _TOKEN.search(line, begin)
        opens = first is not None and first.start() == start and _opens_sentence(line[:begin])
        return _Token(
            self.texts[k], text[0].isupper(), code, opens, (number, begin), text not in fixed
        )


def _opens_sentence(before: str) -> bool:
    """Does a word after ``before`` (the line so far) start a sentence: nothing but
    punctuation before it on the line (a list item), or a word ending a sentence?"""
    rest = before.rstrip()
    while rest:
        last = rest.rsplit(None, 1)[-1]
        if last.rstrip(_CLOSERS).endswith(_SENTENCE_END):
            return True
        if _TOKEN.search(last):
            return False
        rest = rest[: -len(last)].rstrip()
    return True
