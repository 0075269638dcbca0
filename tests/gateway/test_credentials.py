"""Auth functions turn the MCP request's bearer token into the headers the REST API authenticates with, refuse
a token that cannot make them with a 401 challenge, and refuse at start-up a configuration that cannot work."""

from __future__ import annotations

import base64
import re

import pytest

from gateway.errors import ConfigError, CredentialError, UnavailableError
from gateway.rest.credentials import (
    Authentication,
    AuthFunc,
    Credentials,
    bearer_passthrough,
    bearer_to_headers,
    header_templates,
    refusal,
)
from oauth.resource import ScopedHeaders

pytestmark = pytest.mark.anyio

KEY_SECRET_CHALLENGE = 'Bearer error="invalid_token", error_description="expected key:secret"'


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def refused(auth: AuthFunc, token: str) -> CredentialError:
    with pytest.raises(CredentialError) as raised:
        await auth(token)
    return raised.value


# The default: the token as it came


async def test_the_default_forwards_the_token_as_a_bearer_authorization() -> None:
    assert await bearer_passthrough()("t0k.en") == {"authorization": "Bearer t0k.en"}


@pytest.mark.parametrize("token", [None, ""])
async def test_without_a_token_the_default_sends_no_header(token: str | None) -> None:
    assert await bearer_passthrough()(token) == {}


# key:secret split into two headers


async def test_a_key_secret_token_is_split_at_its_first_colon_into_two_headers() -> None:
    auth = bearer_to_headers("X-Key", "X-Secret")
    assert await auth("k1:s:2") == {"X-Key": "k1", "X-Secret": "s:2"}


@pytest.mark.parametrize("token", [None, ""])
async def test_without_a_token_the_split_sends_no_header(token: str | None) -> None:
    assert await bearer_to_headers("X-Key", "X-Secret")(token) == {}


@pytest.mark.parametrize("token", ["nocolon", ":secret", "key:"])
async def test_a_token_that_is_not_key_colon_secret_is_refused_naming_both_headers(token: str) -> None:
    error = await refused(bearer_to_headers("X-Key", "X-Secret"), token)
    assert str(error) == "the bearer token must be 'key:secret' for this API (X-Key and X-Secret)"
    assert error.www_authenticate == KEY_SECRET_CHALLENGE


@pytest.mark.parametrize("names", [("", "X-Secret"), ("X-Key", ""), ("X:Key", "S"), ("K", "X Secret"), ("K", "S\r\n")])
def test_header_names_with_separators_or_none_at_all_are_refused_at_start_up(names: tuple[str, str]) -> None:
    bad = next(name for name in names if not name or any(char in name for char in ": \r\n"))
    with pytest.raises(ConfigError) as raised:
        bearer_to_headers(*names)
    assert str(raised.value) == f"bearer_to_headers needs two header names, got {bad!r}"


# Header templates


async def test_a_token_template_puts_the_token_in_the_named_header() -> None:
    assert await header_templates(["X-API-Key: {token}"])("abc") == {"X-API-Key": "abc"}


async def test_templates_keep_their_literal_text_and_trim_the_spaces_around_name_and_value() -> None:
    auth = header_templates(["  Authorization :  Token {token}  ", "X-Client: gateway {{v1}}"])
    assert await auth("abc") == {"Authorization": "Token abc", "X-Client": "gateway {v1}"}


async def test_basic_is_the_whole_token_base64_encoded_as_rfc_7617_says() -> None:
    auth = header_templates(["Authorization: Basic {basic}"])
    headers = await auth("alice:pa:ss wörd")
    assert headers == {"Authorization": "Basic " + base64.b64encode("alice:pa:ss wörd".encode()).decode()}


async def test_key_and_secret_split_the_token_at_its_first_colon() -> None:
    auth = header_templates(["X-Key: {key}", "X-Secret: {secret}", "X-Both: {key}/{secret}"])
    assert await auth("id:se:cret") == {"X-Key": "id", "X-Secret": "se:cret", "X-Both": "id/se:cret"}


@pytest.mark.parametrize("templates", [["X-Key: {key}"], ["X-Secret: {secret}"], ["X-A: {token}", "X-B: {key}"]])
@pytest.mark.parametrize("token", ["nocolon", ":secret", "key:"])
async def test_a_template_that_needs_key_or_secret_refuses_a_token_without_both(
    templates: list[str], token: str
) -> None:
    error = await refused(header_templates(templates), token)
    assert str(error) == "the bearer token must be 'key:secret' for this API"
    assert error.www_authenticate == KEY_SECRET_CHALLENGE


@pytest.mark.parametrize("token", ["nocolon", ":secret", "key:"])
async def test_templates_that_need_no_split_take_any_token(token: str) -> None:
    auth = header_templates(["X-API-Key: {token}", "Authorization: Basic {basic}"])
    assert (await auth(token))["X-API-Key"] == token


@pytest.mark.parametrize("token", [None, ""])
async def test_without_a_token_templates_send_no_header(token: str | None) -> None:
    assert await header_templates(["X-Key: {key}"])(token) == {}


@pytest.mark.parametrize("token", ["a\nb", "a\rb", "a\x00b", "a\x1fb", "a\x7fb"])
async def test_a_token_with_control_characters_is_refused_rather_than_split_into_headers(token: str) -> None:
    error = await refused(header_templates(["X-API-Key: {token}"]), token)
    assert str(error) == "the bearer token holds characters no header can carry"
    assert error.www_authenticate == "Bearer"


async def test_a_control_character_is_refused_only_where_a_header_would_carry_it_raw() -> None:
    # base64 carries any byte; a {token} header next to it would not, and then nothing is sent at all.
    assert await header_templates(["Authorization: Basic {basic}"])("a\tb") == {
        "Authorization": "Basic " + base64.b64encode(b"a\tb").decode()
    }
    await refused(header_templates(["Authorization: Basic {basic}", "X-Raw: {token}"]), "a\tb")


@pytest.mark.parametrize(
    ("template", "said"),
    [
        ("X-API-Key {token}", "header template 'X-API-Key {token}' must be 'Name: value', e.g. 'X-API-Key: {token}'"),
        ("Bad Name: {token}", "header template 'Bad Name: {token}' must be 'Name: value', e.g. 'X-API-Key: {token}'"),
        ("X-Key:   ", "header template 'X-Key:   ' must be 'Name: value', e.g. 'X-API-Key: {token}'"),
        (": {token}", "header template ': {token}' must be 'Name: value', e.g. 'X-API-Key: {token}'"),
        ("X-Key: {token", "header template 'X-Key: {token': expected '}' before end of string"),
        (
            "X-Key: {password}",
            "header template 'X-Key: {password}' uses 'password'; the placeholders are {token}, {key}, {secret} and "
            "{basic}",
        ),
        (
            "X-Key: {user}:{pass} {}",
            "header template 'X-Key: {user}:{pass} {}' uses '', 'pass', 'user'; the placeholders are {token}, {key}, "
            "{secret} and {basic}",
        ),
    ],
)
def test_a_template_that_cannot_work_is_refused_at_start_up_saying_why(template: str, said: str) -> None:
    with pytest.raises(ConfigError) as raised:
        header_templates([template])
    assert str(raised.value) == said


def test_a_later_bad_template_is_refused_too() -> None:
    with pytest.raises(ConfigError, match=re.escape("'Nope'")):
        header_templates(["X-API-Key: {token}", "Nope"])


def test_one_string_instead_of_a_list_is_refused_saying_so() -> None:
    with pytest.raises(ConfigError) as raised:
        header_templates("X-API-Key: {token}")
    assert str(raised.value) == "header templates are a list, e.g. ['X-API-Key: {token}'], not one string"


def test_an_empty_list_of_templates_is_refused() -> None:
    with pytest.raises(ConfigError) as raised:
        header_templates([])
    assert str(raised.value) == "give at least one header template, e.g. 'X-API-Key: {token}'"


# Refusals from auth functions that know nothing of the gateway


class TokenRefused(Exception):
    """What an OAuth library raises: a message and the challenge to answer with."""

    def __init__(self, message: str, www_authenticate: object) -> None:
        super().__init__(message)
        self.www_authenticate = www_authenticate


def test_a_credential_error_is_its_own_refusal() -> None:
    error = CredentialError("expired", www_authenticate='Bearer error="invalid_token"')
    assert refusal(error) is error


def test_an_exception_carrying_a_challenge_is_answered_as_a_credential_error() -> None:
    answer = refusal(TokenRefused("token expired", 'Bearer error="invalid_token"'))
    assert isinstance(answer, CredentialError)
    assert (str(answer), answer.www_authenticate) == ("token expired", 'Bearer error="invalid_token"')


@pytest.mark.parametrize("error", [ValueError("boom"), TokenRefused("odd", None), TokenRefused("odd", 401)])
def test_other_exceptions_are_not_refusals_but_failures(error: Exception) -> None:
    assert refusal(error) is None


# The auth function applied to a request: its credentials, with the grant they carry


class Scoped(dict[str, str]):
    """Headers with a grant, as `oauth.ScopedHeaders` are."""

    def __init__(self, headers: dict[str, str], scopes: object, client_id: object) -> None:
        super().__init__(headers)
        self.scopes = scopes
        self.client_id = client_id


def test_credentials_keep_the_headers_and_the_grant_they_carry() -> None:
    made = Credentials.of(Scoped({"authorization": "Bearer k"}, ("orders:read", "orders:read"), "claude"))
    assert dict(made) == {"authorization": "Bearer k"}
    assert (made.scopes, made.client_id) == (frozenset({"orders:read"}), "claude")


@pytest.mark.parametrize("scopes", [None, "orders:read", 7])
def test_credentials_without_a_collection_of_scopes_carry_none(scopes: object) -> None:
    made = Credentials.of(Scoped({"x-key": "k"}, scopes, 12))
    assert (made.scopes, made.client_id) == (None, None)


def test_plain_headers_carry_no_grant() -> None:
    made = Credentials.of({"x-key": "k"})
    assert (dict(made), made.scopes, made.client_id) == ({"x-key": "k"}, None, None)
    assert (made.subject, made.login) == (None, None)


def test_credentials_keep_the_person_and_the_login_an_oauth_token_names_and_nothing_that_is_not_text() -> None:
    named = ScopedHeaders({"authorization": "Bearer p"}, ("a",), "claude", subject="idp#bob", login="l1")
    assert (Credentials.of(named).subject, Credentials.of(named).login) == ("idp#bob", "l1")
    odd = Scoped({"x-key": "k"}, ("a",), "claude")
    odd.subject, odd.login = 7, ""  # type: ignore[attr-defined]
    assert (Credentials.of(odd).subject, Credentials.of(odd).login) == (None, None)


class Challenging(Scoped):
    """Headers with a grant and its own step-up challenge, as `oauth.ScopedHeaders` have."""

    def insufficient_scope(self, needed: object) -> object:
        return Challenge(f"Bearer realm=test, scope={needed!r}")


class Challenge:
    """A challenge that is not a str until asked."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def test_credentials_ask_for_more_scopes_with_the_challenge_of_the_grant_they_came_with() -> None:
    made = Credentials.of(Challenging({"x-key": "k"}, ("a",), "claude"))
    assert made.insufficient_scope(("b", "c")) == "Bearer realm=test, scope=('b', 'c')"
    assert type(made.insufficient_scope(("b",))) is str


def test_credentials_without_a_challenge_of_their_own_ask_for_the_scopes_held_and_those_needed() -> None:
    held = Credentials({"x-key": "k"}, ["b", "a"])
    assert held.insufficient_scope(["c", "a"]) == 'Bearer error="insufficient_scope", scope="a b c"'
    assert Credentials({"x-key": "k"}).insufficient_scope(["c"]) == 'Bearer error="insufficient_scope", scope="c"'
    assert Credentials.of(Scoped({}, ("a",), None)).insufficient_scope(["b"]) == (
        'Bearer error="insufficient_scope", scope="a b"'
    )


def test_an_insufficient_scope_attribute_that_cannot_be_called_is_no_challenge() -> None:
    grant = Scoped({"x-key": "k"}, ("a",), None)
    grant.insufficient_scope = "not callable"  # type: ignore[attr-defined]
    assert Credentials.of(grant).insufficient_scope(["b"]) == 'Bearer error="insufficient_scope", scope="a b"'


@pytest.mark.parametrize(
    ("authorization", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer  abc ", "abc"),
        ("Basic abc", None),
        ("Bearer", None),
        ("Bearer   ", None),
        ("", None),
    ],
)
async def test_authentication_reads_only_a_well_formed_bearer_token(authorization: str, token: str | None) -> None:
    seen: list[str | None] = []

    async def auth(given: str | None) -> dict[str, str]:
        seen.append(given)
        return {}

    await Authentication(auth)({"authorization": authorization} if authorization else {})
    assert seen == [token]


async def test_authentication_answers_the_auth_functions_headers_as_credentials() -> None:
    made = await Authentication(bearer_passthrough())({"authorization": "Bearer t"})
    assert isinstance(made, Credentials) and dict(made) == {"authorization": "Bearer t"}


async def test_a_refusal_of_another_package_becomes_a_credential_error_with_its_challenge() -> None:
    class Refused(Exception):
        www_authenticate = 'Bearer error="invalid_token"'

    async def auth(token: str | None) -> dict[str, str]:
        raise Refused("the token expired")

    with pytest.raises(CredentialError) as raised:
        await Authentication(auth).of_token("t")
    assert (str(raised.value), raised.value.www_authenticate) == ("the token expired", 'Bearer error="invalid_token"')


async def test_a_credential_error_is_raised_as_it_is() -> None:
    error = CredentialError("no", www_authenticate="Bearer realm=x")

    async def auth(token: str | None) -> dict[str, str]:
        raise error

    with pytest.raises(CredentialError) as raised:
        await Authentication(auth).of_token(None)
    assert raised.value is error


async def test_an_auth_function_that_fails_is_the_servers_fault_not_a_refusal_of_the_token() -> None:
    # No 401 (a client would drop a good token and send the person through a new login): the exception goes up as
    # it is, for the transport to answer 500 and log.
    failure = RuntimeError("database down: password=hunter2")

    async def auth(token: str | None) -> dict[str, str]:
        raise failure

    with pytest.raises(RuntimeError) as raised:
        await Authentication(auth).of_token("t")
    assert raised.value is failure


class StoreDown(Exception):
    """As another package says its store cannot answer now (e.g. oauth.errors.StoreUnavailableError)."""

    retry_after = 7


async def test_an_auth_function_that_cannot_check_the_token_now_is_unavailable_with_when_to_retry() -> None:
    async def auth(token: str | None) -> dict[str, str]:
        raise StoreDown("the token store is unavailable; retry shortly")

    with pytest.raises(UnavailableError) as raised:
        await Authentication(auth).of_token("t")
    assert str(raised.value) == "the token store is unavailable; retry shortly"
    assert raised.value.retry_after == 7


async def test_the_gateways_own_unavailable_error_is_raised_as_it_is() -> None:
    error = UnavailableError("down", retry_after=3)

    async def auth(token: str | None) -> dict[str, str]:
        raise error

    with pytest.raises(UnavailableError) as raised:
        await Authentication(auth).of_token("t")
    assert raised.value is error


async def test_an_exception_whose_retry_after_is_not_a_number_is_a_failure_not_an_outage() -> None:
    class Odd(Exception):
        retry_after = "soon"

    async def auth(token: str | None) -> dict[str, str]:
        raise Odd("odd")

    with pytest.raises(Odd):
        await Authentication(auth).of_token("t")
