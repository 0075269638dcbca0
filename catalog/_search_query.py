"""A search query understood: the concepts it names, with their synonyms, and what it wants to do."""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from catalog import _search_thesaurus as thesaurus
from catalog._search_text import STOPWORDS, stem, words
from catalog._search_vocabulary import (
    ALWAYS_VERBS,
    INTENTS,
    LEADING,
    PHRASAL_PAST,
    PHRASAL_VERBS,
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
    r"(current(ly)?\s+|the\s+)?(logged|signed)[\s-]+in\s+user|(logged|signed)\s+in\s+as|current\s+user|(the\s+)?authenticated\s+user|"
    r"the\s+caller|myself|i\s+(am|belong|own|have|joined|follow|starred|watch|created)|i'm|do\s+i\s+belong)\b"
)
#: What `_SELF` phrases become: "the caller", which brings the caller and users along at SELF_WEIGHT.
_SELF_WORD: Final = "zzcaller"
#: Weight of the caller and of users in a query that speaks of the caller ("my repositories", "who am I").
SELF_WEIGHT: Final = 0.5
#: Words that start a clause about when something happens: what follows describes, it does not ask.
_CLAUSES: Final = frozenset({"when", "whenever", "once", "after", "before", "while", "until", "if", "so"})
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
_NOTIFY_WHEN: Final = re.compile(
    r"\b(notif\w*|alert|tell|inform|ping|call|hit|let\s+\w+\s+know|callbacks?)\b.*\b(when(ever)?|as\s+soon\s+as|each\s+time|every\s+time)\b"
)

#: Quoted text is what a call carries (a message, a name, a search phrase), not what the query asks for.
_QUOTED: Final = re.compile(r"\"[^\"]*\"|\u201c[^\u201d]*\u201d|\u2018[^\u2019]*\u2019|(?<![\w'])'[^']*'(?![\w'])")
#: Values that stand for the kind of thing they are: a file name, an email address, an issue key (`PROJ-12`).
_VALUES: Final = (
    (
        re.compile(
            r"\b[\w-]+\.(?:pdf|docx?|xlsx?|pptx?|csv|txt|md|json|ya?ml|xml|html?|png|jpe?g|gif|svg|zip|tar|gz|mp[34]|wav|mov)\b",
            re.I,
        ),
        " file ",
    ),
    (re.compile(r"\b(pdf|docx?|xlsx?|pptx?|csv|spreadsheet|screenshot)s?\b(?!\s+files?\b)", re.I), r" \1 file "),
    (re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b"), " email "),
    (re.compile(r"\b[A-Z][A-Z0-9]{1,9}-[0-9]+\b"), " issue "),
)
#: A camelCase name as a vendor's SDK spells a call (`issues.addLabels`, `listForOrg`): its words, before the
#: query is lower-cased. Only names that start in lower case, so `GitHub` and `OAuth` stay one word.
_CAMEL_NAME: Final = re.compile(r"\b[a-z][a-z0-9]*(?:[A-Z][A-Za-z0-9]*)+\b")
#: "who changed…", "when was … deleted": a question about what happened to something, its history.
_WHO_CHANGED: Final = re.compile(
    r"\bwho\s+(changed|modified|edited|updated|deleted|removed|touched|did|made|created|moved)\b|"
    r"\bwhen\s+(was|were|did)\b.*\b(changed|modified|edited|updated|deleted|removed|created|moved)\b"
)
#: "is the server up?", "is the API alive": a question about health.
_IS_UP: Final = re.compile(r"^\s*(is|are|can)\b.*\b(up|alive|down|healthy|responding|reachable|online)\b[\s?.!]*$")
#: "did the run finish?", "has my rollout completed": a question about the state something is in.
_DID_FINISH: Final = re.compile(
    r"\b(did|has|have|is|are)\b.*\b(finish(ed)?|succeed(ed)?|fail(ed)?|complete[d]?|pass(ed)?|done)\b"
)
#: What "what's in" becomes: the items of something, said softly (the query may name them after all).
_ITEMS_WORD: Final = "zzitems"
#: Phrases rewritten before reading words: "what's in a folder" lists its items; "allowed to do" is no to-do.
_PHRASES: Final = (
    (re.compile(r"\bwhat(?:'s|s|\s+is|\s+are)\s+(in|inside)\b"), rf"what {_ITEMS_WORD} \1"),
    (re.compile(r"\b(allowed|able|permitted|supposed|going|want|need|have|has)\s+to\s+do\b"), r"\1 to act"),
    (re.compile(r"\b(at\s+once|in\s+one\s+(go|request|call|shot)|in\s+bulk|en\s+masse)\b"), " bulk "),
    # "stop anyone from deleting…": prevent it; "let alice see my wallet": share it with her.
    (re.compile(r"\b(stop|keep)\s+(?:[\w'-]+\s+){0,2}?from\b"), " prevent "),
    (re.compile(r"\blet\s+([\w'-]+)\s+(see|use|access|view|edit|read)\b"), r" share with \1 "),
)
#: In "ping my server when…", "notify our channel whenever…" the verb only delivers and its object is where to:
#: the event (after "when") and the words of being told (notify, alert) are what the query is about.
_DELIVERY: Final = re.compile(
    r"\b(?:(notif\w*|alert\w*)|call|hit|ping|tell|inform|let\s+\w+\s+know)\b.*?"
    r"(?=\b(?:when(?:ever)?|as\s+soon\s+as|each\s+time|every\s+time)\b)"
)
#: "show me", "give me": the "me" is the one asking, not the object.
_FILLER_ME: Final = re.compile(
    r"\b(show|give|tell|find|get|send|fetch|list|let|help|notify|alert|remind|email|ping|message|text|call)\s+me\b"
)
#: Verbs of the usual actions that say more than the action: as words they count in full ("upload a file").
_SPECIFIC_VERBS: Final = frozenset(stem(word) for word in ("upload", "download", "publish"))
#: Words before a noun: a verb after one of them is a thing ("an update", "the search").
_DETERMINERS: Final = frozenset({"a", "an", "the", "this", "that", "my", "our", "your", "their", "its"})
#: Intent words that stay adjectives after a determiner ("a new repository").
_ADJECTIVES: Final = frozenset({"new", "all", "every", "everything"})
#: Intent words that say "many" rather than an action: a list, unless the query writes ("close all issues").
_QUANTIFIERS: Final = frozenset({"all", "every", "everything", "everyone", "everybody"})
#: Stems that say "many things in one call".
_BULK_WORDS: Final = frozenset(stem(word) for word in ("bulk", "batch", "multiple", "several", "many", "mass"))
#: Nouns that only ask for details of the object ("repository details"): they say "read".
_DETAIL_WORDS: Final = frozenset({"detail", "details", "info", "information"})
#: Past forms the stemmer does not see as such.
_IRREGULAR_PAST: Final = frozenset({"sent", "made", "bought", "wrote", "written", "done", "got", "gotten", "paid"})
#: Weight of a leading verb as a word ("schedule a call" may match where a description schedules).
LEADING_WORD_WEIGHT: Final = 0.3
#: Leading verbs whose sense as a thing is what APIs name (logs, files, records): never words.
_THING_FIRST: Final = frozenset(stem(word) for word in ("log", "file", "record", "open", "book"))
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
    #: Whether it acts on many things at once ("resolve all incidents", "bulk delete messages").
    bulk: bool = False
    #: Stem of a word it says → the API words the thesaurus gives for it; the index uses them where its API does
    #: not use the word itself.
    related: dict[str, frozenset[str]] = field(default_factory=dict)

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
    def context(self) -> frozenset[str]:
        """The stems the query says as context ("in a project", "of a repository"), not as what it is about."""
        return (
            frozenset(
                word
                for concept in self.concepts
                if concept.weight < 1.0
                for word, weight in concept.variants.items()
                if weight >= 1.0 and word not in self.verbs
            )
            - self.focus
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
    phrasing = _Phrasing.of(text)
    lowered, notify, may = phrasing.text, phrasing.notify, phrasing.may
    said = list(phrasing.implied)
    intents: set[Intent] = {"delete"} if phrasing.stopped else set()
    context = clause = plural = started = False
    quantifiers: list[str] = []
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
        if word == _ITEMS_WORD:
            said.append(("item", INFLECTED_WEIGHT))
            plural = True
            continue
        if word == _SELF_WORD:
            said.extend((("me", SELF_WEIGHT), ("user", SELF_WEIGHT)))
            continue
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
        if base and not clause and not asks and stemmed not in INTENTS and not _inflected(word):
            # "rerun a job", "redeploy the app": doing again is doing, with the intent of the verb done again.
            intents.add(INTENTS.get(base, "write"))
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
            if stemmed not in _THING_FIRST:
                said.append((stemmed, LEADING_WORD_WEIGHT))
            leading_verbs.add(stemmed)
            continue
        if not first and previous in _DETERMINERS and stemmed in INTENTS and word not in _ADJECTIVES:
            # "post an update", "leave a reply": after an article the verb is a thing, said outright.
            said.append((stemmed, weight))
            continue
        if stemmed in INTENTS and not clause and not asks and not _plural(word) and (first or not _inflected(word)):
            if word in _QUANTIFIERS:
                quantifiers.append(stemmed)
                continue
            # "texts we sent", "who is watching", "audit of changes": past, -ing and -s forms describe.
            intents.add(INTENTS[stemmed])
            main.add(stemmed)
            # The intent weighs through the action of functions; as a word, a plain verb tells little.
            if stemmed not in _SPECIFIC_VERBS:
                weight *= VERB_WEIGHT
        elif _inflected(word) and not first:
            weight = min(weight, INFLECTED_WEIGHT)
        elif not context and stemmed not in INTENTS and _plural(word):
            plural = True
        if stemmed in _MODIFIERS:
            weight *= INFLECTED_WEIGHT
        said.append((stemmed, weight))
    bulk = any(stemmed in _BULK_WORDS for stemmed, _ in said)
    if quantifiers and intents & {"create", "update", "delete", "write"}:
        # "resolve all incidents", "delete every message": one call on many things, where the API has one.
        bulk = True
    elif quantifiers:
        # "all the labels", "every outage": many things to read, a list.
        intents.add("list")
        main.update(quantifiers)
        said.extend((stemmed, VERB_WEIGHT) for stemmed in quantifiers)
    if notify:
        # Being told when something happens is a subscription: the query creates one, whatever its verbs say.
        intents = {"create"}
    elif question and not intents:
        intents.add("read")
    if plural and intents <= {"read"}:
        # "read the messages of a channel": many things to read is a list.
        intents = {"list"}
    query = _query(
        said, intents, frozenset(leading_verbs), frozenset(main | leading_verbs), frozenset(settings), bulk=bulk
    )
    return dataclasses.replace(query, related=_related(split, opening=not asks))


def _related(split: list[str], *, opening: bool) -> dict[str, frozenset[str]]:
    """The thesaurus's API words for the nouns of a query: the last word of each run of words that are not
    stopwords ("the live *line*", "my *cell*"), other than the word an imperative opens with.

    Verbs and modifiers are left out ("leave a comment", "a URL that handles calls"): read in the thesaurus, they
    would be taken for nouns of the same spelling.
    """
    content = [word not in STOPWORDS for word in split]
    heads = {
        stem(word)
        for position, word in enumerate(split)
        if content[position]
        and (position + 1 == len(split) or not content[position + 1])
        and not (opening and position == 0)
    }
    found = thesaurus.related([stem(word) for word, kept in zip(split, content, strict=True) if kept])
    return {word: api_words for word, api_words in found.items() if word in heads}


@dataclass(frozen=True, kw_only=True)
class _Phrasing:
    """A query's text with its set phrases read: rewritten for word-by-word reading, and what they signal."""

    text: str
    #: Stems the phrases imply, with their weights ("notify me when…" → webhook).
    implied: tuple[tuple[str, float], ...]
    #: "notify me when…", "ping my server whenever…": a subscription to events.
    notify: bool
    #: "stop following…": the activity undone.
    stopped: bool
    #: "can this user…", "am I allowed…": a question about permissions.
    may: bool

    @classmethod
    def of(cls, text: str) -> _Phrasing:
        """Read the set phrases of `text`: payload, values, self-references, subscriptions, history, permissions,
        phrasal verbs."""
        lowered = _FILLER_ME.sub(r"\1", _values(text).lower())
        notify = _NOTIFY_WHEN.search(lowered) is not None
        if notify:
            lowered = _DELIVERY.sub(lambda match: f" {match.group(1) or ''} ", lowered, count=1)
        history = _WHO_CHANGED.search(lowered) is not None
        health = _IS_UP.search(lowered) is not None
        state = _DID_FINISH.search(lowered) is not None
        for pattern, replacement in _PHRASES:
            lowered = pattern.sub(replacement, lowered)
        lowered = _SELF.sub(f" {_SELF_WORD} ", lowered)
        for pattern, verb in PHRASAL_VERBS:
            lowered = pattern.sub(functools.partial(_phrasal, verb=verb), lowered)
        lowered, stopped = _stop_doing(lowered)
        may = _MAY.search(lowered) is not None
        implied = [
            ("webhook", notify),
            ("history", history),
            ("permission", may),
            ("health", health),
            ("status", state),
        ]
        return cls(
            text=lowered,
            implied=tuple((stemmed, IMPLIED_WEIGHT) for stemmed, present in implied if present),
            notify=notify,
            stopped=stopped,
            may=may,
        )


def _phrasal(match: re.Match[str], verb: str) -> str:
    """The one verb a phrasal verb means, with its object kept, in the past form when said so ("turned off")."""
    head = match.group().split()[0]
    if head.endswith(("ed", "ing")) or head in PHRASAL_PAST:
        first, _, rest = verb.partition(" ")
        verb = f"{first.removesuffix('e')}ed {rest}"
    return f" {verb} {match.group('between')} "


def _values(text: str) -> str:
    """The text without quoted payload, and with file names, email addresses and issue keys as their kind."""
    unquoted = _QUOTED.sub(" ", text)
    if words(unquoted):
        text = unquoted
    for pattern, kind in _VALUES:
        text = pattern.sub(kind, text)
    return _CAMEL_NAME.sub(lambda match: " ".join(words(match.group())), text)


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
    *,
    bulk: bool = False,
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
        bulk=bulk,
    )
