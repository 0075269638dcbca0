"""The vocabulary of search: synonyms, the intents that verbs signal, and words a query implies.

Nothing here knows a particular API: the tables hold the verbs and nouns that REST APIs and the people who use
them share. Words are written plainly and stemmed when loaded.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from catalog._search_text import stem, words

__all__ = [
    "ALWAYS_VERBS",
    "INTENTS",
    "LEADING",
    "PHRASAL_PAST",
    "PHRASAL_VERBS",
    "QUESTION_WORDS",
    "VERBS",
    "Intent",
    "expand",
    "implied",
]

Intent = Literal["list", "read", "create", "update", "delete", "write"]

#: Verbs that mean the same, or near enough, to someone looking for an API function.
_VERB_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("get", "fetch", "retrieve", "read", "show", "view", "see", "display", "look", "obtain", "describe", "inspect"),
    ("list", "all", "browse", "enumerate", "every", "index", "everything"),
    ("create", "make", "add", "new", "put", "post", "submit", "insert", "register", "establish", "generate", "build"),
    ("save", "store", "persist", "keep", "remember"),
    ("update", "change", "edit", "modify", "patch", "alter", "adjust", "rename", "set", "replace", "fix", "correct"),
    ("delete", "remove", "destroy", "erase", "drop", "discard", "purge", "trash", "unregister", "wipe", "kick", "kill"),
    ("prune", "purge", "cleanup", "inactive"),
    ("shutdown", "poweroff", "halt", "stop"),
    ("cancel", "void", "abort", "stop", "terminate", "halt", "revoke"),
    ("search", "find", "query", "locate", "filter", "seek"),
    ("send", "deliver", "dispatch", "notify", "post", "text", "email", "say"),
    ("upload", "attach", "attachment"),
    ("download", "export", "content"),
    ("copy", "duplicate", "clone", "fork"),
    ("move", "transfer", "relocate", "reorder", "forward", "redirect"),
    ("restore", "undelete", "recover", "untrash", "reinstate", "resume"),
    ("approve", "accept", "confirm", "allow", "approval"),
    ("reject", "decline", "deny", "refuse", "dismiss", "rejection"),
    ("close", "resolve", "complete", "finish", "done", "end", "fixed"),
    ("merge", "combine", "squash", "land"),
    ("follow", "watch", "subscribe", "star", "follower", "watcher", "subscriber"),
    ("unfollow", "unwatch", "unsubscribe", "unstar", "unlisten", "unreceiv", "untrack"),
    ("assign", "allocate", "give", "grant", "assignee", "responsible", "hand", "delegate"),
    ("unassign", "deallocate"),
    ("ban", "block", "mute"),
    ("unban", "unblock", "unmute", "lift"),
    ("start", "begin", "launch", "trigger", "run", "execute", "initiate", "dispatch", "invoke", "invocation"),
    ("suspend", "pause", "deactivate", "disable"),
    ("raise", "increase", "bump", "escalate"),
    ("count", "total", "many", "tally"),
    ("pay", "charge", "payment", "bill", "take"),
    ("buy", "purchase", "acquire", "provision"),
    ("refund", "reimburse", "reimbursement", "chargeback", "reverse", "reversal"),
    ("invite", "invitation", "join"),
    ("archive", "shelve"),
    ("lock", "freeze", "prevent"),
    ("unlock", "unfreeze"),
    ("verify", "validate", "check", "test", "verification", "validation"),
    ("snooze", "postpone", "defer", "delay", "silence"),
    ("acknowledge", "ack", "claim"),
    ("override", "swap", "cover"),
    ("contact", "reach"),
    ("reply", "respond", "answer", "response"),
    ("hangup", "end", "terminate", "disconnect"),
    ("publish", "release", "ship", "deploy"),
    ("contribute", "contributor", "contribution"),
    ("collaborate", "collaborator", "collaboration"),
    ("depend", "dependency", "dependent", "blocked"),
    ("react", "reaction"),
    ("review", "reviewer"),
    ("participate", "participant"),
    ("configure", "configuration", "config"),
    ("authenticate", "authentication", "authorize", "authorization", "login", "auth", "oauth"),
    ("transcribe", "transcription", "transcript"),
    ("record", "recording", "tape"),
    ("spend", "spent", "spending", "usage", "consumption", "burn"),
    ("enable", "activate", "reactivate", "unpause", "unsuspend"),
    ("retry", "rerun", "redeliver", "redo", "resend"),
    ("restart", "reboot", "bounce"),
    ("resize", "scale", "upsize", "downsize", "grow", "shrink"),
    ("rotate", "regenerate", "renew", "reissue", "rekey"),
    ("convert", "conversion", "exchange", "transform"),
    ("rollback", "revert", "undo"),
    ("recommend", "suggest", "similar", "recommendation", "suggestion"),
    ("sync", "synchronize", "refresh", "reload"),
    ("import", "ingest"),
    ("preview", "simulate", "estimate"),
    ("compare", "diff", "difference"),
)

#: Nouns that name the same thing.
_NOUN_GROUPS: Final[tuple[tuple[str, ...], ...]] = (
    ("pullrequest", "pull"),
    ("repository", "repo", "codebase", "project"),
    ("issue", "ticket", "bug", "defect"),
    ("invoice", "bill"),
    ("customer", "client", "buyer", "shopper", "purchaser", "payer"),
    (
        "user",
        "member",
        "account",
        "person",
        "people",
        "profile",
        "individual",
        "employee",
        "teammate",
        "colleague",
        "coworker",
        "staff",
        "engineer",
        "hire",
    ),
    ("me", "myself", "current", "authenticated", "viewer", "whoami", "my", "mine", "own"),
    ("message", "chat", "text", "sms", "mms", "dm", "post", "say"),
    ("file", "upload", "attachment", "document", "doc", "content", "blob"),
    ("folder", "directory", "dir"),
    ("comment", "note", "reply", "remark", "annotation", "annotate", "feedback"),
    ("team", "group", "squad"),
    ("organization", "org", "company", "enterprise", "workspace"),
    ("guild", "server", "community"),
    ("channel", "room", "conversation"),
    ("webhook", "hook", "callback", "url"),
    ("label", "tag", "category"),
    ("version", "revision", "release"),
    ("commit", "revision", "changeset"),
    ("workflow", "pipeline", "ci", "automation"),
    ("secret", "credential", "password"),
    ("token", "key", "credential", "apikey"),
    ("subscription", "recurring", "plan", "monthly"),
    ("product", "item", "good", "sku", "merchandise", "sell", "sale"),
    ("price", "pricing", "cost", "rate", "fee"),
    ("coupon", "discount", "promo", "promotion", "voucher", "percent", "percentage", "deal", "offer"),
    ("schedule", "rotation", "roster", "shift", "calendar"),
    ("incident", "outage", "alert", "problem", "emergency", "broken", "alarm"),
    ("call", "dial", "ring"),
    ("number", "phone"),
    ("task", "todo", "assignment", "chore"),
    ("project", "board"),
    ("emoji", "reaction", "emoticon", "thumbs"),
    ("role", "permission", "rank"),
    ("access", "permission", "collaborator", "collaboration", "share"),
    ("favorite", "star", "bookmark"),
    ("worklog", "timesheet", "hours", "logged", "time"),
    ("transition", "status", "state", "move"),
    ("event", "activity", "happening"),
    ("history", "changelog", "log", "audit", "trail", "timeline", "happen"),
    ("vote", "upvote", "like"),
    ("sub", "child", "nested"),
    ("goal", "objective", "okr", "target"),
    ("link", "relate", "relation", "relationship", "associate", "connect"),
    ("type", "kind"),
    ("site", "website", "webpage", "homepage"),
    ("setting", "config", "configuration", "preference", "option"),
    ("avatar", "picture", "photo", "image", "icon"),
    ("media", "image", "picture", "photo", "video", "mms"),
    ("thumbnail", "preview"),
    ("view", "visit", "visitor", "traffic", "pageview"),
    ("share", "link", "shared", "public"),
    ("trash", "deleted", "bin", "recycle"),
    ("notification", "alert", "notify", "notified"),
    ("gist", "snippet", "paste"),
    ("email", "mail", "address"),
    ("balance", "funds", "money", "credit", "owe", "owed", "due", "outstanding"),
    ("payout", "withdraw", "withdrawal", "cashout"),
    ("dispute", "chargeback", "evidence", "contest", "contested"),
    ("card", "credit"),
    ("signup", "register", "onboard"),
    ("oncall", "duty", "pager"),
    ("escalation", "escalate"),
    ("maintenance", "downtime", "silence", "quiet"),
    ("dashboard", "overview"),
    ("sprint", "iteration"),
    ("deployment", "deploy", "rollout"),
    ("environment", "env"),
    ("vulnerability", "cve", "advisory"),
    ("sound", "audio"),
    ("recording", "audio", "voicemail"),
    ("thread", "discussion"),
    ("meeting", "conference", "standup", "huddle", "appointment"),
    ("service", "system"),
    ("participant", "attendee", "attend", "caller", "people"),
    ("queue", "waiting"),
    ("dependency", "blocker", "prerequisite"),
    ("weekly", "week"),
    ("daily", "day", "today"),
    ("yearly", "year", "annual"),
    ("recent", "lately", "latest", "newest", "recently"),
    ("upcoming", "next", "future", "scheduled"),
    ("error", "failure", "exception", "fault"),
    ("warning", "alert", "notification", "reminder"),
    ("tax", "vat", "gst"),
    ("limit", "quota", "cap", "allowance", "threshold"),
    ("metric", "analytics", "stat", "statistic", "insight", "kpi", "measurement", "report"),
    ("section", "column", "lane"),
    ("part", "piece", "chunk", "segment"),
    ("batch", "bulk", "offline"),
    ("priority", "urgency", "severity"),
    ("reference", "ref", "branch"),
    ("droplet", "server", "vm", "instance", "machine", "host"),
    ("volume", "disk", "drive"),
    ("size", "tier", "flavor"),
    ("region", "datacenter", "location", "zone"),
    ("database", "db", "postgres", "postgresql", "mysql", "sql"),
    ("certificate", "cert", "ssl", "tls"),
    ("track", "song", "tune"),
    ("artist", "band", "singer", "musician"),
    ("show", "podcast"),
    ("playback", "player", "music", "playing"),
    ("shuffle", "random", "randomize"),
    ("repeat", "loop"),
    ("device", "speaker"),
    ("model", "llm", "gpt", "engine"),
    ("embedding", "vector", "embed"),
    ("speech", "tts", "voice", "spoken", "aloud"),
    (
        "moderation",
        "harmful",
        "toxic",
        "hateful",
        "abuse",
        "unsafe",
        "hate",
        "violence",
        "violent",
        "nsfw",
        "offensive",
    ),
    ("poll", "survey", "questionnaire"),
    ("registrant", "registration", "register", "signup", "enroll", "enrollment"),
    ("absentee", "absent"),
    ("referrer", "referral", "traffic"),
    ("fulfillment", "shipment", "shipping", "delivery"),
    ("cart", "basket"),
    ("inventory", "stock"),
    ("lead", "prospect"),
    ("opportunity", "deal"),
    ("inbox", "mailbox"),
    ("sheet", "spreadsheet", "workbook"),
    ("sprint", "cycle"),
    ("receipt", "invoice"),
    ("currency", "fiat", "usd", "eur", "gbp", "dollar", "euro"),
    ("satoshi", "sat", "bitcoin", "btc"),
    ("portal", "selfservice", "themselves"),
    ("inference", "predict", "prediction", "score", "scoring", "invocation"),
    ("node", "machine", "worker", "host"),
    ("memory", "ram"),
    ("cpu", "processor", "compute"),
    ("firewall", "allowlist", "whitelist", "blocklist", "blacklist"),
    ("domain", "dns", "hostname"),
    ("backup", "snapshot"),
    ("cron", "nightly", "hourly", "periodic", "periodically"),
    ("health", "healthy", "healthcheck", "uptime", "availability", "monitor", "alive", "liveness", "liveliness"),
    ("health", "readiness", "heartbeat", "ping"),
    ("license", "licensing", "copyright"),
    ("artifact", "output"),
    ("finetune", "train", "training", "teach"),
    ("completion", "prompt", "ask"),
    ("vector", "knowledge"),
    ("playback", "listen", "listened", "play", "played"),
    ("automoderation", "moderation"),
    ("webinar", "seminar", "livestream"),
    ("comment", "discussion"),
)

#: Verbs of two or three words ("turn off", "set up") and the one verb each means (other forms of the first word in
#: `_PHRASAL_FORMS`). Their words apart would say little ("off", "up" are stopwords) or the wrong thing.
_PHRASAL: Final[tuple[tuple[str, str], ...]] = (
    (r"(turn|switch) off", "disable"),
    (r"(turn|switch) on", "enable"),
    (r"shut (down|off)", "shutdown"),
    (r"power (down|off)", "shutdown power"),
    (r"power (on|up)", "start power"),
    (r"boot up", "start"),
    (r"set up", "create"),
    (r"spin up", "create"),
    (r"sign up", "register"),
    (r"(log|sign) (in|on)(to)?", "login"),
    (r"(log|sign) out", "logout"),
    (r"tear down", "delete"),
    (r"clean up", "delete"),
    (r"wipe out", "delete"),
    (r"get rid of", "delete"),
    (r"kick off", "start"),
    (r"call off", "cancel"),
    (r"put off", "postpone"),
    (r"roll back", "rollback"),
    (r"roll out", "deploy"),
    (r"back up", "backup"),
    (r"hand (over|off)", "reassign"),
    (r"give back", "remove"),
    (r"take back", "remove"),
    (r"check off", "complete"),
    (r"tick off", "complete"),
    (r"look over", "review"),
    (r"look up", "find"),
    (r"find out", "get"),
    (r"fill out", "submit"),
    (r"sign off", "approve"),
    (r"come out", "release"),
    (r"top up", "fund"),
    (r"pay out", "payout"),
    (r"cash out", "payout"),
    (r"opt out", "unsubscribe"),
    (r"opt in", "subscribe"),
    (r"follow up", "remind"),
    (r"write down", "note"),
    (r"keep (posted|updated|informed)", "watch"),
    (r"bring back", "restore"),
    (r"take off", "remove"),
)

#: Irregular and doubled forms of the first words of phrasal verbs.
_PHRASAL_FORMS: Final[dict[str, str]] = {
    "turn": "turn|turns|turned|turning",
    "switch": "switch|switches|switched|switching",
    "shut": "shut|shuts|shutting",
    "power": "power|powers|powered|powering",
    "set": "set|sets|setting",
    "spin": "spin|spins|spinning|spun",
    "sign": "sign|signs|signed|signing",
    "log": "log|logs|logged|logging",
    "tear": "tear|tears|tearing|tore|torn",
    "clean": "clean|cleans|cleaned|cleaning",
    "kick": "kick|kicks|kicked|kicking",
    "call": "call|calls|called|calling",
    "put": "put|puts|putting",
    "roll": "roll|rolls|rolled|rolling",
    "hand": "hand|hands|handed|handing",
    "give": "give|gives|gave|given|giving",
    "take": "take|takes|took|taken|taking",
    "check": "check|checks|checked|checking",
    "look": "look|looks|looked|looking",
    "keep": "keep|keeps|kept|keeping",
    "come": "come|comes|came|coming",
    "bring": "bring|brings|brought|bringing",
}


#: First words of phrasal verbs whose particle must follow at once.
_INSEPARABLE: Final = frozenset({"log", "sign", "kick"})


def _phrasal_pattern(pattern: str) -> re.Pattern[str]:
    head, _, rest = pattern.partition(" ")
    options = head.strip("()").split("|")
    forms = "|".join(_PHRASAL_FORMS.get(option, option) for option in options)
    tail = r"\s+".join(rest.split(" "))
    # "hand this outage over": the object may sit between the verb and its particle, except where that means
    # something else ("log time on a ticket", "kick someone off a call").
    between = "" if not _INSEPARABLE.isdisjoint(options) else r"(?:[\w'-]+\s+){0,3}?"
    return re.compile(rf"\b(?:{forms})\s+(?P<between>{between}){tail}\b")


#: Phrasal verbs as patterns over lower-case text, and the verb each becomes.
PHRASAL_VERBS: Final[tuple[tuple[re.Pattern[str], str], ...]] = tuple(
    (_phrasal_pattern(pattern), verb) for pattern, verb in _PHRASAL
)
#: Past forms among the phrasal verbs' first words that do not end in -ed.
PHRASAL_PAST: Final = frozenset({"spun", "tore", "torn", "gave", "given", "took", "taken", "came", "kept", "brought"})

#: Query words that say what the caller wants to do, and the intent they signal.
_INTENT_WORDS: Final[dict[Intent, tuple[str, ...]]] = {
    "list": (
        "list", "all", "browse", "enumerate", "every", "everything", "everyone", "everybody", "history", "find",
        "search",
    ),
    "read": ("get", "fetch", "retrieve", "read", "show", "view", "see", "display", "look", "inspect", "download"),
    "create": (
        "create", "add", "make", "new", "submit", "register", "insert", "generate", "establish", "write", "buy",
        "purchase", "publish", "upload", "put", "save", "store", "persist", "give", "grant",
    ),
    "update": (
        "update", "change", "edit", "modify", "patch", "set", "rename", "alter", "adjust", "replace", "close",
        "resolve", "complete", "finish", "mark", "reopen", "archive", "acknowledge", "ack", "move", "enable",
        "disable", "suspend", "pause", "deactivate", "activate", "lower", "increase", "decrease", "bump", "reassign",
        "fix", "correct", "claim", "promote", "demote",
    ),
    "delete": (
        "delete", "remove", "destroy", "erase", "discard", "purge", "unregister", "wipe", "kick", "kill", "unpin",
        "unstar", "unfollow", "unwatch", "unsubscribe", "unassign", "unlink", "unban", "cancel",
    ),
    "write": (
        "assign", "merge", "approve", "reject", "lock", "unlock", "star", "follow", "invite", "ban",
        "snooze", "pin", "react", "transfer", "copy", "duplicate", "restore", "send", "trigger", "run", "rerun",
        "execute", "invoke", "start", "stop", "subscribe", "verify", "dismiss", "request", "pay", "charge",
        "refund", "capture", "void", "finalize",
        "attach", "detach", "share", "watch", "vote", "link", "fork", "sync", "test", "revoke", "accept", "decline",
    ),
}  # fmt: skip

#: The first word of a query, when it is one of these, is a verb that says both an intent and an object.
_LEADING: Final[dict[str, tuple[Intent, tuple[str, ...]]]] = {
    "open": ("create", ()),
    "file": ("create", ()),
    "log": ("create", ()),
    "record": ("create", ("recording",)),
    "book": ("create", ()),
    "schedule": ("create", ()),
    "start": ("create", ()),
    "post": ("create", ()),
    "text": ("create", ("message",)),
    "say": ("create", ("message",)),
    "sms": ("create", ("message",)),
    "message": ("create", ("message",)),
    "email": ("create", ("email",)),
    "dial": ("create", ("call",)),
    "ring": ("create", ("call",)),
    "call": ("create", ("call",)),
    "phone": ("create", ("call",)),
    "page": ("create", ("incident",)),
    "tag": ("create", ("tag",)),
    "label": ("create", ("label",)),
    "comment": ("create", ("comment",)),
    "note": ("create", ("note",)),
    "pin": ("create", ("pin",)),
    "star": ("create", ("star",)),
    "bookmark": ("create", ("star",)),
    "fork": ("create", ("fork",)),
    "invite": ("create", ("invite",)),
    "ship": ("create", ("release",)),
    "land": ("write", ("merge",)),
    "charge": ("create", ("charge", "payment")),
    "pay": ("create", ("payment",)),
    "bill": ("create", ("invoice",)),
    "invoice": ("create", ("invoice",)),
    "refund": ("create", ("refund",)),
    "trigger": ("create", ()),
    "run": ("write", ()),
}

#: Leading words that are verbs whatever follows ("record hours", "log time"); others are verbs only when no
#: plural follows ("open incidents" lists them).
_ALWAYS_VERBS: Final = ("log", "record", "dial", "ring", "land", "trigger", "book", "fork", "invite")

#: Words that bring others along wherever they are in a query.
_IMPLIES: Final[dict[str, tuple[str, ...]]] = {
    "who": ("user",),
    "whom": ("user",),
    "someone": ("user",),
    "somebody": ("user",),
    "anyone": ("user",),
    "everyone": ("user", "member"),
    "everybody": ("user", "member"),
}

#: Question words: a query that asks one wants to read.
QUESTION_WORDS: Final = frozenset({"who", "what", "which", "whats", "where", "when", "how", "whose", "whom"})


def _stemmed(word: str) -> str:
    return " ".join(stem(part) for part in words(word))


def _load_synonyms() -> dict[str, frozenset[str]]:
    table: dict[str, set[str]] = {}
    for group in (*_VERB_GROUPS, *_NOUN_GROUPS):
        stems = {_stemmed(word) for word in group}
        for member in stems:
            table.setdefault(member, set()).update(stems - {member})
    return {word: frozenset(others) for word, others in table.items()}


_SYNONYMS: Final = _load_synonyms()

#: Stem → the intent it signals; a word in several rows takes the first.
INTENTS: Final[dict[str, Intent]] = {
    _stemmed(word): intent for intent, group in reversed(_INTENT_WORDS.items()) for word in group
}

#: Stems of the verbs an API function name may start with.
VERBS: Final = frozenset(_stemmed(word) for group in _VERB_GROUPS for word in group) - frozenset(
    _stemmed(word)
    for word in ("all", "every", "index", "new", "content", "attachment", "payment", "charge", "usage", "config")
)

#: Stems of the leading words that are verbs whatever follows.
ALWAYS_VERBS: Final = frozenset(_stemmed(word) for word in _ALWAYS_VERBS)

#: Stem of a leading query word → its intent and the stems it brings.
LEADING: Final[dict[str, tuple[Intent, tuple[str, ...]]]] = {
    _stemmed(word): (intent, tuple(_stemmed(extra) for extra in extras)) for word, (intent, extras) in _LEADING.items()
}


def expand(word: str) -> frozenset[str]:
    """The stems that mean the same as the stem `word`, not including itself."""
    return _SYNONYMS.get(word, frozenset())


def implied(word: str) -> tuple[str, ...]:
    """The stems a lower-case query word brings along (`who` → user)."""
    return tuple(_stemmed(extra) for extra in _IMPLIES.get(word, ()))
