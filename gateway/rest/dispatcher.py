"""Calling catalog functions: validate the args, build the REST request, send it, decode the answer.

Every path into the REST API goes through `Dispatcher`: call_function, promoted tools, composites and scripts.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema

from catalog.errors import UnknownNameError
from catalog.model import Catalog, Function
from catalog.suggestions import unknown_function
from gateway._quick_check import Check, quick_check
from gateway.arguments import argument_problems
from gateway.errors import ArgumentError, RestError, ToolError
from gateway.limits import CALL_TIMEOUT
from gateway.observability import observe_function
from gateway.requests import RestContext
from gateway.rest.request import HttpResponse, build_request
from gateway.rest.transports import Transport
from gateway.validators import validator_for

__all__ = ["BoundInvoker", "CallOutcome", "Dispatcher", "decode_body"]


@dataclass(frozen=True, kw_only=True)
class CallOutcome:
    """The answer of one call: an HTTP response for operations, a JSON value for composites."""

    function: Function
    response: HttpResponse | None = None
    value: Any = None


class Dispatcher:
    """Validates and dispatches function calls with the headers given; one per gateway."""

    def __init__(self, catalog: Catalog, transport: Transport | None, *, timeout: float) -> None:
        self.catalog = catalog
        self.transport = transport
        self.timeout = timeout
        #: Said after a timeout: how else the call could be run (e.g. as a task).
        self.timeout_hint = ""
        self._validators: dict[str, jsonschema.protocols.Validator] = {}
        self._quick: dict[str, Check | None] = {}

    def function(self, name: str) -> Function:
        """The catalog function; ToolError with the closest names when unknown."""
        try:
            return self.catalog.function(name)
        except UnknownNameError as error:
            raise ToolError(unknown_function(self.catalog, name, error.suggestions)) from None

    def validate(self, function: Function, args: Mapping[str, Any]) -> None:
        """ArgumentError naming the missing, unknown or ill-typed arguments (the first few, the rest counted)."""
        name = function.name
        if name not in self._quick:
            self._quick[name] = quick_check(function.input_schema(capped=False))
        quick = self._quick[name]
        if quick is not None and quick(args):
            return
        validator = self._validators.get(name)
        if validator is None:
            schema = function.input_schema(capped=False)
            validator = validator_for(schema)(schema)
            self._validators[name] = validator
        problems = argument_problems(validator, args)
        if problems:
            raise ArgumentError(
                f"Invalid arguments for {function.name}: {problems.text()}. "
                f"Call describe_function({function.name!r}) for the signature.",
                args=problems.args(),
            )

    async def call(
        self, function: Function, args: Mapping[str, Any], context: RestContext, *, validated: bool = False
    ) -> CallOutcome:
        """Validate (unless `validated`) and run one call within the per-call timeout; ToolError on a timeout."""
        observed = observe_function(function)
        if observed is None:
            return await self._call(function, args, context, validated=validated)
        with observed:
            outcome = await self._call(function, args, observed.context(context), validated=validated)
            observed.answered(outcome.response)
            return outcome

    async def _call(
        self, function: Function, args: Mapping[str, Any], context: RestContext, *, validated: bool
    ) -> CallOutcome:
        if not validated:
            self.validate(function, args)
        timeout = CALL_TIMEOUT.get() or self.timeout
        try:
            with anyio.fail_after(timeout):
                if function.composite is not None:
                    composite = function.composite
                    value = await composite.run(BoundInvoker(self, context), composite.decode(args))
                    return CallOutcome(function=function, value=composite.encode(value))
                if self.transport is None:
                    raise ToolError(f"{function.name} cannot be called: the gateway has no app or upstream to call")
                request = build_request(function, args)
                response = await self.transport.send(request, context)
                return CallOutcome(function=function, response=response)
        except TimeoutError:
            raise ToolError(
                f"{function.name} did not answer within {timeout:g} s; try a narrower request or retry later"
                f"{self.timeout_hint}"
            ) from None


class BoundInvoker:
    """The `Invoker` composites and scripts get: calls catalog functions with one request's credentials."""

    def __init__(self, dispatcher: Dispatcher, context: RestContext) -> None:
        self._dispatcher = dispatcher
        self._context = context
        self.calls = 0

    async def call(self, name: str, args: Mapping[str, Any]) -> Any:
        """Call `module.function`; returns parsed JSON (text for text bodies); RestError on an error status."""
        self.calls += 1
        function = self._dispatcher.function(name)
        outcome = await self._dispatcher.call(function, args, self._context)
        if outcome.response is None:
            return outcome.value
        return decode_body(outcome.response, function=function)


def decode_body(response: HttpResponse, *, function: Function) -> Any:
    """The response body as JSON data, text, or bytes; RestError for an error status."""
    body: Any
    media = response.content_type
    if not response.body:
        body = None
    elif response.is_json:
        try:
            body = response.json()
        except ValueError:
            body = response.text
    elif media.startswith("text/") or media in ("application/xml", "application/x-www-form-urlencoded"):
        body = response.text
    else:
        body = response.body
    if response.status >= 400:
        raise RestError(
            f"{function.name} failed: HTTP {response.status} {response.reason}",
            status=response.status,
            body=body,
        )
    return body
