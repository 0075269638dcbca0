"""Calling catalog functions: validate the args, build the REST request, send it, decode the answer.

Every path into the REST API goes through `Dispatcher`: call_function, promoted tools, composites and scripts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import jsonschema

from catalog.errors import UnknownNameError, shown
from catalog.model import Catalog, Function
from gateway.dispatch import HttpResponse, Transport, build_request
from gateway.errors import ArgumentError, RestError, ToolError

__all__ = ["BoundCaller", "CallOutcome", "Dispatcher", "schema_message"]


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
        self._validators: dict[str, jsonschema.protocols.Validator] = {}

    def function(self, name: str) -> Function:
        """The catalog function; ToolError with the closest names when unknown."""
        try:
            return self.catalog.function(name)
        except UnknownNameError as error:
            hint = f" Did you mean {', '.join(error.suggestions)}?" if error.suggestions else ""
            raise ToolError(f"Unknown function {shown(name)}.{hint} Call search_functions to find functions.") from None

    def validate(self, function: Function, args: Mapping[str, Any]) -> None:
        """ArgumentError naming every missing, unknown or ill-typed argument."""
        validator = self._validators.get(function.name)
        if validator is None:
            validator = jsonschema.Draft202012Validator(function.input_schema(capped=False))
            self._validators[function.name] = validator
        problems: list[str] = []
        names: list[str] = []
        for error in sorted(validator.iter_errors(dict(args)), key=lambda e: (list(e.absolute_path), e.message)):
            if error.validator == "required" and not error.absolute_path:
                listed: Any = error.validator_value
                missing = [name for name in listed if name not in args]
                problems.extend(f"missing required argument {name!r}" for name in missing)
                names.extend(missing)
            elif error.validator == "additionalProperties" and not error.absolute_path:
                extra = [name for name in args if name not in function.input_schema(capped=False)["properties"]]
                problems.extend(f"unknown argument {shown(name)}" for name in extra)
                names.extend(extra)
            else:
                where = ".".join(str(part) for part in error.absolute_path) or "args"
                problems.append(f"argument {where!r}: {schema_message(error)}")
                names.append(str(error.absolute_path[0]) if error.absolute_path else "args")
        if problems:
            raise ArgumentError(
                f"Invalid arguments for {function.name}: {'; '.join(problems)}. "
                f"Call describe_function({function.name!r}) for the signature.",
                args=names,
            )

    async def call(
        self, function: Function, args: Mapping[str, Any], headers: Sequence[tuple[str, str]]
    ) -> CallOutcome:
        """Validate and run one call within the per-call timeout; ToolError on a timeout."""
        self.validate(function, args)
        try:
            with anyio.fail_after(self.timeout):
                if function.composite is not None:
                    composite = function.composite
                    value = await composite.run(BoundCaller(self, headers), composite.decode(args))
                    return CallOutcome(function=function, value=composite.encode(value))
                if self.transport is None:
                    raise ToolError(f"{function.name} cannot be called: the gateway has no app or upstream to call")
                request = build_request(function, args)
                response = await self.transport.send(request, headers)
                return CallOutcome(function=function, response=response)
        except TimeoutError:
            raise ToolError(
                f"{function.name} did not answer within {self.timeout:g} s; try a narrower request or retry later"
            ) from None


class BoundCaller:
    """The `Caller` composites and scripts get: calls catalog functions with one request's credentials."""

    def __init__(self, dispatcher: Dispatcher, headers: Sequence[tuple[str, str]]) -> None:
        self._dispatcher = dispatcher
        self._headers = headers
        self.calls = 0

    async def call(self, name: str, args: Mapping[str, Any]) -> Any:
        """Call `module.function`; returns parsed JSON (text for text bodies); RestError on an error status."""
        self.calls += 1
        function = self._dispatcher.function(name)
        outcome = await self._dispatcher.call(function, args, self._headers)
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


#: How much of an offending value an argument error quotes.
_VALUE_CHARS = 60


def schema_message(error: jsonschema.ValidationError, *, limit: int = 300) -> str:
    """The validator's message with a long offending value cut short, its reason kept ("'aaa…' is too long")."""
    message = error.message
    value = repr(error.instance)
    if len(value) > _VALUE_CHARS and value in message:
        message = message.replace(value, f"{value[:_VALUE_CHARS]}… ({len(value):,} characters)", 1)
    return message if len(message) <= limit else message[: limit - 1] + "…"
