"""A search query understood: the concepts it names, with their synonyms, and what it wants to do."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from catalog._search_text import STOPWORDS, stem, words
from catalog._search_vocabulary import INTENTS, LEADING, QUESTION_WORDS, VERBS, Intent, expand, implied

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
#: "notify me when…", "tell my server whenever…": a subscription to events, which APIs call webhooks.
_NOTIFY_WHEN: Final = re.compile(r"\b(notif\w*|alert|tell|inform|ping|let\s+\w+\s+know|callbacks?)\b.*\bwhen(ever)?\b")
#: Words after a leading verb that show it is a verb ("open a ticket"), not an adjective ("open incidents").
_DETERMINERS: Final = frozenset(
    "a an the my our your his her their this that these those some someone someone's somebody me us them it new".split()
)
#: "show me", "give me": the "me" is the one asking, not the object.
_FILLER_ME: Final = re.compile(
    r"\b(show|give|tell|find|get|send|fetch|list|let|help|notify|alert|remind|email|ping|message|text|call)\s+me\b"
)
#: Nouns that only ask for details of the object ("repository details"): they say "read".
_DETAIL_WORDS: Final = frozenset({"detail", "details", "info", "information"})
#: Past forms the stemmer does not see as such.
_IRREGULAR_PAST: Final = frozenset({"sent", "made", "bought", "wrote", "written", "done", "got", "gotten", "paid"})
#: Weight of a leading verb that says the intent ("log a bug", "dial a number"): the word itself matters less.
LEADING_WEIGHT: Final = 0.5


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
    #: Every stem and synonym it matches, with the best weight.
    variants: dict[str, float] = field(default_factory=dict)

    @property
    def stems(self) -> frozenset[str]:
        """The stems the query says (or implies), without synonyms."""
        return frozenset(word for concept in self.concepts for word, weight in concept.variants.items() if weight >= 1)


def parse_query(text: str) -> Query:
    """Understand a free-text query: its concepts (synonymous verbs merged into one), intents and verbs."""
    lowered = _FILLER_ME.sub(r"\1", text.lower())
    notify = _NOTIFY_WHEN.search(lowered) is not None
    lowered = _SELF.sub(" me user ", lowered)
    said: list[tuple[str, float]] = [("webhook", IMPLIED_WEIGHT)] if notify else []
    intents: set[Intent] = set()
    context = clause = question = plural = started = False
    split = words(lowered)
    for position, word in enumerate(split):
        question = question or word in QUESTION_WORDS
        clause = clause or word in _CLAUSES
        said.extend((extra, IMPLIED_WEIGHT) for extra in implied(word))
        if word in _PREPOSITIONS or word in _CLAUSES:
            context = True
            continue
        if word in _DETAIL_WORDS:
            intents.add("read")
            continue
        if len(word) < 2 or word in STOPWORDS or word.isdigit():
            continue
        stemmed = stem(word)
        weight = CONTEXT_WEIGHT if context else 1.0
        first = not started
        started = True
        following = split[position + 1] if position + 1 < len(split) else ""
        if first and stemmed in LEADING and following in _DETERMINERS:
            intent, extras = LEADING[stemmed]
            intents.add(intent)
            said.extend((extra, IMPLIED_WEIGHT) for extra in extras)
            weight = LEADING_WEIGHT
        elif stemmed in INTENTS and not clause and (first or not _inflected(word)):
            # "texts we sent", "who is watching": a past or -ing form describes, it does not ask.
            intents.add(INTENTS[stemmed])
        elif _inflected(word) and not first:
            weight = min(weight, LEADING_WEIGHT)
        elif not context and stemmed not in INTENTS and word != stemmed and word.endswith("s"):
            plural = True
        said.append((stemmed, weight))
    if question and not intents:
        intents.add("read")
    if plural and intents <= {"read"}:
        # "read the messages of a channel": many things to read is a list.
        intents = {"list"}
    return _query(said, intents)


def _inflected(word: str) -> bool:
    return word in _IRREGULAR_PAST or word.endswith(("ed", "ing"))


def _query(said: list[tuple[str, float]], intents: set[Intent]) -> Query:
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
        verbs=frozenset(said_stems & (VERBS | set(INTENTS))),
        variants=variants,
    )
