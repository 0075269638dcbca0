"""Our values on MCP's wire: the one encoder of tool results and content blocks, tools as tools/list shows them,
and the MCP SDK handlers of resources, prompts and completions (`ResourceSet` and `PromptSet` on the wire).

`call_result` turns a `ToolResult` into the wire `CallToolResult` (camelCase JSON data); every path that answers a
tool call (the SDK's handler, the HTTP transport's lean paths, tasks) encodes with it. `resource_prompt_handlers`
gives the `on_*` keyword arguments of the SDK's low-level `Server`; registering a handler is what declares a
capability (`resources` with `subscribe`, `prompts`, `completions`), so only what an endpoint serves is declared. A
`RequestError` becomes JSON-RPC -32602 with its message and `data` (SEP-2164 puts the URI of an unknown resource
there).
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from gateway.errors import RequestError
from gateway.mcp.listing import Completion
from gateway.mcp.prompts import Prompt, PromptSet
from gateway.mcp.resources import ResourceContents, ResourceEntry, ResourceSet, ResourceTemplate
from gateway.mcp.toolspec import Content, ImageContent, TextContent, ToolResult, ToolSpec
from gateway.policy import CallerPolicy

__all__ = ["call_result", "content_block", "resource_prompt_handlers", "wire_result", "wire_tool"]

CallerOf = Callable[[ServerRequestContext[Any]], CallerPolicy]
"""The caller policy of an SDK request (built once per request by the transport)."""


def _refused(error: RequestError) -> MCPError:
    return MCPError(code=types.INVALID_PARAMS, message=str(error), data=error.data or None)


def resource_prompt_handlers(
    resources: ResourceSet | None, prompts: PromptSet | None, caller_of: CallerOf
) -> dict[str, Any]:
    """The `Server(...)` handler arguments for `resources` and `prompts` (either may be None: not served); each
    answers as the request's caller policy says."""
    handlers: dict[str, Any] = {}
    if resources is not None:
        handlers.update(_resource_handlers(resources, caller_of))
    if prompts is not None:
        handlers.update(_prompt_handlers(prompts, caller_of))
    if resources is not None or prompts is not None:
        handlers["on_completion"] = _completion_handler(resources, prompts, caller_of)
    return handlers


def _resource_handlers(resources: ResourceSet, caller_of: CallerOf) -> dict[str, Any]:
    async def on_list_resources(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        try:
            entries, cursor = resources.list_page(params.cursor if params is not None else None, caller_of(ctx))
        except RequestError as error:
            raise _refused(error) from None
        return types.ListResourcesResult(resources=[_wire_entry(entry) for entry in entries], next_cursor=cursor)

    async def on_list_resource_templates(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        try:
            templates, cursor = resources.templates_page(params.cursor if params is not None else None)
        except RequestError as error:
            raise _refused(error) from None
        return types.ListResourceTemplatesResult(
            resource_templates=[_wire_template(template) for template in templates], next_cursor=cursor
        )

    async def on_read_resource(
        ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        try:
            contents = await resources.read(params.uri, caller_of(ctx))
        except RequestError as error:
            raise _refused(error) from None
        return types.ReadResourceResult(contents=[_wire_contents(contents)])

    async def on_subscribe(ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
        # The resources never change while the server runs, so a subscription is honoured by never notifying;
        # it is refused for a URI the server does not serve, or does not serve this caller.
        await _known(params.uri, caller_of(ctx))
        return types.EmptyResult()

    async def on_unsubscribe(
        ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        return types.EmptyResult()

    async def _known(uri: str, caller: CallerPolicy) -> None:
        try:
            await resources.read(uri, caller)
        except RequestError:
            pass
        else:
            return
        raise MCPError(
            code=types.INVALID_PARAMS,
            message=f"resource {uri!r} not found; resources/list shows the resources to subscribe to",
            data={"uri": uri},
        )

    return {
        "on_list_resources": on_list_resources,
        "on_list_resource_templates": on_list_resource_templates,
        "on_read_resource": on_read_resource,
        "on_subscribe_resource": on_subscribe,
        "on_unsubscribe_resource": on_unsubscribe,
    }


def _prompt_handlers(prompts: PromptSet, caller_of: CallerOf) -> dict[str, Any]:
    async def on_list_prompts(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        try:
            listed, cursor = prompts.list_page(params.cursor if params is not None else None)
        except RequestError as error:
            raise _refused(error) from None
        return types.ListPromptsResult(prompts=[_wire_prompt(prompt) for prompt in listed], next_cursor=cursor)

    async def on_get_prompt(
        ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        try:
            prompt, blocks = prompts.get(params.name, params.arguments, caller_of(ctx))
        except RequestError as error:
            raise _refused(error) from None
        messages = [
            types.PromptMessage.model_validate({"role": "user", "content": content_block(block)}) for block in blocks
        ]
        return types.GetPromptResult(description=prompt.description, messages=messages)

    return {"on_list_prompts": on_list_prompts, "on_get_prompt": on_get_prompt}


def _completion_handler(
    resources: ResourceSet | None, prompts: PromptSet | None, caller_of: CallerOf
) -> Callable[[ServerRequestContext[Any], types.CompleteRequestParams], Awaitable[types.CompleteResult]]:
    async def on_completion(
        ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        ref, argument = params.ref, params.argument
        caller = caller_of(ctx)
        try:
            if isinstance(ref, types.PromptReference):
                if prompts is None:
                    raise RequestError("this server has no prompts to complete", data={"name": ref.name})
                found = prompts.complete(ref.name, argument.name, argument.value, caller)
            else:
                if resources is None:
                    raise RequestError("this server has no resource templates to complete", data={"uri": ref.uri})
                found = resources.complete(ref.uri, argument.name, argument.value, caller)
        except RequestError as error:
            raise _refused(error) from None
        return types.CompleteResult(completion=_wire_completion(found))

    return on_completion


def _wire_entry(entry: ResourceEntry) -> types.Resource:
    return types.Resource(
        uri=entry.uri, name=entry.name, title=entry.title, description=entry.description, mime_type=entry.mime_type
    )


def _wire_template(template: ResourceTemplate) -> types.ResourceTemplate:
    return types.ResourceTemplate(
        uri_template=template.uri_template,
        name=template.name,
        title=template.title,
        description=template.description,
        mime_type=template.mime_type,
    )


def _wire_contents(contents: ResourceContents) -> types.TextResourceContents | types.BlobResourceContents:
    meta: dict[str, Any] = {"_meta": dict(contents.meta)} if contents.meta else {}
    if contents.text is not None:
        return types.TextResourceContents(uri=contents.uri, mime_type=contents.mime_type, text=contents.text, **meta)
    blob = base64.b64encode(contents.blob or b"").decode()
    return types.BlobResourceContents(uri=contents.uri, mime_type=contents.mime_type, blob=blob, **meta)


def _wire_prompt(prompt: Prompt) -> types.Prompt:
    return types.Prompt(
        name=prompt.name,
        title=prompt.title,
        description=prompt.description,
        arguments=[
            types.PromptArgument(
                name=argument.name, description=argument.description or None, required=argument.required
            )
            for argument in prompt.arguments
        ],
    )


def content_block(block: Content) -> dict[str, Any]:
    """One content block (tool results and prompt messages alike) as MCP's wire shows it."""
    if isinstance(block, TextContent):
        return {"text": block.text, "type": "text"}
    if isinstance(block, ImageContent):
        return {"data": _b64(block.data), "mimeType": block.mime_type, "type": "image"}
    return {"resource": {"blob": _b64(block.blob), "mimeType": block.mime_type, "uri": block.uri}, "type": "resource"}


def call_result(result: ToolResult) -> dict[str, Any]:
    """The wire `CallToolResult` of a tool's result, keys in the order the SDK's result sieve writes them."""
    wire: dict[str, Any] = {"_meta": dict(result.meta)} if result.meta is not None else {}
    wire["content"] = [content_block(block) for block in result.content]
    wire["isError"] = result.is_error
    if result.structured is not None:
        wire["structuredContent"] = result.structured
    return wire


def wire_result(result: ToolResult) -> types.CallToolResult:
    """`call_result` as the SDK's model, for the SDK's own handler."""
    return types.CallToolResult.model_validate(call_result(result))


def wire_tool(spec: ToolSpec, *, apps: bool = False) -> types.Tool:
    """One tool as tools/list shows it; the title goes in both places: `title` from 2025-06-18 on,
    `annotations.title` for 2025-03-26 clients. With `apps` (a client that renders MCP Apps), its `_meta`."""
    meta: dict[str, Any] = {"_meta": dict(spec.meta)} if apps and spec.meta else {}
    return types.Tool(
        **meta,
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=types.ToolAnnotations(
            title=spec.title,
            read_only_hint=spec.read_only,
            destructive_hint=spec.destructive,
            idempotent_hint=spec.idempotent,
            open_world_hint=spec.open_world,
        ),
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _wire_completion(found: Completion) -> types.Completion:
    return types.Completion(values=list(found.values), total=found.total, has_more=found.has_more)
