"""Names agents read: snake_case, FastAPI cleanup, path grouping and tool names."""

from __future__ import annotations

import pytest

from catalog.naming import (
    clean_operation_id,
    function_name_from_route,
    is_valid_tool_name,
    path_resource,
    snake_case,
    split_words,
    tool_name,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("listPullRequests", "list_pull_requests"),
        ("list-pull-requests", "list_pull_requests"),
        ("repos/get-content", "repos_get_content"),
        ("GetHTTPServerStatus", "get_http_server_status"),
        ("Pet Store", "pet_store"),
        ("1-Click Applications", "n1_click_applications"),
        ("chat.postMessage", "chat_post_message"),
        ("Café crème", "cafe_creme"),
        ("!!!", "unnamed"),
    ],
)
def test_snake_case_splits_camel_case_punctuation_and_accents(raw: str, expected: str) -> None:
    assert snake_case(raw) == expected


def test_split_words_separates_camel_case_and_acronyms() -> None:
    assert split_words("getOAuthToken_forUser") == ["get", "o", "auth", "token", "for", "user"]


@pytest.mark.parametrize(
    ("operation_id", "method", "path", "expected"),
    [
        ("read_item_items__item_id__get", "get", "/items/{item_id}", "read_item"),
        ("model_list_v1_models_get", "get", "/v1/models", "model_list"),
        ("create_user", "post", "/users", "create_user"),
        ("_users_post", "post", "/users", "_users_post"),
        # Shapes seen in real apps: single underscores, a router prefix missing from the documented path, a
        # route for several methods named after the first, the root path.
        ("list_batches_provider_v1_batches_get", "get", "/{provider}/v1/batches", "list_batches"),
        ("list_batches__provider__v1_batches_get", "get", "/{provider}/v1/batches", "list_batches"),
        ("create_item_items_post", "post", "/api/v1/items", "create_item_items_post"),
        ("create_item_v1_items_post", "post", "/api/v1/items", "create_item"),
        ("model_info_v1_model_info_get", "get", "/model/info", "model_info_v1"),
        ("list_users_users_get", "post", "/users", "list_users"),
        ("read_root__get", "get", "/", "read_root"),
        ("get_model_info_v1_model_info_get", "get", "/v1/model/info", "get_model_info"),
        ("items_get", "get", "/items", "items_get"),
        ("list_pets", "get", "/pets", "list_pets"),
        ("list_items_get", "get", "/items", "list"),
        ("readX_items_get", "get", "/items", "readX"),
        ("exportX__get", "get", "/", "exportX"),
        # What stays whole: an id not ending in a method, a root id without FastAPI's `__`, an id made only of
        # path words (from either end), a remainder without a letter.
        ("read_items_items", "get", "/items", "read_items_items"),
        ("read_root_get", "get", "/", "read_root_get"),
        ("users_items_get", "get", "/items/users/items", "users_items_get"),
        ("users_items_list_get", "get", "/users/items/list", "users_items_list_get"),
        ("2_items_get", "get", "/items", "2_items_get"),
    ],
)
def test_fastapi_route_suffixes_are_stripped_from_operation_ids(
    operation_id: str, method: str, path: str, expected: str
) -> None:
    assert clean_operation_id(operation_id, method=method, path=path) == expected


def test_functions_without_operation_id_are_named_from_the_route() -> None:
    assert function_name_from_route("GET", "/v1/pets/{petId}/photos") == "get_pets_by_pet_id_photos"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("/api/v2/customers/{id}", "customers"),
        ("/2010-04-01/Accounts/{Sid}/Calls.json", "accounts"),
        ("/v1", None),
        ("/{tenant}/things", "things"),
        ("/Accounts.json", "accounts"),
        ("/Accounts.JSON", "accounts"),
    ],
)
def test_path_resource_skips_api_and_version_segments(path: str, expected: str | None) -> None:
    assert path_resource(path) == expected


def test_tool_names_swap_the_dot_for_a_hyphen_and_are_checked() -> None:
    assert tool_name("orders.create") == "orders-create"
    assert is_valid_tool_name("orders-create")
    assert not is_valid_tool_name("orders.create")
    assert not is_valid_tool_name("x" * 65)
