"""Client ID Metadata Documents: a URL as client_id, fetched over TLS from a document server on 127.0.0.1.

The server's certificate names `client.example` and its subdomains; the fetcher under test resolves those names
to 127.0.0.1 and is told to allow that address. Every other test uses the production policy, which refuses such
addresses.
"""

from __future__ import annotations

import contextlib
import datetime
import ipaddress
import logging
import re
import socket
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx2
import pytest
import uvicorn
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from demo import ADMIN_KEY
from gateway.rest.lifespan import app_lifespan
from oauth.addresses import Address, is_public_address
from oauth.cimd import ClientDocuments, FetchBudgets, is_client_id_url
from oauth.errors import ClientDocumentError, ConfigError, ProtocolError
from tests.conftest import free_port
from tests.gateway.conftest import _Uvicorn
from tests.oauth.conftest import Browser, FakeClock, Site, build_site, page_form, query
from tests.oauth.test_attacks import BASE, authorize_url, exchange, new_verifier
from tests.oauth.test_authorize import links, page

pytestmark = pytest.mark.anyio

HOST = "client.example"
CALLBACK = "https://app.client.example/callback"
#: The address of the browser or client whose request makes the server fetch a document.
VISITOR = "198.51.100.7"


def certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for client.example and its subdomains, and its key."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, HOST)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(HOST), x509.DNSName(f"*.{HOST}")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "cert.pem", folder / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


class DocumentServer:
    """Serves client metadata documents over TLS at client.example and its subdomains; `hits` counts the fetches
    of each path. Setting `status` or `body` makes every document answer with it; `stalled` makes every
    document wait for `release`."""

    def __init__(self) -> None:
        self.hits: dict[str, int] = {}
        self.release = anyio.Event()
        self.port = 0
        self.status = 200
        self.body: bytes | None = None
        self.stalled = False

    def url(self, name: str, host: str = HOST) -> str:
        return f"https://{host}:{self.port}/clients/{name}"

    async def serve(self, request: Request) -> Response:
        name = request.path_params["name"]
        self.hits[name] = self.hits.get(name, 0) + 1
        if self.stalled:
            await self.release.wait()
        if self.status != 200:
            return JSONResponse({"detail": "unavailable"}, status_code=self.status)
        if self.body is not None:
            return Response(self.body, media_type="application/json", headers={"cache-control": "max-age=600"})
        if name == "missing.json":
            return JSONResponse({"detail": "Not Found"}, status_code=404)
        document: dict[str, Any] = {
            "client_id": self.url(name, request.url.hostname or HOST),
            "client_name": "Example Agent",
            "redirect_uris": [CALLBACK],
            "token_endpoint_auth_method": "none",
        }
        if name == "mismatch.json":
            document["client_id"] = self.url("someone-else.json")
        elif name == "secret.json":
            document["token_endpoint_auth_method"] = "client_secret_basic"
        elif name == "big.json":
            document["padding"] = "x" * 10_000
        elif name == "slow.json":
            await self.release.wait()
        elif name == "implicit.json":
            document["response_types"] = ["token"]
        elif name == "bad-uri.json":
            document["client_uri"] = "not a url"
        elif name == "no-redirect.json":
            document["redirect_uris"] = []
        elif name == "plain-http.json":
            document["redirect_uris"] = ["http://app.client.example/callback"]
        elif name == "many.json":
            document["redirect_uris"] = [f"{CALLBACK}/{n}" for n in range(21)]
        elif name == "long-name.json":
            document["client_name"] = "E" * 201
        elif name == "nameless.json":
            del document["client_name"]
        elif name == "methodless.json":
            del document["token_endpoint_auth_method"]
        elif name == "holds-secret.json":
            document["client_secret"] = "s3cr3t"
        elif name == "secret-expiry.json":
            document["client_secret_expires_at"] = 0
        elif name == "turns-bad.json":
            # Good when first fetched, then naming another client; never cached, so each use fetches it again.
            if self.hits[name] > 1:
                document["client_id"] = self.url("someone-else.json")
            return JSONResponse(document, headers={"cache-control": "no-store"})
        elif name == "no-store.json":
            return JSONResponse(document, headers={"cache-control": "no-store"})
        return JSONResponse(document, headers={"cache-control": "max-age=600"})


@asynccontextmanager
async def document_server(folder: Path) -> AsyncIterator[tuple[DocumentServer, ssl.SSLContext]]:
    cert, key = certificate(folder)
    documents = DocumentServer()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    documents.port = sock.getsockname()[1]
    app = Starlette(routes=[Route("/clients/{name}", documents.serve)])
    config = uvicorn.Config(
        app,
        log_level="warning",
        ssl_certfile=str(cert),
        ssl_keyfile=str(key),
        lifespan="off",
        timeout_graceful_shutdown=1,
    )
    server = _Uvicorn(config)
    trust = ssl.create_default_context(cafile=str(cert))
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.serve, [sock])
            with anyio.fail_after(10):
                await server.startup_done.wait()
            try:
                yield documents, trust
            finally:
                documents.release.set()
                server.should_exit = True
    finally:
        sock.close()


async def to_loopback(host: str, port: int) -> list[Address]:
    assert host == HOST or host.endswith(f".{HOST}"), host
    return [ipaddress.ip_address("127.0.0.1")]


def fetcher(trust: ssl.SSLContext, **options: Any) -> ClientDocuments:
    return ClientDocuments(resolve=to_loopback, allow_address=lambda address: True, ssl_context=trust, **options)


@asynccontextmanager
async def fetching_site(trust: ssl.SSLContext, **config: Any) -> AsyncIterator[tuple[Site, httpx2.AsyncClient]]:
    """The demo site, fetching metadata documents from the test's document server, and a browser of it; the
    fetcher and the site share the site's clock."""
    clock = FakeClock()
    site = build_site(BASE, clock=clock, documents=fetcher(trust, clock=clock), **config)
    async with (
        app_lifespan(site.app),
        httpx2.AsyncClient(transport=httpx2.ASGITransport(site.app), base_url=BASE) as web,
    ):
        yield site, web
    await site.server.aclose()


async def test_a_metadata_document_client_logs_in_and_its_document_is_fetched_once(tmp_path: Path) -> None:
    async with document_server(tmp_path) as (documents, trust):
        client = documents.url("good.json")
        async with fetching_site(trust) as (_, web):
            verifier = new_verifier()
            consent = await Browser(web).login(authorize_url(client, new_verifier(), redirect_uri=CALLBACK))
            nameless = documents.url("nameless.json")
            unnamed = await Browser(web).login(authorize_url(nameless, new_verifier(), redirect_uri=CALLBACK))
            landed = await Browser(web).authorize(authorize_url(client, verifier, redirect_uri=CALLBACK))
            tokens = await exchange(web, client, query(landed)["code"], verifier, redirect_uri=CALLBACK)
            elsewhere = await web.get(authorize_url(client, verifier, redirect_uri="https://evil.example/cb"))
    # The consent page names the app by its document's client_name and the host that serves the document.
    origin = urlsplit(client).netloc
    assert f'<strong>Example Agent</strong> (from <span class="host">{origin}</span>)' in consent.text
    assert f"<strong>{nameless}</strong> (from" in unnamed.text
    assert tokens.status_code == 200, tokens.text
    assert documents.hits == {"good.json": 1, "nameless.json": 1}
    assert elsewhere.status_code == 400 and "location" not in elsewhere.headers


async def test_a_bad_request_naming_a_metadata_document_client_is_a_page_never_a_redirect(tmp_path: Path) -> None:
    # Anyone can publish a document naming any redirect URI: it vouches for nothing before the person consents.
    async with (
        document_server(tmp_path) as (documents, trust),
        fetching_site(trust, dynamic_registration=False) as (_, web),
    ):
        answer = await web.get(
            authorize_url(documents.url("good.json"), new_verifier(), redirect_uri=CALLBACK, response_type="x")
        )
    assert page(answer) == (
        400,
        "The app's request was refused",
        "unsupported_response_type: response_type must be 'code', got 'x'",
    )
    assert [link.split("?")[0] for link in links(answer)] == [CALLBACK]


async def test_with_registration_turned_off_a_metadata_document_client_still_logs_in(tmp_path: Path) -> None:
    async with (
        document_server(tmp_path) as (documents, trust),
        fetching_site(trust, dynamic_registration=False) as (
            _,
            web,
        ),
    ):
        client, verifier = documents.url("good.json"), new_verifier()
        landed = await Browser(web).authorize(authorize_url(client, verifier, redirect_uri=CALLBACK))
        tokens = await exchange(web, client, query(landed)["code"], verifier, redirect_uri=CALLBACK)
        registration = await web.post("/register", json={"redirect_uris": [CALLBACK]})
        metadata = (await web.get("/.well-known/oauth-authorization-server")).json()
    assert tokens.status_code == 200, tokens.text
    assert registration.status_code in (404, 405)
    assert "registration_endpoint" not in metadata
    assert metadata["client_id_metadata_document_supported"] is True
    assert landed.startswith(CALLBACK) and query(landed)["iss"] == BASE  # RFC 9207


@dataclass
class Refusals:
    """How a client named by a faulty document is refused: the authorization page, the token endpoint's answer,
    and the error the client registry raises."""

    page: httpx2.Response
    token: httpx2.Response
    error: ProtocolError

    def assert_refused(self, description: str) -> None:
        """Each says `description`; the page is no redirect, the others say invalid_client."""
        assert page(self.page) == (400, "This app could not be identified", description)
        assert (self.token.status_code, self.token.json()) == (
            401,
            {"error": "invalid_client", "error_description": description},
        )
        assert (self.error.code, self.error.description) == ("invalid_client", description)


async def refusals(documents: DocumentServer, trust: ssl.SSLContext, name: str) -> Refusals:
    async with fetching_site(trust) as (site, web):
        page = await web.get(authorize_url(documents.url(name), new_verifier(), redirect_uri=CALLBACK))
        token = await exchange(web, documents.url(name), "code", new_verifier(), redirect_uri=CALLBACK)
        with pytest.raises(ProtocolError) as found:
            await site.server.clients.find(documents.url(name), address=VISITOR)
    return Refusals(page=page, token=token, error=found.value)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("mismatch.json", "names client_id {other!r}; it must name its own URL"),
        (
            "secret.json",
            "asks for token_endpoint_auth_method 'client_secret_basic'; this server accepts documents of public "
            "clients ('none') only",
        ),
        ("holds-secret.json", "must not hold a secret"),
        ("secret-expiry.json", "must not hold a secret"),
        ("big.json", "is larger than 5120 bytes"),
    ],
)
async def test_a_document_with_another_client_id_a_secret_or_too_many_bytes_is_refused(
    tmp_path: Path, name: str, problem: str
) -> None:
    async with document_server(tmp_path) as (documents, trust):
        refused = await refusals(documents, trust, name)
    other = documents.url("someone-else.json")
    refused.assert_refused(f"the client metadata document at {documents.url(name)!r} {problem.format(other=other)}")


async def test_a_document_that_turns_bad_while_the_user_logs_in_ends_the_login_saying_why(tmp_path: Path) -> None:
    async with document_server(tmp_path) as (documents, trust):
        client = documents.url("turns-bad.json")
        async with fetching_site(trust) as (_, web):
            login = await web.get(authorize_url(client, new_verifier(), redirect_uri=CALLBACK))
            action, fields = page_form(login)
            sent = await web.post(action, data={**fields, "api_key": ADMIN_KEY})
    other = documents.url("someone-else.json")
    assert login.status_code == 200 and documents.hits == {"turns-bad.json": 2}
    assert page(sent) == (
        400,
        "This app could not be identified",
        f"the client metadata document at {client!r} names client_id {other!r}; it must name its own URL",
    )


async def test_with_documents_turned_off_a_url_client_id_is_an_unknown_app_and_nothing_is_fetched(
    tmp_path: Path,
) -> None:
    async with document_server(tmp_path) as (documents, trust):
        site = build_site(BASE, documents=fetcher(trust), client_metadata_documents=False)
        found = await site.server.clients.find(documents.url("good.json"), address=VISITOR)
        await site.server.aclose()
    assert found is None
    assert documents.hits == {}


async def test_a_document_that_leaves_out_its_auth_method_is_a_public_client(tmp_path: Path) -> None:
    async with document_server(tmp_path) as (documents, trust):
        site = build_site(BASE, documents=fetcher(trust))
        client = await site.server.clients.find(documents.url("methodless.json"), address=VISITOR)
        await site.server.aclose()
    assert client is not None
    assert (client.auth_method, client.source, client.name) == ("none", "document", "Example Agent")
    assert client.redirect_uris == (CALLBACK,)


UNREACHABLE = "could not be fetched; the app's developer must serve it over https from a public address, answering 200"


@pytest.mark.parametrize(
    ("name", "description"),
    [
        ("no-redirect.json", "redirect_uris must list at least one redirect URI"),
        ("many.json", "redirect_uris lists 21 URIs; at most 20 are allowed"),
        (
            "plain-http.json",
            "redirect URI 'http://app.client.example/callback' uses plain http on a host other than localhost; "
            "use https",
        ),
        ("long-name.json", "client_name must be a string of at most 200 characters"),
    ],
)
async def test_a_document_the_client_metadata_rules_refuse_names_its_fault(
    tmp_path: Path, name: str, description: str
) -> None:
    async with document_server(tmp_path) as (documents, trust):
        refused = await refusals(documents, trust, name)
    refused.assert_refused(description)


@pytest.mark.parametrize(("name", "field"), [("implicit.json", "response_types"), ("bad-uri.json", "client_uri")])
async def test_a_document_field_the_oauth_library_refuses_is_named(tmp_path: Path, name: str, field: str) -> None:
    async with document_server(tmp_path) as (documents, trust):
        refused = await refusals(documents, trust, name)
    assert refused.error.description.startswith(f"the field {field!r} is not acceptable: ")
    refused.assert_refused(refused.error.description)


async def test_a_slow_document_is_given_up_on_after_the_time_cap(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    async with document_server(tmp_path) as (documents, trust):
        slow = fetcher(trust, timeout=0.3)
        with pytest.raises(ClientDocumentError) as failed:
            await slow.fetch(documents.url("slow.json"), address=VISITOR)
        await slow.aclose()
    assert failed.value.description == f"the client metadata document at {documents.url('slow.json')!r} {UNREACHABLE}"
    assert "did not arrive within 0.3 s" in caplog.text


@pytest.mark.parametrize(("name", "detail"), [("missing.json", "HTTP 404"), ("closed-port", "ConnectError")])
async def test_a_failed_fetch_shows_the_visitor_a_generic_message_and_the_operator_the_detail(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, name: str, detail: str
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.cimd")
    async with document_server(tmp_path) as (documents, trust):
        url = f"https://{HOST}:{free_port()}/clients/x.json" if name == "closed-port" else documents.url(name)
        async with fetching_site(trust) as (_, web):
            page = await web.get(authorize_url(url, new_verifier(), redirect_uri=CALLBACK))
            token = await exchange(web, url, "code", new_verifier(), redirect_uri=CALLBACK)
    assert page.status_code == 400 and "location" not in page.headers
    assert UNREACHABLE.replace("'", "&#x27;") in page.text
    assert (token.status_code, token.json()["error"]) == (401, "invalid_client")
    assert token.json()["error_description"] == f"the client metadata document at {url!r} {UNREACHABLE}"
    # Without the page's random attribute values (nonces, form tokens) and the URL (its random port), which may
    # hold these short words by chance.
    shown = re.sub(r'="[^"]*"', '=""', page.text).replace(url, "") + token.text.replace(url, "")
    for secret in ("404", "Connect", "refused", "TLS", "certificate"):
        assert secret not in shown, secret
    assert detail in caplog.text and url in caplog.text


async def test_a_failed_fetch_is_remembered_for_a_minute(tmp_path: Path) -> None:
    clock = FakeClock()
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust, clock=clock)
        outcomes = []
        for advance in (0, 59, 2):
            clock.advance(advance)
            with pytest.raises(ClientDocumentError) as failed:
                await documents_fetcher.fetch(documents.url("missing.json"), address=VISITOR)
            outcomes.append((failed.value.description.endswith(UNREACHABLE), documents.hits["missing.json"]))
        await documents_fetcher.aclose()
    assert outcomes == [(True, 1), (True, 1), (True, 2)]


async def test_one_address_fetches_five_documents_from_one_host_a_minute_and_is_told_when_to_try_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.cimd")
    clock = FakeClock()
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust, clock=clock)
        for n in range(5):
            fetched = await documents_fetcher.fetch(documents.url(f"client-{n}.json"), address=VISITOR)
            assert fetched["client_name"] == "Example Agent"
        refusals = []
        for _ in range(3):
            with pytest.raises(ClientDocumentError) as refused:
                await documents_fetcher.fetch(documents.url("client-5.json"), address=VISITOR)
            refusals.append(refused.value)
        cached = await documents_fetcher.fetch(documents.url("client-0.json"), address=VISITOR)
        clock.advance(60)
        later = await documents_fetcher.fetch(documents.url("client-5.json"), address=VISITOR)
        await documents_fetcher.aclose()
    error = refusals[0]
    assert (error.code, error.status, error.retry_after, error.refused_by) == (
        "temporarily_unavailable",
        429,
        60,
        "host",
    )
    assert error.description == (
        f"too many client metadata documents at {HOST!r} were fetched for this address just now; try again in a minute"
    )
    assert documents.hits["client-5.json"] == 1
    assert cached["client_id"] == documents.url("client-0.json")
    assert later["client_id"] == documents.url("client-5.json")
    # The operator is told which budget refused, and whose, once a minute however often it refuses.
    assert [record.getMessage() for record in caplog.records] == [
        f"not fetching the client metadata document {documents.url('client-5.json')} for {VISITOR}: the host "
        f"budget is spent (address {VISITOR} fetched 5 documents from {HOST!r} in 60 s)"
    ]


async def test_the_host_budget_counts_distinct_documents_and_the_address_budget_every_fetch(tmp_path: Path) -> None:
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust)
        # Never cached, so each use fetches it again: from one host, but one document.
        for _ in range(6):
            await documents_fetcher.fetch(documents.url("no-store.json"), address=VISITOR)
        for n in range(4):
            await documents_fetcher.fetch(documents.url(f"client-{n}.json"), address=VISITOR)
        # Ten fetches, five documents: the eleventh fetch is one too many, though of a document fetched already.
        with pytest.raises(ClientDocumentError) as refused:
            await documents_fetcher.fetch(documents.url("no-store.json"), address=VISITOR)
        await documents_fetcher.aclose()
    assert documents.hits["no-store.json"] == 6
    assert refused.value.refused_by == "address"
    assert refused.value.description == (
        "too many client metadata documents were fetched for this address just now; try again in a minute"
    )


# Attacks on the budgets: whoever spends them must not lock anyone else out

ATTACKER = "203.0.113.66"
#: Where an MCP client's backend sends its token requests from.
BACKEND = "192.0.2.10"
PROXY = "10.0.0.1"


def web_from(site: Site, address: str, *, proxy: str | None = None) -> httpx2.AsyncClient:
    """A browser or client of the site at `address`; behind `proxy`, which forwards the address when given."""
    headers = {"x-forwarded-for": address} if proxy else {}
    transport = httpx2.ASGITransport(site.app, client=(proxy or address, 4711))
    return httpx2.AsyncClient(transport=transport, base_url=BASE, headers=headers)


async def name_as_client(web: httpx2.AsyncClient, url: str, endpoint: str) -> httpx2.Response:
    """A request to `endpoint` (authorize or token) naming `url` as its client_id."""
    if endpoint == "token":
        return await exchange(web, url, "some-code", new_verifier(), redirect_uri=CALLBACK)
    return await web.get(authorize_url(url, new_verifier(), redirect_uri=CALLBACK))


@pytest.mark.parametrize("via", ["authorize", "token", "a trusted proxy"])
async def test_an_address_naming_thirty_documents_at_a_host_does_not_stop_another_logging_in_with_the_real_one(
    tmp_path: Path, via: str
) -> None:
    proxy, endpoint = (PROXY if via == "a trusted proxy" else None), ("token" if via == "token" else "authorize")
    async with document_server(tmp_path) as (documents, trust):
        real = documents.url("good.json")
        async with fetching_site(trust, trusted_proxies=("10.0.0.0/8",)) as (site, _):
            async with web_from(site, ATTACKER, proxy=proxy) as attacker:
                sent = [
                    await name_as_client(attacker, documents.url(f"anything-{n}.json"), endpoint) for n in range(30)
                ]
            verifier = new_verifier()
            async with web_from(site, VISITOR, proxy=proxy) as browser:
                landed = await Browser(browser).authorize(authorize_url(real, verifier, redirect_uri=CALLBACK))
            async with web_from(site, BACKEND, proxy=proxy) as backend:
                tokens = await exchange(backend, real, query(landed)["code"], verifier, redirect_uri=CALLBACK)
    fetched = 400 if endpoint == "token" else 200  # a token request with a made-up code is an invalid_grant
    assert [answer.status_code for answer in sent] == [fetched] * 5 + [429] * 25
    refusal = f"too many client metadata documents at {HOST!r} were fetched for this address just now"
    if endpoint == "token":
        assert sent[-1].json() == {
            "error": "temporarily_unavailable",
            "error_description": f"{refusal}; try again in a minute",
        }
    else:
        assert page(sent[-1]) == (429, "This app could not be identified", f"{refusal}; try again in a minute")
    assert sent[-1].headers["retry-after"] == "60"
    assert sorted(name for name in documents.hits if name.startswith("anything-")) == [
        f"anything-{n}.json" for n in range(5)
    ]
    assert tokens.status_code == 200, tokens.text
    assert documents.hits["good.json"] == 1


async def test_one_address_naming_a_hundred_hosts_cannot_spend_the_fetches_of_everyone_else(tmp_path: Path) -> None:
    async with document_server(tmp_path) as (documents, trust):
        async with fetching_site(trust) as (site, _):
            async with web_from(site, ATTACKER) as attacker:
                sent = [
                    await name_as_client(attacker, documents.url(f"x-{n}.json", f"h{n}.{HOST}"), "authorize")
                    for n in range(100)
                ]
            async with web_from(site, VISITOR) as browser:
                login = await browser.get(
                    authorize_url(documents.url("good.json"), new_verifier(), redirect_uri=CALLBACK)
                )
    assert login.status_code == 200 and page_form(login)[0].endswith("/authorize/login")
    assert [answer.status_code for answer in sent] == [200] * 10 + [429] * 90
    assert page(sent[-1]) == (
        429,
        "This app could not be identified",
        "too many client metadata documents were fetched for this address just now; try again in a minute",
    )
    assert len([name for name in documents.hits if name.startswith("x-")]) == 10


@pytest.mark.parametrize(
    ("address", "network"),
    [("203.0.113.{n}", "203.0.113.0/24"), ("2001:db8:7:{n:x}::1", "2001:db8:7::/48")],
    ids=["IPv4 /24", "IPv6 /48"],
)
async def test_the_addresses_of_one_network_together_cannot_spend_the_fetches_of_everyone_else(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, address: str, network: str
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.cimd")
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust)
        outcomes: list[str | None] = []
        for n in range(1, 101):
            try:
                await documents_fetcher.fetch(documents.url("x.json", f"h{n}.{HOST}"), address=address.format(n=n))
                outcomes.append("fetched")
            except ClientDocumentError as refused:
                outcomes.append(refused.refused_by)
        real = await documents_fetcher.fetch(documents.url("good.json"), address=VISITOR)
        await documents_fetcher.aclose()
    assert outcomes == ["fetched"] * 30 + ["network"] * 70
    assert real["client_id"] == documents.url("good.json")
    assert [record.getMessage() for record in caplog.records] == [
        f"not fetching the client metadata document {documents.url('x.json', f'h31.{HOST}')} for "
        f"{address.format(n=31)}: the network budget is spent (network {network} caused 30 fetches in 60 s)"
    ]


async def test_a_document_fetched_before_is_served_while_attackers_from_many_networks_spend_every_fetch(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.cimd")
    clock = FakeClock()
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust, clock=clock)
        url = documents.url("good.json")
        known = await documents_fetcher.fetch(url, address=VISITOR)
        clock.advance(601)  # one second past its max-age
        for n in range(1, 121):
            with contextlib.suppress(ClientDocumentError):
                await documents_fetcher.fetch(documents.url("x.json", f"h{n}.{HOST}"), address=f"203.0.{n % 4}.{n}")
        served = await documents_fetcher.fetch(url, address=VISITOR)
        with pytest.raises(ClientDocumentError) as refused:
            await documents_fetcher.fetch(documents.url("never-seen.json"), address=VISITOR)
        await documents_fetcher.aclose()
    assert (documents.hits["x.json"], documents.hits["good.json"]) == (100, 1)
    assert served == known
    assert (refused.value.refused_by, refused.value.description) == (
        "overall",
        "too many client metadata documents were fetched just now; try again in a minute",
    )
    assert (
        f"serving the client metadata document {url} fetched before, 1 s past its expiry (at most 86400 s): not "
        f"fetching it for {VISITOR}: the overall budget is spent (100 fetches in 60 s)"
    ) in [record.getMessage() for record in caplog.records]


#: Seconds past a document's expiry: just past, just within the default bound of a day, and past it once the
#: failure remembered just before is forgotten.
LATE = (1, 24 * 3600 - 1, 24 * 3600 + 60)


async def test_a_document_fetched_before_stands_in_while_a_budget_refuses_for_a_day_past_its_expiry(
    tmp_path: Path,
) -> None:
    clock = FakeClock()
    expires_at = clock.now + 600
    # Budgets that stay spent for a week: the address's one fetch is the first one.
    budgets = FetchBudgets(window=7 * 24 * 3600, per_host=1, per_address=1, per_network=1, overall=2)
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust, clock=clock, budgets=budgets)
        url = documents.url("good.json")
        await documents_fetcher.fetch(url, address=VISITOR)
        outcomes: list[str | None] = []
        for late in LATE:
            clock.now = expires_at + late
            try:
                outcomes.append((await documents_fetcher.fetch(url, address=VISITOR))["client_id"])
            except ClientDocumentError as refused:
                outcomes.append(refused.refused_by)
        await documents_fetcher.aclose()
    assert outcomes == [url, url, "address"]
    assert documents.hits == {"good.json": 1}


async def fetch_when_late(
    documents_fetcher: ClientDocuments, url: str, clock: FakeClock, expires_at: float
) -> list[Any]:
    """Fetch `url` at each of `LATE` seconds past `expires_at`: the client_id served, or the error's description."""
    outcomes: list[Any] = []
    for late in LATE:
        clock.now = expires_at + late
        try:
            outcomes.append((await documents_fetcher.fetch(url, address=VISITOR))["client_id"])
        except ClientDocumentError as failed:
            outcomes.append(failed.description)
    return outcomes


@pytest.mark.parametrize("failure", ["HTTP 500", "HTTP 503", "HTTP 429", "a timeout", "the server is down"])
async def test_a_document_fetched_before_stands_in_while_fetching_it_again_fails_for_a_day_past_its_expiry(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, failure: str
) -> None:
    caplog.set_level(logging.WARNING, logger="oauth.cimd")
    clock = FakeClock()
    expires_at = clock.now + 600
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust, clock=clock, timeout=0.2)
        url = documents.url("good.json")
        await documents_fetcher.fetch(url, address=VISITOR)
        documents.status = int(failure[5:]) if failure.startswith("HTTP") else 200
        documents.stalled = failure == "a timeout"
        if failure != "the server is down":
            outcomes = await fetch_when_late(documents_fetcher, url, clock, expires_at)
    if failure == "the server is down":
        outcomes = await fetch_when_late(documents_fetcher, url, clock, expires_at)
    await documents_fetcher.aclose()
    assert outcomes == [url, url, f"the client metadata document at {url!r} {UNREACHABLE}"]
    told = [record.getMessage() for record in caplog.records]
    assert [message.split(": it could not be fetched again: ")[0] for message in told[:2]] == [
        f"serving the client metadata document {url} fetched before, {late} s past its expiry (at most 86400 s)"
        for late in LATE[:2]
    ]
    assert told[2].startswith(f"the client metadata document {url} could not be fetched: ")
    assert len(told) == 3


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        pytest.param({"body": b"<html>moved</html>"}, "is not JSON", id="not JSON"),
        pytest.param({"body": b"[]"}, "is not a JSON object", id="not an object"),
        pytest.param({"body": b'{"padding": "' + b"x" * 6000 + b'"}'}, "is larger than 5120 bytes", id="too large"),
        pytest.param({"status": 404}, UNREACHABLE, id="withdrawn (404)"),
        pytest.param({"status": 410}, UNREACHABLE, id="withdrawn (410)"),
    ],
)
async def test_a_document_that_comes_back_invalid_or_withdrawn_is_not_served_from_before(
    tmp_path: Path, change: dict[str, Any], problem: str
) -> None:
    clock = FakeClock()
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust, clock=clock)
        url = documents.url("good.json")
        await documents_fetcher.fetch(url, address=VISITOR)
        clock.advance(601)
        for name, value in change.items():
            setattr(documents, name, value)
        with pytest.raises(ClientDocumentError) as changed:
            await documents_fetcher.fetch(url, address=VISITOR)
        # The copy from before is gone: when the publisher then fails to answer, it does not come back.
        documents.body, documents.status = None, 503
        clock.advance(61)
        with pytest.raises(ClientDocumentError) as failing:
            await documents_fetcher.fetch(url, address=VISITOR)
        await documents_fetcher.aclose()
    assert (changed.value.code, changed.value.description) == (
        "invalid_client",
        f"the client metadata document at {url!r} {problem}",
    )
    assert (failing.value.code, failing.value.description) == (
        "invalid_client",
        f"the client metadata document at {url!r} {UNREACHABLE}",
    )
    assert documents.hits["good.json"] == 3


async def test_a_document_served_with_no_store_is_never_served_from_before(tmp_path: Path) -> None:
    async with document_server(tmp_path) as (documents, trust):
        documents_fetcher = fetcher(trust)
        url = documents.url("no-store.json")
        await documents_fetcher.fetch(url, address=VISITOR)
        documents.status = 503
        with pytest.raises(ClientDocumentError) as failing:
            await documents_fetcher.fetch(url, address=VISITOR)
        await documents_fetcher.aclose()
    assert failing.value.description == f"the client metadata document at {url!r} {UNREACHABLE}"


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"per_network": 100}, "per_network (100), which must stay below overall (100)"),
        ({"per_host": 11}, "from per_host (11) to per_address (10)"),
        ({"window": 0}, "FetchBudgets.window must be a positive number of seconds, got 0"),
        ({"overall": 0}, "FetchBudgets.overall must be a whole number of at least 1, got 0"),
    ],
)
def test_fetch_budgets_that_would_let_one_network_spend_everything_say_what_to_change(
    options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(ConfigError) as refused:
        FetchBudgets(**options)
    assert problem in str(refused.value)


def test_a_negative_stale_bound_says_what_to_give() -> None:
    with pytest.raises(ConfigError) as refused:
        ClientDocuments(stale_if_error=-1)
    assert str(refused.value) == "stale_if_error must be a number of seconds, 0 or more, got -1"


@pytest.mark.parametrize(
    "client_id",
    [
        "https://127.0.0.1/client.json",
        "https://localhost/client.json",
        "https://10.0.0.8/client.json",
        "https://169.254.169.254/latest/meta-data",
        "https://[::1]/client.json",
        "https://[::ffff:192.168.1.1]/client.json",
    ],
)
async def test_documents_on_private_loopback_or_link_local_addresses_are_never_fetched(
    client_id: str, caplog: pytest.LogCaptureFixture
) -> None:
    documents = ClientDocuments()
    with pytest.raises(ClientDocumentError) as refused:
        await documents.fetch(client_id, address=VISITOR)
    await documents.aclose()
    # The visitor is not told what the name resolves to; the operator is.
    assert refused.value.description == f"the client metadata document at {client_id!r} {UNREACHABLE}"
    assert "which is not a public address" in caplog.text


def test_only_https_urls_with_a_path_are_client_id_urls() -> None:
    assert is_client_id_url("https://app.example.com/oauth/client.json")
    for value in (
        "http://app.example.com/client.json",
        "https://app.example.com/",
        "https://app.example.com",
        "https://app.example.com/a/../b",
        "https://user@app.example.com/c",
        "https://app.example.com/c#frag",
        "client-123",
        # URL parsers drop tabs and line breaks silently: such a URL would be fetched, and logged, as it came.
        "https://app.example.com/c\nforged log line",
        "https://app.example.com/c\r\n",
        "https://app.example.com/c\tx",
        "https://app.example.com/c\x1b[2J",
        "https://app.example.com/c d",
    ):
        assert not is_client_id_url(value), value


def test_public_addresses_are_told_from_private_ones() -> None:
    assert is_public_address(ipaddress.ip_address("93.184.216.34"))
    assert is_public_address(ipaddress.ip_address("2606:4700::1111"))
    for private in ("10.1.2.3", "172.16.0.1", "192.168.0.1", "127.0.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0"):  # noqa: S104
        assert not is_public_address(ipaddress.ip_address(private)), private
    for private in ("::1", "fe80::1", "fc00::1", "::ffff:10.0.0.1", "ff02::1"):
        assert not is_public_address(ipaddress.ip_address(private)), private
    # IPv4 inside IPv6 (NAT64, 6to4) is reached as that IPv4 address.
    for embedded in ("64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "2002:a9fe:a9fe::1", "2002:0a00:0001::1"):
        assert not is_public_address(ipaddress.ip_address(embedded)), embedded
    assert is_public_address(ipaddress.ip_address("64:ff9b::5db8:d822"))  # 93.184.216.34
