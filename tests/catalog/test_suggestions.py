"""What an unknown function name suggests: a slip of a name, the function at a route, an SDK's name for a call."""

from __future__ import annotations

import pytest

from catalog.model import Catalog
from catalog.suggestions import closest_functions, unknown_function
from tests.corpus import corpus_catalog


@pytest.fixture(scope="module")
def github() -> Catalog:
    return corpus_catalog("github-api.github.com.json")


@pytest.fixture(scope="module")
def stripe() -> Catalog:
    return corpus_catalog("stripe-spec3.yaml")


def names(catalog: Catalog, name: str) -> list[str]:
    return [function.name for function in closest_functions(catalog, name)]


def test_a_slip_of_a_name_suggests_that_name_first_and_only_near_spellings(github: Catalog) -> None:
    assert names(github, "pulls.get_pul")[0] == "pulls.get"
    assert names(github, "repos.get_contnet")[0] == "repos.get_content"
    # A name without its module is compared with names without theirs.
    assert names(github, "list_pull")[0] == "pulls.list"


@pytest.mark.parametrize(
    ("sdk_name", "meant"),
    [
        ("repos.getContent", "repos.get_content"),
        ("octokit.rest.repos.listForOrg", "repos.list_for_org"),
        ("issues.createComment", "issues.create_comment"),
        ("git.getRef", "git.get_ref"),
    ],
)
def test_an_sdk_method_name_suggests_the_function_it_names(github: Catalog, sdk_name: str, meant: str) -> None:
    assert names(github, sdk_name)[0] == meant


@pytest.mark.parametrize(
    ("sdk_name", "meant"),
    [
        # Stripe's SDKs name calls by the path's resources; the document's names are its routes.
        ("customers.listPaymentMethods", "payment_methods.get_customers_customer_payment_methods"),
        ("stripe.Customer.list_payment_methods", "payment_methods.get_customers_customer_payment_methods"),
        ("PaymentIntent.confirm", "payment_intents.post_payment_intents_intent_confirm"),
        ("paymentIntents.create", "payment_intents.post_payment_intents"),
    ],
)
def test_an_sdk_name_that_follows_the_path_finds_the_operation_at_that_path(
    stripe: Catalog, sdk_name: str, meant: str
) -> None:
    assert meant in names(stripe, sdk_name)[:2]


def test_a_route_suggests_the_functions_at_it_the_most_literal_first(github: Catalog, stripe: Catalog) -> None:
    assert names(github, "GET /repos/{owner}/{repo}/pulls") == ["pulls.list"]
    assert names(github, "/repos/octo/hello/pulls")[:2] == ["pulls.list", "pulls.create"]
    # Below the server's base path, with values in place of parameters.
    assert names(stripe, "POST https://api.stripe.com/v1/charges/ch_1/refunds") == [
        "charges.post_charges_charge_refunds"
    ]
    assert names(stripe, "GET /v1/customers/cus_123/payment_methods")[0] == (
        "payment_methods.get_customers_customer_payment_methods"
    )


def test_a_name_like_no_function_suggests_nothing(github: Catalog) -> None:
    assert names(github, "zzzzqqq") == []
    assert names(github, "") == []
    assert names(github, "/") == []


def test_a_very_long_name_is_answered_quickly_from_its_start(github: Catalog) -> None:
    assert len(closest_functions(github, "repos.get_content" + "x" * 10_000)) <= 5


def test_the_unknown_function_message_lists_the_closest_with_their_signatures(github: Catalog) -> None:
    said = unknown_function(github, "repos.getContent", names(github, "repos.getContent")[:2])
    first, second, third, last = said.split("\n")
    assert first == "Unknown function 'repos.getContent'. The closest:"
    assert second.startswith("- repos.get_content(owner: string, repo: string, path: string")
    assert second.endswith("[read]") and third.startswith("- repos.")
    assert last == "Call search_functions to find others."
    assert unknown_function(github, "zz", []) == "Unknown function 'zz'. Call search_functions to find functions."
