"""A search query understood: the concepts it names, with their synonyms, and what it wants to do."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from catalog._search_text import STOPWORDS, stem, words
from catalog._search_vocabulary import (
    ALWAYS_VERBS,
    INTENTS,
    LEADING,
    QUESTION_WORDS,
    VERBS,
    Intent,
    expand,
    implied,
)

__all__ = ["Concept", "Query", "parse_query"]

#: Weight of a synonym against the word the query says.
SYNONYM_WEIGHT: Final = 0.7
#: Weight of a concept after a preposition ("in a project", "of a repository"): context, not the object.
CONTEXT_WEIGHT: Final = 0.7
#: Weight of a concept the query only implies (`who` → user, leading `text` → message).
IMPLIED_WEIGHT: Final = 0.8

_PREPOSITIONS: Final = frozenset(
    "in of for to on at from into onto by with within inside under about across between per via".split()
)
#: Phrases that mean "the caller".
_SELF: Final = re.compile(
    r"\b(who\s+am\s+i|whoami|who\s+i\s+am|about\s+me|my\s+(own\s+)?(profile|account|user|identity|details|info)|"
    r"(current(ly)?\s+|the\s+)?(logged|signed)[\s-]+in\s+user|current\s+user|(the\s+)?authenticated\s+user|"
    r"the\s+caller|myself|i\s+(am|belong|own|have|joined|follow|starred|watch|created)|i'm|do\s+i\s+belong)\b"
)
#: Words that start a clause about when something happens: what follows describes, it does not ask.
_CLAUSES: Final = frozenset({"when", "whenever", "once", "after", "before", "while", "until", "if"})
#: A query that starts with one of these asks about something: it reads, whatever verbs follow.
_ASKING: Final = frozenset({"who", "what", "which", "whose", "whats"})
#: Words before "to <verb>" that make the verb the query's own ("how to create", "want to delete").
_WANTING: Final = frozenset({"how", "want", "wants", "need", "needs", "like", "trying", "going", "able", "way", "try"})
#: States something can be made or set to: "make a repository private" updates it.
_STATES: Final = frozenset(
    "private public internal visible hidden invisible default primary active inactive available unavailable "
    "readonly archived unarchived locked unlocked required optional enabled disabled paid unpaid".split()
)
#: Words that qualify a thing more than they name it ("sub-account" is an account).
_MODIFIERS: Final = frozenset(
    stem(word)
    for word in (
        "sub", "open", "closed", "active", "inactive", "pending", "archived", "draft", "resolved", "unresolved",
        "recent", "latest", "unread",
    )
)  # fmt: skip
#: "can this person write to…", "am I allowed to…": a question about permissions.
_MAY: Final = re.compile(r"\b(can|may)\s+(i|we|this|that|the|a|he|she|they|user|person|someone|somebody)\b|\ballowed\b")
#: "stop following", "stop watching": the activity undone.
_STOP_DOING: Final = re.compile(r"\b(?:stop|quit)\s+(follow|watch|star|subscrib|listen|receiv|track)(?:e?ing)\b")
#: "notify me when…", "tell my server whenever…": a subscription to events, which APIs call webhooks.
_NOTIFY_WHEN: Final = re.compile(r"\b(notif\w*|alert|tell|inform|ping|let\s+\w+\s+know|callbacks?)\b.*\bwhen(ever)?\b")

#: "show me", "give me": the "me" is the one asking, not the object.
_FILLER_ME: Final = re.compile(
    r"\b(show|give|tell|find|get|send|fetch|list|let|help|notify|alert|remind|email|ping|message|text|call)\s+me\b"
)
#: Nouns that only ask for details of the object ("repository details"): they say "read".
_DETAIL_WORDS: Final = frozenset({"detail", "details", "info", "information"})
#: Past forms the stemmer does not see as such.
_IRREGULAR_PAST: Final = frozenset({"sent", "made", "bought", "wrote", "written", "done", "got", "gotten", "paid"})
#: Weight of a verb that says an intent ("create", "list") as a word.
VERB_WEIGHT: Final = 0.6
#: Weight of a word in a past or -ing form ("files changed", "who is watching"): it describes, it does not ask.
INFLECTED_WEIGHT: Final = 0.5


@dataclass(frozen=True)
class Concept:
    """One thing a query names: the stems that say it (weight 1) and their synonyms (lower), and its importance."""

    variants: dict[str, float]
    weight: float


@dataclass(frozen=True)
class Query:
    """What a query names and wants to do."""

    concepts: tuple[Concept, ...]
    #: The intents its verbs signal (list, read, create, update, delete, write); empty when it says none.
    intents: frozenset[Intent]
    #: Stems of the verbs it says.
    verbs: frozenset[str]
    #: The leading verb that said the intent ("log a bug"), matched only where a function name starts with it.
    leading: frozenset[str] = frozenset()
    #: The verbs that say what the query wants, outside clauses: a function name that starts with one fits.
    main_verbs: frozenset[str] = frozenset()
    #: States the query sets something to ("private" in "make a repository private").
    settings: frozenset[str] = frozenset()
    #: Every stem and synonym it matches, with the best weight.
    variants: dict[str, float] = field(default_factory=dict)

    @cached_property
    def focus(self) -> frozenset[str]:
        """The stems of what the query is about, said outright: not context, not implied, not verbs."""
        return (
            frozenset(
                word
                for concept in self.concepts
                if concept.weight >= 1.0
                for word, weight in concept.variants.items()
                if weight >= 1.0 and word not in self.verbs
            )
            | self.settings
        )

    @cached_property
    def stems(self) -> frozenset[str]:
        """The stems the query says (or implies), without synonyms."""
        found = {word for concept in self.concepts for word, weight in concept.variants.items() if weight >= 1}
        return frozenset(found | self.leading)


def parse_query(text: str) -> Query:
    """Understand a free-text query: its concepts (synonymous verbs merged into one), intents and verbs.

    Reads the words in order: prepositions and clauses ("when…", "to create…") make what follows context;
    a leading verb ("log a bug", "dial a number") gives an intent and maybe an object; intent verbs in their
    base form give intents; past, -ing and -s forms describe rather than ask; questions read.
    """
    lowered = _FILLER_ME.sub(r"\1", text.lower())
    notify = _NOTIFY_WHEN.search(lowered) is not None
    lowered = _SELF.sub(" me user ", lowered)
    lowered, stopped = _stop_doing(lowered)
    said: list[tuple[str, float]] = [("webhook", IMPLIED_WEIGHT)] if notify else []
    may = _MAY.search(lowered) is not None
    if may:
        said.append(("permission", IMPLIED_WEIGHT))
    intents: set[Intent] = {"delete"} if stopped else set()
    context = clause = plural = started = False
    # A leading verb ("log a bug") says an intent and maybe an object; as a word it would match its noun sense
    # (logs, audit logs), so it only counts where a function name starts with it.
    leading_verbs: set[str] = set()
    main: set[str] = set()
    settings: set[str] = set()
    split = words(lowered)
    # "who…", "which…", "can this user…": asking about something reads it, whatever verbs follow.
    asks = may or (bool(split) and split[0] in _ASKING)
    question = asks or any(word in QUESTION_WORDS for word in split)
    for position, word in enumerate(split):
        previous = split[position - 1] if position else ""
        following = split[position + 1] if position + 1 < len(split) else ""
        said.extend((extra, IMPLIED_WEIGHT) for extra in implied(word))
        if word in _CLAUSES or (word == "to" and previous not in _WANTING and _verb_like(following)):
            # "when a file changes", "fields required to create an issue": what follows describes, it does not ask.
            clause = context = True
            continue
        if word in _PREPOSITIONS:
            context = True
            continue
        if word in _DETAIL_WORDS:
            intents.add("read")
            continue
        if word in _STATES and intents & {"create", "write"}:
            # "make a repository private": making something a state is an update, whatever the verb; the state is
            # a value the update sets, which counts where the function takes it (see the index), not as a word.
            intents = (intents - {"create", "write"}) | {"update"}
            said = [(stemmed, weight) for stemmed, weight in said if INTENTS.get(stemmed) not in ("create", "write")]
            said.append((stem(word), INFLECTED_WEIGHT))
            settings.add(stem(word))
            continue
        if word in QUESTION_WORDS or len(word) < 2 or word in STOPWORDS or word.isdigit():
            continue
        stemmed = stem(word)
        weight = CONTEXT_WEIGHT if context else 1.0
        base = _undone(stemmed)
        if base:
            # "unpin", "reassign": the thing undone or done again is there too.
            said.append((base, IMPLIED_WEIGHT))
        first = not started
        started = True
        if (
            first
            and not asks
            and stemmed in LEADING
            and following
            and not _plural(word)
            and not _inflected(word)
            and (stemmed in ALWAYS_VERBS or not _plural(following))
        ):
            intent, extras = LEADING[stemmed]
            intents.add(intent)
            said.extend((extra, 1.0) for extra in extras)
            leading_verbs.add(stemmed)
            continue
        if stemmed in INTENTS and not clause and not asks and not _plural(word) and (first or not _inflected(word)):
            # "texts we sent", "who is watching", "audit of changes": past, -ing and -s forms describe.
            intents.add(INTENTS[stemmed])
            main.add(stemmed)
            # The intent weighs through the action of functions; as a word, a plain verb tells little.
            weight *= VERB_WEIGHT
        elif _inflected(word) and not first:
            weight = min(weight, INFLECTED_WEIGHT)
        elif not context and stemmed not in INTENTS and _plural(word):
            plural = True
        if stemmed in _MODIFIERS:
            weight *= INFLECTED_WEIGHT
        said.append((stemmed, weight))
    if question and not intents:
        intents.add("read")
    if plural and intents <= {"read"}:
        # "read the messages of a channel": many things to read is a list.
        intents = {"list"}
    return _query(said, intents, frozenset(leading_verbs), frozenset(main | leading_verbs), frozenset(settings))


def _stop_doing(text: str) -> tuple[str, bool]:
    """The text with "stop following" as "unfollow follow" (stopping is undoing), and whether it had any."""
    changed = _STOP_DOING.sub(lambda match: f"un{match.group(1)} {match.group(1)}", text)
    return changed, changed != text


def _undone(stemmed: str) -> str:
    """`unpin` → pin, `reassign` → assign, `reopen` → open: the verb under an un- or re- prefix, or ""."""
    if stemmed in VERBS:
        return ""  # a verb of its own: "remove" is no re-move
    for prefix in ("un", "re"):
        rest = stemmed[len(prefix) :]
        if stemmed.startswith(prefix) and len(rest) >= 3 and (rest in VERBS or rest in INTENTS or rest in LEADING):
            return rest
    return ""


def _verb_like(word: str) -> bool:
    return stem(word) in VERBS or stem(word) in INTENTS


def _plural(word: str) -> bool:
    return word.endswith("s") and stem(word) != word and word not in STOPWORDS


def _inflected(word: str) -> bool:
    return word in _IRREGULAR_PAST or word.endswith(("ed", "ing"))


def _query(
    said: list[tuple[str, float]],
    intents: set[Intent],
    leading: frozenset[str],
    main: frozenset[str],
    settings: frozenset[str],
) -> Query:
    weights: dict[str, float] = {}
    for stemmed, weight in said:
        weights[stemmed] = max(weight, weights.get(stemmed, 0.0))
    groups: list[list[str]] = []
    for stemmed in weights:
        # Verbs that mean the same are one concept ("list all"); nouns stay apart ("phone call").
        related = expand(stemmed) | {stemmed} if stemmed in VERBS or stemmed in INTENTS else {stemmed}
        for group in groups:
            if related & set(group):
                group.append(stemmed)
                break
        else:
            groups.append([stemmed])
    said_stems = set(weights)
    concepts: list[Concept] = []
    variants: dict[str, float] = {}
    for group in groups:
        found = dict.fromkeys(group, 1.0)
        for stemmed in group:
            for synonym in sorted(expand(stemmed) - said_stems):
                found.setdefault(synonym, SYNONYM_WEIGHT)
        concepts.append(Concept(variants=found, weight=max(weights[stemmed] for stemmed in group)))
        for word, weight in found.items():
            variants[word] = max(weight, variants.get(word, 0.0))
    return Query(
        concepts=tuple(concepts),
        intents=frozenset(intents),
        verbs=frozenset((said_stems | leading) & (VERBS | set(INTENTS) | leading)),
        leading=leading,
        main_verbs=main,
        settings=settings,
        variants=variants,
    )
