"""What whoami shows of a `me` answer: credentials left out by name or shape, credentials inside kept values
redacted in place, and fields that only mention a credential shown when their value cannot be one."""

from __future__ import annotations

from typing import Any

import pytest

from gateway.tools.identity import REDACTED, identity_view, looks_secret

DATABASE_URL = "postgres://admin:PASSWORD@db.internal:5432/app"


def test_a_password_in_a_database_url_is_redacted_in_place_keeping_scheme_user_host_port_and_path() -> None:
    view = identity_view({"name": "Grace", "database_url": DATABASE_URL})
    assert view.value == {"name": "Grace", "database_url": "postgres://admin:…@db.internal:5432/app"}
    assert view.redacted == ("database_url",)
    assert view.left_out == ()
    assert REDACTED == "…"


def test_password_changed_at_and_password_needs_reset_are_shown() -> None:
    answer = {"name": "Grace", "password_changed_at": "2026-01-01T00:00:00Z", "password_needs_reset": True}
    view = identity_view(answer)
    assert view.value == answer
    assert view.left_out == ()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("password_changed_at", "2026-01-01T00:00:00Z"),
        ("password_needs_reset", False),
        ("token_count", 3),
        ("tokens_used", 120),
        ("secret_rotated_at", "2026-01-01T00:00:00Z"),
        ("has_password", True),
        ("password_set", False),
        ("token_expires_at", 1767225600),
        ("passwordChangedAt", "2026-01-01T00:00:00+02:00"),
        ("password_expires", "2026-06-30"),
        ("access_token_expires_in", 3600),
        ("tokens", 5000),
        ("password_min_length", 12),
        ("api_key", True),
        ("github_token", None),
        ("otp_enabled", True),
    ],
)
def test_a_credential_word_in_a_name_does_not_hide_a_time_a_boolean_a_count_or_null(name: str, value: Any) -> None:
    assert not looks_secret(name, value)
    assert identity_view({name: value}).value == {name: value}


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("password", "x"),
        ("github_token", "abc"),
        ("password_hash", "$2b$12$abcdefghijklmnopqrstuv"),
        ("password_hash", "5f4dcc3b5aa765d61d8327deb882cf99"),
        ("password", "2026-01-01"),
        ("client_secret", "2026-01-01T00:00:00Z"),
        ("password_set", "false"),
        ("token_expires_at", "soon"),
    ],
)
def test_a_credential_name_hides_a_string_that_is_not_a_time(name: str, value: str) -> None:
    assert looks_secret(name, value)
    view = identity_view({"name": "Grace", name: value})
    assert view.value == {"name": "Grace"}
    assert view.left_out == (name,)


@pytest.mark.parametrize(
    ("name", "value"),
    [("token", 12345678), ("otp", 123456), ("pin", 1234), ("password", 123456), ("otp_code", 654321)],
)
def test_a_credential_name_hides_a_number_unless_the_name_calls_it_a_time_or_a_count(name: str, value: int) -> None:
    assert looks_secret(name, value)
    assert identity_view({name: value}).left_out == (name,)


@pytest.mark.parametrize(
    ("name", "value"),
    [("tokens", [{"id": 1, "name": "ci"}]), ("credentials", {"user": "app"}), ("api_key", 3.5e9)],
)
def test_a_credential_name_hides_objects_lists_and_numbers_it_does_not_call_a_time_or_count(
    name: str, value: Any
) -> None:
    assert identity_view({name: value}).left_out == (name,)


@pytest.mark.parametrize("name", ["ssh_keys", "api_keys", "sessionIds", "apikey", "recovery_codes"])
def test_plural_and_run_together_key_names_are_credentials_like_the_singular_ones(name: str) -> None:
    assert looks_secret(name, ["value-1", "value-2"])


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Server=db;User Id=sa;Password=hunter2;", "Server=db;User Id=sa;Password=…;"),
        ("host=db user=app password=hunter2 dbname=x", "host=db user=app password=… dbname=x"),
        ("host=db password='hunter 2' user=app", "host=db password='…' user=app"),
        ("Driver={ODBC};Pwd={a;b};Uid=sa", "Driver={ODBC};Pwd={…};Uid=sa"),
        ("https://api.example.com/v1?api_key=abc&x=1", "https://api.example.com/v1?api_key=…&x=1"),
        ("https://example.com/callback?token=s3cr3t", "https://example.com/callback?token=…"),
        (
            "jdbc:postgresql://db:5432/app?user=admin&password=hunter2",
            "jdbc:postgresql://db:5432/app?user=admin&password=…",
        ),
        ("Authorization: Bearer xyz", "Authorization: Bearer …"),
        ("authorization: Basic YWRhOnMzY3JldA==", "authorization: Basic …"),
        ('curl -H "X-Api-Key: abc123" https://api.example.com', 'curl -H "X-Api-Key: …" https://api.example.com'),
        ('{"password": "hunter2", "user": "app"}', '{"password": "…", "user": "app"}'),
        ("call it with Bearer abc123def456 please", "call it with Bearer … please"),
        ("redis://:hunter2@cache:6379/0", "redis://:…@cache:6379/0"),
        (
            "mongodb+srv://app:p@ss@cluster0.example.net/db?retryWrites=true",
            "mongodb+srv://app:…@cluster0.example.net/db?retryWrites=true",
        ),
        (
            "https://x-access-token:ghs_0123456789abcdefghij@github.com/o/r.git",
            "https://x-access-token:…@github.com/o/r.git",
        ),
        ("https://ghp_0123456789abcdefghijABCD@github.com/o/r.git", "https://…@github.com/o/r.git"),
        ("next=https://example.com/cb?token=abc&page=2", "next=https://example.com/cb?token=…&page=2"),
        (
            "DefaultEndpointsProtocol=https;AccountName=grace;AccountKey=bXlrZXk=;EndpointSuffix=core.windows.net",
            "DefaultEndpointsProtocol=https;AccountName=grace;AccountKey=…;EndpointSuffix=core.windows.net",
        ),
        ("password={unclosed", "password=…"),
        ("Bearer xyz", "Bearer …"),
        ("send Basic YWRhOnMzY3JldA== with it", "send Basic … with it"),
        (
            "primary postgres://a:one@db1/x, replica postgres://b:two@db2/x",
            "primary postgres://a:…@db1/x, replica postgres://b:…@db2/x",
        ),
    ],
)
def test_a_credential_inside_a_kept_value_is_redacted_in_place(text: str, shown: str) -> None:
    view = identity_view({"name": "Grace", "setting": text})
    assert view.value == {"name": "Grace", "setting": shown}
    assert view.redacted == ("setting",)
    assert view.left_out == ()


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/users/grace",
        "ssh://git@github.com/o/r.git",
        "postgres://db.internal:5432/app",
        "postgres://admin@db.internal:5432/app",
        "https://example.com/search?page=2&sort=name",
        "mailto:grace@example.com",
        "postgres://admin:****@db.internal:5432/app",
        "Password=;User Id=sa",
        "Send a Bearer token in the Authorization header",
        "Basic plan",
        "password_changed_at=2026-01-01T00:00:00Z",
        "Meeting at 10:30, room 4: bring the token count",
        "Grace Hopper",
    ],
)
def test_a_value_without_a_credential_inside_is_kept_as_it_is(text: str) -> None:
    view = identity_view({"setting": text})
    assert view.value == {"setting": text}
    assert view.redacted == ()
    assert view.left_out == ()


def test_redacted_paths_are_dotted_through_objects_and_indexed_through_lists() -> None:
    answer = {
        "name": "Grace",
        "settings": {"dsn": DATABASE_URL, "theme": "dark"},
        "links": ["https://example.com/", "https://example.com/cb?token=abc"],
        "orgs": [{"id": 1, "webhook": "https://hooks.example.com/in?secret=s3"}],
    }
    view = identity_view(answer)
    assert view.redacted == ("settings.dsn", "links[1]", "orgs[0].webhook")
    assert view.value["links"] == ["https://example.com/", "https://example.com/cb?token=…"]
    assert view.value["orgs"][0]["webhook"] == "https://hooks.example.com/in?secret=…"


def test_a_whole_answer_that_is_a_string_names_itself_when_redacted() -> None:
    view = identity_view(DATABASE_URL)
    assert view.value == "postgres://admin:…@db.internal:5432/app"
    assert view.redacted == ("(the whole answer)",)


@pytest.mark.parametrize(
    "value",
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl",
        "sk-live-0123456789abcdefghij",
        "ghp_0123456789abcdefghijABCD",
        "AKIAIOSFODNN7EXAMPLE",
        "$argon2id$v=19$m=65536,t=3,p=4$c2FsdA$aGFzaA",
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIG",
        "Zx81Kq0Lm2Nb3Vc4Xd5Ce6Rf7Tg8Yh9Uj0Ik",
    ],
)
def test_a_value_shaped_like_a_credential_is_left_out_whatever_its_field_is_called(value: str) -> None:
    view = identity_view({"name": "Grace", "notes": value, "list": [value]})
    assert view.value == {"name": "Grace", "list": [None]}
    assert view.left_out == ("notes", "list[0]")
    assert view.redacted == ()


def test_fields_the_operator_chose_are_shown_and_the_rest_is_left_out() -> None:
    view = identity_view({"name": "Grace", "settings": {"theme": "dark"}, "api_token": "t"}, ["settings.theme"])
    assert view.value == {"settings": {"theme": "dark"}}
    assert view.left_out == ("name", "api_token")
    assert view.chosen
