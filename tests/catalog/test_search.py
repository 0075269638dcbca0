"""Search: ranking quality on the big real APIs, the three listing modes, module restriction, errors, determinism.

The query sets in `search_queries/` are task phrasings an agent could send, each with the function(s) the task
needs; about a third share no word with the expected function's summary. The target is the needed function in
the top 5 for 95% of phrasings; `FLOORS` holds what each API reaches today, so that no change lowers it.

Those sets were used to tune the ranking, so they flatter it; so were the sets of the later rounds
(`search_queries/round2/`, `round3/`), each held out at first, measured so, then used for tuning (`ROUND_FLOORS`).
The sets in `search_queries/heldout/` are the other half of what round 3's tester wrote from the catalog listings
alone, for 19 APIs (eight with no other set), and (`*-r4.yaml`, `*-r5.yaml`) a fourth and a fifth round by other
independent testers for 12 of the big APIs each, committed as written after one measurement: never used for
tuning, they measure how search does on tasks it has not seen, and `HELDOUT_FLOORS` holds what each reaches today.
Rounds 6 and 7 (`heldout/*-r6.yaml`, 20 APIs; `heldout/*-r7.yaml`, 21 APIs; each written before any ranking
change was measured on them) have no floors here, so that no test ever prints their misses: they are measured by
bench/search_quality.py (groups `r6`, `r7`) and only checked here for real function names and phrasings of their
own. Round 6 was held out until round 7 was written; since then it is used for tuning, and round 7 is held out.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from catalog._search_index import result_words
from catalog._search_query import parse_query
from catalog._search_text import stem, tokens
from catalog.builder import build_catalog
from catalog.errors import UnknownNameError
from catalog.loading import load_document
from catalog.model import Catalog
from catalog.render import function_line, module_line
from catalog.search import MAX_QUERY_CHARS, MODULE_LISTING_CAP, SearchIndex, search
from tests.corpus import corpus_catalog

QUERIES = Path(__file__).parent / "search_queries"
QUERY_SETS = sorted(path.stem for path in QUERIES.glob("*.yaml"))
HELDOUT = QUERIES / "heldout"
#: The rounds with no floors here, each of which shares no phrasing with any earlier set.
UNFLOORED_ROUNDS = ("r6", "r7")
UNFLOORED_SETS = {round_: sorted(path.stem for path in HELDOUT.glob(f"*-{round_}.yaml")) for round_ in UNFLOORED_ROUNDS}
HELDOUT_SETS = sorted(
    path.stem for path in HELDOUT.glob("*.yaml") if not path.stem.endswith(tuple(f"-{r}" for r in UNFLOORED_ROUNDS))
)
TOP = 5
TARGET = 0.95
#: The top-5 rate each API's query set reaches today (the target is TARGET everywhere).
FLOORS = {
    "asana": 0.95,
    "box": 0.97,
    "discord": 0.96,
    "github": 0.90,
    "jira": 0.96,
    "pagerduty": 0.93,
    "stripe": 0.93,
    "twilio": 0.93,
}

#: The top-5 rate each set of the later tuning rounds reaches today (measured minus about one phrasing).
ROUND_FLOORS: dict[str, dict[str, float]] = {
    "round2": {
        "asana": 0.80,
        "box": 0.88,
        "digitalocean": 0.69,
        "discord": 0.81,
        "github": 0.82,
        "jira": 0.77,
        "kubernetes": 0.56,
        "openai": 0.71,
        "pagerduty": 0.84,
        "spotify": 0.87,
        "stripe": 0.88,
        "twilio": 0.84,
        "zoom": 0.75,
    },
    "round3": {
        "airflow": 0.80,
        "asana": 0.78,
        "box": 0.71,
        "chroma": 0.90,
        "digitalocean": 0.80,
        "discord": 0.83,
        "github": 0.84,
        "jira": 0.78,
        "kubernetes": 0.57,
        "litellm": 0.66,
        "lnbits": 0.91,
        "mlflow": 0.91,
        "openai": 0.80,
        "phoenix": 0.90,
        "prefect": 0.93,
        "stripe": 0.93,
        "twilio_messaging": 0.80,
        "zenml": 0.86,
        "zoom": 0.86,
    },
}
ROUND_SETS = [(round_, path.stem) for round_ in ROUND_FLOORS for path in sorted((QUERIES / round_).glob("*.yaml"))]

#: The top-5 rate each held-out set reaches today (measured minus about one phrasing).
HELDOUT_FLOORS = {
    "airflow": 0.86,
    "asana-r4": 0.88,
    "asana-r5": 0.77,
    "asana": 0.80,
    "box-r4": 0.84,
    "box-r5": 0.88,
    "box": 0.93,
    "chroma": 0.80,
    "digitalocean-r4": 0.85,
    "digitalocean-r5": 0.78,
    "digitalocean": 0.73,
    "discord-r4": 0.85,
    "discord-r5": 0.89,
    "discord": 0.75,
    "github-r4": 0.78,
    "github-r5": 0.73,
    "github": 0.70,
    "jira-r4": 0.72,
    "jira-r5": 0.77,
    "jira": 0.80,
    "kubernetes-r4": 0.44,
    "kubernetes": 0.57,
    "litellm": 0.73,
    "lnbits": 0.69,
    "mlflow": 0.84,
    "openai-r4": 0.70,
    "openai-r5": 0.82,
    "openai": 0.66,
    "pagerduty-r4": 0.80,
    "pagerduty-r5": 0.83,
    "phoenix": 0.83,
    "prefect": 0.66,
    "spotify-r5": 0.94,
    "stripe-r4": 0.68,
    "stripe-r5": 0.85,
    "stripe": 0.66,
    "twilio-r4": 0.80,
    "twilio-r5": 0.94,
    "twilio_messaging": 0.80,
    "zenml": 0.80,
    "zoom-r4": 0.65,
    "zoom-r5": 0.73,
    "zoom": 0.66,
}

SHOP: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Shop", "version": "1"},
    "tags": [
        {"name": "orders", "description": "Orders customers place."},
        {"name": "customers", "description": "People who buy."},
    ],
    "paths": {
        "/orders": {
            "get": {"operationId": "listOrders", "tags": ["orders"], "summary": "List orders"},
            "post": {"operationId": "createOrder", "tags": ["orders"], "summary": "Create an order"},
        },
        "/orders/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {"operationId": "getOrder", "tags": ["orders"], "summary": "Get an order"},
            "patch": {"operationId": "updateOrder", "tags": ["orders"], "summary": "Update an order"},
            "delete": {"operationId": "deleteOrder", "tags": ["orders"], "summary": "Delete an order"},
        },
        "/customers": {
            "get": {"operationId": "listCustomers", "tags": ["customers"], "summary": "List customers"},
        },
        "/me": {
            "get": {"operationId": "getMe", "tags": ["customers"], "summary": "Get the authenticated customer"},
        },
    },
}


_ID = [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}]
#: A help desk whose name is also a word of its functions, with a bulk update, file uploads and webhooks.
DESK: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Acme Desk API", "version": "1"},
    "paths": {
        "/orders": {
            "get": {"operationId": "listOrders", "tags": ["orders"], "summary": "List orders"},
            "post": {"operationId": "createOrder", "tags": ["orders"], "summary": "Create an order"},
            "put": {"operationId": "updateOrders", "tags": ["orders"], "summary": "Update orders"},
        },
        "/orders/{id}": {
            "parameters": _ID,
            "patch": {"operationId": "updateOrder", "tags": ["orders"], "summary": "Update an order"},
        },
        "/orders/{id}/files": {
            "parameters": _ID,
            "post": {"operationId": "uploadOrderFile", "tags": ["orders"], "summary": "Upload a file to an order"},
        },
        "/webhooks": {
            "get": {"operationId": "listWebhooks", "tags": ["webhooks"], "summary": "List webhooks"},
            "post": {"operationId": "createWebhook", "tags": ["webhooks"], "summary": "Create a webhook"},
        },
        "/acme-rooms": {"get": {"operationId": "listAcmeRooms", "tags": ["rooms"], "summary": "List Acme rooms"}},
        "/meetings": {"post": {"operationId": "createMeeting", "tags": ["meetings"], "summary": "Create a meeting"}},
    },
}


@dataclass(frozen=True)
class Phrasing:
    query: str
    expect: tuple[str, ...]


def query_set(name: str, folder: Path = QUERIES) -> tuple[str, list[Phrasing]]:
    """The document a query set is for, and its phrasings."""
    data = yaml.safe_load((folder / f"{name}.yaml").read_text())
    return data["document"], [Phrasing(item["q"], tuple(item["expect"])) for item in data["queries"]]


def top_5_misses(document: str, phrasings: list[Phrasing]) -> list[str]:
    """The phrasings whose needed function is not in the top 5, each with what came instead."""
    index = SearchIndex(corpus_catalog(document))
    misses = []
    for phrasing in phrasings:
        top = [function.name for function in index.rank(phrasing.query, limit=TOP)]
        if not set(phrasing.expect) & set(top):
            misses.append(f"{phrasing.query!r}: expected {' or '.join(phrasing.expect)}, got {', '.join(top)}")
    return misses


@pytest.fixture(scope="module")
def shop() -> Catalog:
    return build_catalog(load_document(SHOP))


@pytest.fixture(scope="module")
def desk() -> Catalog:
    return build_catalog(load_document(DESK))


@pytest.fixture(scope="module")
def github() -> Catalog:
    return corpus_catalog("github-api.github.com.json")


# -- ranking quality on real APIs ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", QUERY_SETS)
def test_the_function_a_task_needs_is_in_the_top_5_for_most_phrasings(name: str) -> None:
    document, phrasings = query_set(name)
    misses = top_5_misses(document, phrasings)
    rate = 1 - len(misses) / len(phrasings)
    assert rate >= FLOORS[name], f"{name}: top-{TOP} rate {rate:.1%} (target {TARGET:.0%}); misses:\n" + "\n".join(
        misses
    )


@pytest.mark.parametrize(("round_", "name"), ROUND_SETS)
def test_later_round_tasks_find_the_function_they_need_in_the_top_5(round_: str, name: str) -> None:
    document, phrasings = query_set(name, QUERIES / round_)
    misses = top_5_misses(document, phrasings)
    rate = 1 - len(misses) / len(phrasings)
    floor = ROUND_FLOORS[round_][name]
    assert rate >= floor, f"{round_} {name}: top-{TOP} rate {rate:.1%}; misses:\n" + "\n".join(misses)


@pytest.mark.parametrize("name", HELDOUT_SETS)
def test_held_out_tasks_find_the_function_they_need_in_the_top_5(name: str) -> None:
    document, phrasings = query_set(name, HELDOUT)
    misses = top_5_misses(document, phrasings)
    rate = 1 - len(misses) / len(phrasings)
    assert rate >= HELDOUT_FLOORS[name], f"held-out {name}: top-{TOP} rate {rate:.1%}; misses:\n" + "\n".join(misses)


def test_the_top_5_rate_over_all_query_sets_is_near_the_target() -> None:
    found = total = 0
    for name in QUERY_SETS:
        document, phrasings = query_set(name)
        index = SearchIndex(corpus_catalog(document))
        total += len(phrasings)
        found += sum(
            1
            for phrasing in phrasings
            if set(phrasing.expect) & {function.name for function in index.rank(phrasing.query, limit=TOP)}
        )
    assert found / total >= TARGET - 0.01


@pytest.mark.parametrize("name", QUERY_SETS)
def test_query_sets_name_real_functions_and_often_share_no_word_with_the_summary(name: str) -> None:
    document, phrasings = query_set(name)
    catalog = corpus_catalog(document)
    assert len(phrasings) >= 25
    disjoint = 0
    for phrasing in phrasings:
        for expected in phrasing.expect:
            assert catalog.has_function(expected), f"{name}: {phrasing.query!r} expects unknown {expected!r}"
        summary = set(tokens(catalog.function(phrasing.expect[0]).summary))
        disjoint += not summary & set(tokens(phrasing.query))
    assert disjoint / len(phrasings) >= 0.25


@pytest.mark.parametrize(("round_", "name"), ROUND_SETS)
def test_later_round_sets_name_real_functions(round_: str, name: str) -> None:
    document, phrasings = query_set(name, QUERIES / round_)
    catalog = corpus_catalog(document)
    assert len(phrasings) >= 10
    for phrasing in phrasings:
        for expected in phrasing.expect:
            assert catalog.has_function(expected), f"{round_} {name}: {phrasing.query!r} expects unknown {expected!r}"


def test_held_out_sets_name_real_functions_and_a_fifth_share_no_word_with_the_summary() -> None:
    disjoint = total = 0
    for name in HELDOUT_SETS + [name for sets in UNFLOORED_SETS.values() for name in sets]:
        document, phrasings = query_set(name, HELDOUT)
        catalog = corpus_catalog(document)
        assert len(phrasings) >= 10, name
        for phrasing in phrasings:
            for expected in phrasing.expect:
                assert catalog.has_function(expected), f"held-out {name}: {phrasing.query!r} expects {expected!r}"
            summary = set(tokens(catalog.function(phrasing.expect[0]).summary))
            disjoint += not summary & set(tokens(phrasing.query))
        total += len(phrasings)
    assert disjoint / total >= 0.2


def test_held_out_sets_share_no_phrasing_with_the_tuning_sets() -> None:
    tuning = {phrasing.query.lower() for name in QUERY_SETS for phrasing in query_set(name)[1]}
    tuning |= {
        phrasing.query.lower() for round_, name in ROUND_SETS for phrasing in query_set(name, QUERIES / round_)[1]
    }
    for name in HELDOUT_SETS:
        assert not tuning & {phrasing.query.lower() for phrasing in query_set(name, HELDOUT)[1]}, name


@pytest.mark.parametrize("round_", UNFLOORED_ROUNDS)
def test_each_unfloored_round_shares_no_phrasing_with_any_earlier_set(round_: str) -> None:
    earlier = {phrasing.query.lower() for name in QUERY_SETS for phrasing in query_set(name)[1]}
    earlier |= {
        phrasing.query.lower() for later, name in ROUND_SETS for phrasing in query_set(name, QUERIES / later)[1]
    }
    earlier_sets = HELDOUT_SETS + [
        name for before in UNFLOORED_ROUNDS[: UNFLOORED_ROUNDS.index(round_)] for name in UNFLOORED_SETS[before]
    ]
    earlier |= {phrasing.query.lower() for name in earlier_sets for phrasing in query_set(name, HELDOUT)[1]}
    assert len(UNFLOORED_SETS[round_]) >= 20
    for name in UNFLOORED_SETS[round_]:
        assert not earlier & {phrasing.query.lower() for phrasing in query_set(name, HELDOUT)[1]}, name


# -- ranking behaviour ---------------------------------------------------------------------------------------------


def test_search_prefers_reads_when_the_query_lists_and_writes_when_it_creates(shop: Catalog) -> None:
    assert search(shop, "list orders").functions[0].name == "orders.list_orders"
    assert search(shop, "show me an order").functions[0].name == "orders.get_order"
    assert search(shop, "add a new order").functions[0].name == "orders.create_order"
    assert search(shop, "change an order").functions[0].name == "orders.update_order"
    assert search(shop, "remove an order").functions[0].name == "orders.delete_order"


def test_search_finds_functions_through_synonyms_that_share_no_word_with_them(shop: Catalog) -> None:
    assert search(shop, "browse the clients").functions[0].name == "customers.list_customers"
    assert search(shop, "who am I").functions[0].name == "customers.get_me"


def test_search_understands_plurals_and_verb_forms(shop: Catalog) -> None:
    assert search(shop, "listing orders").functions[0].name == "orders.list_orders"
    assert search(shop, "deleting an order").functions[0].name == "orders.delete_order"


def test_search_ranks_the_exact_name_match_first(github: Catalog) -> None:
    assert search(github, "merge a pull request").functions[0].name == "pulls.merge"
    assert search(github, "create an issue").functions[0].name == "issues.create"


def test_quoted_text_in_a_query_is_payload_not_what_it_asks_for(shop: Catalog) -> None:
    assert search(shop, 'create an order with the note "list all customers"').functions[0].name == "orders.create_order"


def test_the_apis_own_name_in_a_query_does_not_count(desk: Catalog) -> None:
    assert search(desk, "schedule an Acme meeting").functions[0].name == "meetings.create_meeting"


def test_a_file_name_in_a_query_stands_for_a_file(desk: Catalog) -> None:
    assert search(desk, "attach invoice.pdf to an order").functions[0].name == "orders.upload_order_file"


def test_acting_on_all_things_at_once_prefers_the_bulk_call_and_one_thing_the_single_call(desk: Catalog) -> None:
    assert search(desk, "close all orders at once").functions[0].name == "orders.update_orders"
    assert search(desk, "close an order").functions[0].name == "orders.update_order"
    assert search(desk, "list all orders").functions[0].name == "orders.list_orders"


def test_being_told_when_something_happens_creates_a_webhook(desk: Catalog) -> None:
    for query in ("notify me when an order is paid", "tell my backend whenever a new order comes in"):
        assert search(desk, query).functions[0].name == "webhooks.create_webhook", query


def test_a_phrasal_verb_counts_as_the_verb_it_means_with_its_object_kept_between(shop: Catalog) -> None:
    assert search(shop, "tear down that order").functions[0].name == "orders.delete_order"
    assert search(shop, "set up an order for a customer").functions[0].name == "orders.create_order"
    assert parse_query("turn the alerts off").intents == {"update"}
    assert "alert" in parse_query("turn the alerts off").stems
    assert "update" not in parse_query("alerts we switched off").intents  # a past form describes, not asks


def test_a_phrasal_particle_that_starts_a_place_stays_a_preposition() -> None:
    assert "login" not in parse_query("log time on a ticket").stems
    assert parse_query("kick someone off the call").intents == {"delete"}
    assert parse_query("kick off the nightly build").intents == {"create"}  # start: a new run


def test_asking_whether_something_is_up_or_has_finished_asks_for_its_health_or_status() -> None:
    assert "health" in parse_query("is the server up?").variants
    assert "health" in parse_query("is the API alive").variants
    assert "health" not in parse_query("set up a server").variants
    assert "status" in parse_query("did the nightly run finish").variants
    assert "status" in parse_query("has my rollout completed yet").variants


def test_stopping_others_from_an_action_prevents_it_and_letting_them_shares() -> None:
    assert "prevent" in parse_query("stop anyone from deleting the folder").stems
    assert stem("share") in parse_query("let alice see my wallet").stems


def test_asking_who_one_is_logged_in_as_asks_for_the_caller(shop: Catalog) -> None:
    assert any("me" in concept.variants for concept in parse_query("who is the bot logged in as").concepts)
    assert search(shop, "which account am I logged in as").functions[0].name == "customers.get_me"


def _op(operation_id: str, summary: str) -> dict[str, Any]:
    return {"operationId": operation_id, "tags": ["llm"], "summary": summary}


_NAMESPACE = [{"name": "ns", "in": "path", "required": True, "schema": {"type": "string"}}]
#: A proxy that serves one call at several routes, and a cluster with the same list at two scopes.
ROUTES: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Proxy", "version": "1"},
    "paths": {
        "/chat/completions": {"post": _op("chat", "Chat completion")},
        "/v1/chat/completions": {"post": _op("chat_v1", "Chat completion")},
        "/completions": {"post": _op("complete", "Text completion")},
        "/chat/sessions": {"post": _op("start_chat_session", "Start a chat session")},
        "/pods": {"get": _op("list_pods_everywhere", "List pods")},
        "/namespaces/{ns}/pods": {"parameters": _NAMESPACE, "get": _op("list_pods", "List pods")},
    },
}


def test_other_routes_to_the_same_call_come_after_every_different_call() -> None:
    catalog = build_catalog(load_document(ROUTES))
    names = [function.name for function in search(catalog, "chat completion", limit=4).functions]
    assert names[0] in ("llm.chat", "llm.chat_v1")
    assert {"llm.complete", "llm.start_chat_session"} <= set(names[1:3])
    assert names[3] in ("llm.chat", "llm.chat_v1")
    everything = [function.name for function, _ in SearchIndex(catalog).scored("chat completion")]
    assert {"llm.chat", "llm.chat_v1"} <= set(everything)


def test_the_same_list_at_two_scopes_counts_as_two_calls() -> None:
    catalog = build_catalog(load_document(ROUTES))
    names = [function.name for function in search(catalog, "list pods", limit=2).functions]
    assert sorted(names) == ["llm.list_pods", "llm.list_pods_everywhere"]


#: A team calendar that says "OOO entry" where people say vacation, and says comment as people do.
CALENDAR: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Calendar", "version": "1"},
    "paths": {
        "/ooo_entries": {
            "get": _op("list_ooo_entries", "List OOO entries"),
            "post": _op("create_ooo_entry", "Create an OOO entry"),
        },
        "/tasks/{task}/comments": {
            "parameters": [{"name": "task", "in": "path", "required": True, "schema": {"type": "string"}}],
            "post": _op("create_comment", "Add a comment to a task"),
        },
        "/tasks": {"post": _op("create_task", "Create a task")},
    },
}


def test_a_noun_the_api_does_not_use_finds_the_word_the_api_uses_for_it() -> None:
    catalog = build_catalog(load_document(CALENDAR))
    assert search(catalog, "book a vacation for next week", limit=1).functions[0].name == "llm.create_ooo_entry"
    assert search(catalog, "who is on holiday", limit=1).functions[0].name == "llm.list_ooo_entries"


def test_the_thesaurus_reads_nouns_only_and_never_a_word_the_api_uses_itself() -> None:
    catalog = build_catalog(load_document(CALENDAR))
    # "leave" is time off in the thesaurus, but a task opening with it means the verb.
    names = [function.name for function in search(catalog, "leave a comment on the task", limit=3).functions]
    assert names[0] == "llm.create_comment"
    assert not any("ooo" in name for name in names)
    # A word before its noun is no noun ("a leave request"); the noun is.
    assert stem("leave") not in parse_query("file a leave request").related
    assert stem("leave") in parse_query("file a request for leave").related
    vacations = {"/vacations": {"get": _op("list_vacations", "List vacations")}}
    with_vacations = {**CALENDAR, "paths": {**CALENDAR["paths"], **vacations}}
    both = build_catalog(load_document(with_vacations))
    assert [function.name for function in search(both, "vacations", limit=1).functions] == ["llm.list_vacations"]
    assert all("ooo" not in function.name for function in search(both, "vacations").functions)


def _action(*kinds: str) -> dict[str, Any]:
    return {"type": "object", "required": ["type"], "properties": {"type": {"type": "string", "enum": list(kinds)}}}


#: A cloud whose servers take actions through one call, its body a choice of named action terms.
CLOUD: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Cloud", "version": "1"},
    "paths": {
        "/servers/{id}": {
            "parameters": _ID,
            "get": {"operationId": "getServer", "tags": ["servers"], "summary": "Get a server"},
            "patch": {"operationId": "updateServer", "tags": ["servers"], "summary": "Update a server"},
        },
        "/servers/{id}/actions": {
            "parameters": _ID,
            "post": {
                "operationId": "postServerAction",
                "tags": ["server_actions"],
                "summary": "Initiate an action",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "oneOf": [{"$ref": f"#/components/schemas/{name}"} for name in ("action", "action_2")]
                            }
                        }
                    }
                },
            },
        },
    },
    "components": {"schemas": {"action": _action("reboot", "shutdown"), "action_2": _action("resize")}},
}


def test_a_body_that_is_a_choice_of_terms_is_found_by_the_values_its_terms_allow() -> None:
    catalog = build_catalog(load_document(CLOUD))
    assert search(catalog, "reboot server 42", limit=1).functions[0].name == "server_actions.post_server_action"
    assert search(catalog, "resize a server", limit=1).functions[0].name == "server_actions.post_server_action"
    assert search(catalog, "shut down server 42", limit=1).functions[0].name == "server_actions.post_server_action"


#: An orchestrator whose runs change state through one call: a body field naming a term, whose `type` is an enum term.
RUNS: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Orchestrator", "version": "1"},
    "paths": {
        "/runs/{id}": {
            "parameters": _ID,
            "get": {"operationId": "readRun", "tags": ["runs"], "summary": "Read a run"},
            "delete": {"operationId": "deleteRun", "tags": ["runs"], "summary": "Delete a run"},
        },
        "/runs/{id}/set_state": {
            "parameters": _ID,
            "post": {
                "operationId": "setRunState",
                "tags": ["runs"],
                "summary": "Set run state",
                "requestBody": {
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["state"],
                                "properties": {
                                    "state": {"$ref": "#/components/schemas/StateCreate"},
                                    "force": {"type": "boolean"},
                                },
                            }
                        }
                    }
                },
            },
        },
        "/runs/{id}/resume": {
            "parameters": _ID,
            "post": {"operationId": "resumeRun", "tags": ["runs"], "summary": "Resume a run"},
        },
    },
    "components": {
        "schemas": {
            "StateCreate": {
                "type": "object",
                "properties": {"type": {"$ref": "#/components/schemas/StateType"}, "message": {"type": "string"}},
            },
            "StateType": {"type": "string", "enum": ["SCHEDULED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED"]},
        }
    },
}


def test_a_field_that_names_a_term_is_found_by_the_values_of_that_terms_enum_fields() -> None:
    catalog = build_catalog(load_document(RUNS))
    assert search(catalog, "cancel run 7", limit=1).functions[0].name == "runs.set_run_state"
    assert search(catalog, "mark the run as failed", limit=1).functions[0].name == "runs.set_run_state"


def test_search_is_deterministic_across_runs_and_catalogs() -> None:
    first, second = build_catalog(load_document(SHOP)), build_catalog(load_document(SHOP))
    for query in ("order", "list orders", "customers", "who am I"):
        assert search(first, query).text == search(first, query).text == search(second, query).text


def test_search_breaks_ties_by_function_name(shop: Catalog) -> None:
    scored = SearchIndex(shop).scored("order")
    for (left, left_score), (right, right_score) in itertools.pairwise(scored):
        assert left_score > right_score or (left_score == right_score and left.name < right.name)


# -- what the agent reads ------------------------------------------------------------------------------------------


def test_search_without_query_or_module_lists_modules_with_a_hint(shop: Catalog) -> None:
    result = search(shop)
    lines = result.text.splitlines()
    assert result.modules == shop.modules
    assert result.functions == ()
    assert "Search with a task" in lines[0]
    assert lines[1:] == [module_line(module) for module in shop.modules]


def test_search_with_only_a_module_lists_all_its_functions(shop: Catalog) -> None:
    result = search(shop, module="orders")
    assert result.functions == shop.module("orders").functions
    assert result.text.splitlines() == [
        module_line(shop.module("orders")),
        *(function_line(function) for function in shop.module("orders").functions),
    ]


def test_search_with_only_a_large_module_lists_up_to_the_cap_and_says_how_many_more(github: Catalog) -> None:
    module = github.module("repos")
    assert len(module.functions) > MODULE_LISTING_CAP
    result = search(github, module="repos")
    assert len(result.functions) == MODULE_LISTING_CAP
    assert result.text.splitlines()[-1] == f"… {len(module.functions) - MODULE_LISTING_CAP} more, narrow with a query"


def test_a_blank_query_lists_like_no_query(shop: Catalog) -> None:
    assert search(shop, "   ").text == search(shop).text
    assert search(shop, "", module="orders").text == search(shop, module="orders").text


def test_every_hit_is_one_line_that_starts_with_the_full_function_name(github: Catalog) -> None:
    for query in ("list open pull requests of a repository", "who am I", "star a repository", "delete a gist"):
        result = search(github, query, limit=7)
        lines = result.text.splitlines()
        assert 0 < len(result.functions) <= 7
        assert len(lines) == len(result.functions)
        for line, function in zip(lines, result.functions, strict=True):
            assert line == function_line(function)
            assert line.startswith(function.name + "(")


def test_search_within_a_module_returns_only_that_modules_functions(github: Catalog) -> None:
    result = search(github, "list comments", module="pulls")
    assert result.functions
    assert {function.module for function in result.functions} == {"pulls"}


def test_an_unknown_module_raises_with_the_closest_module_names(github: Catalog) -> None:
    with pytest.raises(UnknownNameError) as error:
        search(github, "merge", module="pull")
    assert "pulls" in error.value.suggestions
    assert "'pull'" in str(error.value)


def test_a_query_without_hits_names_the_closest_modules_never_an_empty_text(shop: Catalog) -> None:
    result = search(shop, "xyzzy plugh")
    assert result.functions == ()
    assert result.modules
    assert "No function matches 'xyzzy plugh'" in result.text
    for module in result.modules:
        assert module_line(module) in result.text.splitlines()


def test_a_query_of_only_stopwords_gets_the_no_hit_text(shop: Catalog) -> None:
    result = search(shop, "the of and")
    assert result.functions == ()
    assert result.text


def test_a_query_without_hits_in_a_module_says_which_module(shop: Catalog) -> None:
    result = search(shop, "customers", module="orders")
    assert result.functions == () or all(function.module == "orders" for function in result.functions)
    assert result.text


def test_a_query_longer_than_the_cap_is_refused_with_what_to_do(shop: Catalog) -> None:
    longest = ("refund an order " * 100)[:MAX_QUERY_CHARS]
    assert search(shop, longest).text
    with pytest.raises(ValueError, match=r"the query is 1,001 characters; say the task in at most 1,000"):
        search(shop, longest + "x")
    assert search(shop, f"  {longest}  ").text  # the blanks around a query do not count


def test_limit_caps_the_hits_and_must_be_positive(github: Catalog) -> None:
    assert len(search(github, "repository", limit=3).functions) == 3
    with pytest.raises(ValueError, match="limit"):
        search(github, "repository", limit=0)


def _answering(operation_id: str, summary: str, path: str, properties: dict[str, Any]) -> dict[str, Any]:
    ok = {"content": {"application/json": {"schema": {"type": "object", "properties": properties}}}}
    return {
        path: {
            "get": {
                "operationId": operation_id,
                "tags": ["drive"],
                "summary": summary,
                "responses": {"200": {"description": "ok", **ok}},
            }
        }
    }


_PLAIN = {"type": "string"}
#: A drive whose account read answers the quota, two levels down, and whose every answer has an owner.
DRIVE: dict[str, Any] = {
    "openapi": "3.1.0",
    "info": {"title": "Drive", "version": "1"},
    "paths": {
        **_answering(
            "getAbout",
            "Get information about the user",
            "/about",
            {
                "owner": _PLAIN,
                "storage": {"type": "object", "properties": {"quota_remaining": {"type": "integer"}, "limit": _PLAIN}},
            },
        ),
        **_answering("getFile", "Get a file", "/files/{id}", {"owner": _PLAIN, "name": _PLAIN}),
        **_answering("listFiles", "List files", "/files", {"owner": _PLAIN, "files": {"type": "array"}}),
        **_answering("getSettings", "Get the settings", "/settings", {"owner": _PLAIN, "theme": _PLAIN}),
        **_answering("listDrives", "List shared drives", "/drives", {"owner": _PLAIN, "drives": {"type": "array"}}),
    },
}


def test_a_function_is_found_by_what_its_answer_holds_a_level_or_two_deep() -> None:
    catalog = build_catalog(load_document(DRIVE))
    assert search(catalog, "how much quota is remaining", limit=1).functions[0].name == "drive.get_about"
    # What the name and summary say still comes first.
    assert search(catalog, "get a file", limit=1).functions[0].name == "drive.get_file"


def test_a_word_in_most_answers_tells_no_function_apart() -> None:
    catalog = build_catalog(load_document(DRIVE))
    assert result_words(catalog.function("drive.get_about"), {}) == [
        stem(word) for word in ("owner", "storage", "quota", "remaining", "limit")
    ]
    owner = SearchIndex(catalog).scored("owner")
    assert owner == [], owner  # only in answers, and in every one of them


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("issues.addLabels", "issues.add_labels"),
        ("octokit.rest.issues.addLabels", "issues.add_labels"),
        ("repos.listForOrg", "repos.list_for_org"),
        ("pulls.requestReviewers", "pulls.request_reviewers"),
    ],
)
def test_a_call_named_in_camel_case_as_a_vendor_sdk_spells_it_is_found_first(
    github: Catalog, query: str, expected: str
) -> None:
    assert search(github, query, limit=5).functions[0].name == expected
