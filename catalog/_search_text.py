"""Words for search: splitting text into words, light stemming, stopwords.

Index and query go through the same `words()`, `stem()` and `tokens()`, so only the equality of stems matters,
never their spelling.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache
from typing import Final

__all__ = ["STOPWORDS", "name_tokens", "stem", "tokens", "words"]

#: A word: camelCase splits (`pullRequest` → pull, Request; `PRs` stays one word), digits stand alone.
_WORD: Final = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]?[a-z]+|[A-Z]+(?![a-z])|[0-9]+")
#: Punctuation, ASCII and typographic (quotes, dashes, ellipsis, bullets), to blank out of prose.
_PUNCTUATION: Final = str.maketrans(
    dict.fromkeys(string.punctuation + "\u2018\u2019\u201c\u201d\u2013\u2014\u2026\u2022\u00b7\u00ab\u00bb", " ")
)
_SNAKE: Final = re.compile(r"[a-z]+(?:_[a-z]+)*")
_TAG: Final = re.compile(r"<[^>]{0,400}>")
_ENTITY: Final = re.compile(r"&[a-z]+;|&#\d+;")
_URL: Final = re.compile(r"https?://\S+")

#: Words and word pairs written several ways, rewritten to one form on both sides (index and query).
_COMPOUND_WORDS: Final = {
    "repo": "repository",
    "repos": "repositories",
    "org": "organization",
    "orgs": "organizations",
    "pr": "pullrequest",
    "prs": "pullrequest",
    "dms": "dm",
    "lookup": "search",
    "todos": "todo",
    "automod": "automoderation",
    "k8s": "kubernetes",
    "autoscale": "autoscaler",
    "autoscaling": "autoscaler",
    "autoscalers": "autoscaler",
    "finetune": "finetune",
    "finetuning": "finetune",
    "finetuned": "finetune",
}
_COMPOUND_PAIRS: Final = {
    ("on", "call"): "oncall",
    ("on", "calls"): "oncall",
    ("e", "mail"): "email",
    ("e", "mails"): "email",
    ("log", "in"): "login",
    ("sign", "in"): "login",
    ("logged", "in"): "login",
    ("signed", "in"): "login",
    ("sign", "up"): "signup",
    ("to", "do"): "todo",
    ("to", "dos"): "todo",
    ("check", "out"): "checkout",
    ("web", "hook"): "webhook",
    ("web", "hooks"): "webhook",
    ("work", "log"): "worklog",
    ("work", "logs"): "worklog",
    ("work", "flow"): "workflow",
    ("work", "flows"): "workflow",
    ("pull", "request"): "pullrequest",
    ("pull", "requests"): "pullrequest",
    ("bug", "report"): "bug",
    ("bug", "reports"): "bug",
    ("user", "name"): "username",
    ("user", "names"): "username",
    ("time", "sheet"): "timesheet",
    ("fine", "tune"): "finetune",
    ("fine", "tunes"): "finetune",
    ("fine", "tuned"): "finetune",
    ("fine", "tuning"): "finetune",
    ("auto", "moderation"): "automoderation",
    ("no", "show"): "absentee",
    ("no", "shows"): "absentee",
    ("time", "sheets"): "timesheet",
    ("change", "log"): "changelog",
    ("change", "logs"): "changelog",
    ("set", "up"): "create",
    ("spin", "up"): "create",
    ("turn", "on"): "enable",
    ("switch", "on"): "enable",
    ("turn", "off"): "disable",
    ("switch", "off"): "disable",
    ("shut", "off"): "disable",
    ("log", "out"): "logout",
    ("sign", "out"): "logout",
    ("opt", "out"): "unsubscribe",
    ("opt", "in"): "subscribe",
    ("check", "off"): "complete",
    ("tick", "off"): "complete",
    ("cross", "off"): "complete",
    ("tear", "down"): "delete",
    ("clean", "up"): "delete",
    ("kick", "out"): "remove",
    ("hand", "over"): "transfer",
    ("roll", "back"): "rollback",
    ("back", "up"): "backup",
    ("top", "up"): "topup",
    ("pay", "out"): "payout",
    ("every", "day"): "daily",
    ("each", "day"): "daily",
    ("every", "week"): "weekly",
    ("each", "week"): "weekly",
    ("every", "month"): "monthly",
    ("each", "month"): "monthly",
    ("every", "year"): "yearly",
    ("each", "year"): "yearly",
    ("every", "hour"): "hourly",
    ("every", "minute"): "periodically",
    ("every", "second"): "periodically",
    ("every", "time"): "whenever",
    ("call", "off"): "cancel",
    ("all", "hands"): "meeting",
    ("look", "up"): "search",
    ("hang", "up"): "hangup",
    ("money", "back"): "refund",
    ("return", "funds"): "refund",
    ("return", "money"): "refund",
    ("take", "money"): "charge",
    ("group", "call"): "conference",
    ("group", "calls"): "conference",
    ("throw", "away"): "delete",
    ("throw", "out"): "remove",
    ("get", "rid"): "delete",
    ("take", "down"): "delete",
    ("take", "payment"): "charge",
    ("take", "payments"): "charge",
    ("direct", "message"): "dm",
    ("direct", "messages"): "dm",
    ("merge", "request"): "pullrequest",
    ("merge", "requests"): "pullrequest",
}
_SINGLE_WORDS: Final = frozenset(_COMPOUND_WORDS)
_PAIR_STARTS: Final = frozenset(first for first, _ in _COMPOUND_PAIRS)
_PAIR_ENDS: Final = {
    start: frozenset(second for first, second in _COMPOUND_PAIRS if first == start) for start in _PAIR_STARTS
}

STOPWORDS: Final = frozenset(
    """a an the of for to in on at by with from into onto and or is are was were be been being it its this that
    these those some any i we you he she they them their our your his her please can could would should will shall
    how do does did what which want need like via using about as so just also then than there here when where why
    whose whom one single given specific certain particular existing someone somebody something thing things up
    out off over under let lets kindly currently already still yet only if else per each whole such very really
    wants wanted im am has have had having way ways s t now tonight""".split()
)

_IRREGULAR: Final = {
    "made": "make",
    "sent": "send",
    "got": "get",
    "gotten": "get",
    "ran": "run",
    "began": "begin",
    "begun": "begin",
    "wrote": "write",
    "written": "write",
    "bought": "buy",
    "paid": "pay",
    "goes": "go",
    "does": "do",
    "said": "say",
    "people": "person",
    "children": "child",
    "indices": "index",
    "analyses": "analysis",
    "data": "data",
    "media": "media",
    "criteria": "criterion",
    "statuses": "status",
    "aliases": "alias",
    "canceled": "cancel",
    "cancelled": "cancel",
    "canceling": "cancel",
    "cancelling": "cancel",
    "favourite": "favorite",
    "favourites": "favorite",
    "organisation": "organization",
    "organisations": "organization",
    "colour": "color",
    "licence": "license",
    "sanitise": "sanitize",
}

_VOWEL: Final = re.compile(r"[aeiouy]")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light, consistent stem: plural, -ing, -ed and -able forms of a word and the word itself stem alike.

    `refunds` → `refund`, `listing` → `list`, `created`/`creating`/`create` alike, `assignable` → `assign`; words
    of three letters or fewer stay as they are.
    """
    word = _IRREGULAR.get(word, word)
    if len(word) <= 3:
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith(("sses", "xes", "zes", "ches", "shes")):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is", "ias", "ous")):
        word = word[:-1]
    if word.endswith("ing") and len(word) > 5 and _VOWEL.search(word[:-3]):
        word = word[:-3]
    elif word.endswith("ed") and not word.endswith("eed") and len(word) > 4 and _VOWEL.search(word[:-2]):
        word = word[:-2]
    elif word.endswith("able") and len(word) > 7:
        word = word[:-4]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz" and word[-1] not in "aeiou":
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def words(text: str) -> list[str]:
    """Lower-case words of text without markup and URLs, compounds (`on-call`, `e-mail`, `repo`) in one form."""
    if "<" in text:
        text = _TAG.sub(" ", text)
    if "&" in text:
        text = _ENTITY.sub(" ", text)
    if "://" in text:
        text = _URL.sub(" ", text)
    if len(text) > 240:
        # Prose: camelCase is rare there, and translating punctuation to spaces is much faster than a regex.
        return _compounds(text.lower().translate(_PUNCTUATION).split())
    return _compounds(" ".join(_WORD.findall(text)).lower().split())


def _compounds(split: list[str]) -> list[str]:
    """Words with compounds in one form: sub-things split, pairs joined (`pull request`), variants replaced."""
    if "sub" in " ".join(split):
        split = [part for word in split for part in _sub_split(word)]
    present = set(split)
    pairs = [
        (f" {start} {end} ", f" {_COMPOUND_PAIRS[start, end]} ")
        for start in present & _PAIR_STARTS
        for end in _PAIR_ENDS[start] & present
    ]
    singles = present & _SINGLE_WORDS
    if not pairs and not singles:
        return split
    if singles:
        split = [_COMPOUND_WORDS.get(word, word) for word in split]
    line = f" {' '.join(split)} "
    for pair, joined in sorted(pairs):
        # Twice: a match eats the space a following one starts with ("on call on call").
        line = line.replace(pair, joined).replace(pair, joined)
    return line.split()


#: Words that start with "sub" without being a sub-something.
_NOT_SUB: Final = ("subscri", "subject", "submi", "subsequent", "substan", "substitut", "subsidi", "subtract", "subtl")


@lru_cache(maxsize=4096)
def _sub_split(word: str) -> tuple[str, ...]:
    """`subaccount` → sub, account; `subtasks` → sub, tasks: a sub-thing is a thing."""
    if len(word) >= 7 and word.startswith("sub") and not word.startswith(_NOT_SUB):
        return ("sub", word[3:])
    return (word,)


def name_tokens(name: str) -> list[str]:
    """The stems of a catalog name (`list_pull_requests` → list, pullrequest): as `tokens()`, faster for snake_case."""
    if _SNAKE.fullmatch(name) is None:
        return tokens(name)
    return [found for found in map(_STEMS.__getitem__, _compounds(name.split("_"))) if found]


def tokens(text: str) -> list[str]:
    """The stems of the words of `text`, stopwords, single letters and bare numbers dropped, in order."""
    if len(text) <= 240:
        return list(_short_tokens(text))
    return _tokens(text)


@lru_cache(maxsize=16384)
def _short_tokens(text: str) -> tuple[str, ...]:
    return tuple(_tokens(text))


def _tokens(text: str) -> list[str]:
    return [found for found in map(_STEMS.__getitem__, words(text)) if found]


class _StemTable(dict[str, str]):
    """Word → stem, or "" for stopwords, single letters and numbers; filled on first sight of each word."""

    def __missing__(self, word: str) -> str:
        found = "" if len(word) < 2 or word in STOPWORDS or word.isdigit() else stem(word)
        self[word] = found
        return found


_STEMS: Final = _StemTable()
