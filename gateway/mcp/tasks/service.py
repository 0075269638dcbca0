"""Task-augmented tool calls (MCP 2025-11-25 tasks): a call that outlives the client's request timeout.

A `tools/call` whose params carry `task` is answered at once with a `CreateTaskResult`; the call runs on in this
process, and its state lives in a `TaskStore` (SQLite by default, Redis when several instances serve), so
`tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` work from any instance. Tasks belong to the caller who
created them, by identity and grant (the caller policy's `owner`): another caller's task, or the task of a narrower
token of the same person, is unknown. Over HTTP, callers without credentials cannot be told apart: they are one
caller, whose tasks are reached by their unguessable ids alone and listed to no one (MCP 2025-11-25 tasks, task
isolation). The caller policy bounds how many tasks one caller runs and keeps, and how many listen streams it holds
open. The SDK defines the task types but dispatches none of these methods; they are
added here as request handlers, and the `tasks` capability and each tool's `execution.taskSupport` through a server
middleware, the SDK's own seams.

On 2026-07-28 the same tasks speak the `io.modelcontextprotocol/tasks` extension (SEP-2663) instead: the
middleware serves tasks/get, tasks/update and tasks/cancel there and answers a tools/call of a client that
declared the extension with a task handle. The instance running a call watches the store, so a cancel served
elsewhere stops it; a session that outlives the request (stdio) is sent `notifications/tasks/status` when its
task ends. A 2026-07-28 client that opens a `subscriptions/listen` stream with `taskIds` is sent
`notifications/tasks` (the `DetailedTask` that tasks/get would answer) on it: each task's state at once, then
each change, from whichever instance records it; the stream ends when every task it follows has ended.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from gateway.errors import LimitError
from gateway.limits import CALL_TIMEOUT
from gateway.mcp import _sdk
from gateway.mcp.tasks.config import TaskConfig
from gateway.mcp.tasks.store import TaskStoreError, WatchedTaskStore, open_task_store
from gateway.mcp.wire import call_result
from gateway.policy import CallerPolicy, Lease
from oauth.outage import Outage

if TYPE_CHECKING:
    from gateway.mcp.endpoint import McpEndpoint

__all__ = ["Tasks"]

logger = logging.getLogger(__name__)

#: The protocol version that has tasks in its core (2026-07-28 moved them to an extension).
TASKS_VERSION: Final = "2025-11-25"
#: The protocol version whose tasks are the `io.modelcontextprotocol/tasks` extension (SEP-2663).
EXTENSION_VERSION: Final = "2026-07-28"
EXTENSION: Final = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES: Final = "io.modelcontextprotocol/clientCapabilities"
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
_TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})
_PAGE: Final = 50
_CORE_METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
#: Tools that only read the catalog answer at once: a task would add nothing.
_INSTANT: Final = frozenset({"search_functions", "describe_function", "explain_term"})
#: JSON-RPC 2.0 §5.1, an implementation-defined server error: a store the server needs cannot answer now.
_SERVER_ERROR: Final = -32000
#: Seconds the calls still running when the gateway stops get to record their end.
_CLOSING: Final = 5.0


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat().replace("+00:00", "Z")


def _refused(error: LimitError) -> MCPError:
    """A spent budget as a JSON-RPC error naming the limit."""
    return MCPError(code=types.INVALID_REQUEST, message=str(error), data={"limit": error.limit, "value": error.value})


class Tasks:
    """The tasks of one gateway: creates them for task-augmented calls, runs them, and answers tasks/*."""

    def __init__(self, config: TaskConfig, endpoint: McpEndpoint) -> None:
        self.config = config
        self.endpoint = endpoint
        store = config.store
        self._owns_store = store is None or isinstance(store, str)
        #: The task store's state: its outages are logged once each; add listeners to count them.
        self.outage = Outage("task store")
        self.store = WatchedTaskStore(
            open_task_store(store, clock=config.clock) if store is None or isinstance(store, str) else store,
            self.outage,
        )
        self._clock = config.clock or time.time
        self._running: dict[str, asyncio.Task[None]] = {}
        self._done: dict[str, anyio.Event] = {}
        #: The sessions to tell of a task's end (stdio, and other transports whose session outlives the request).
        self._listeners: dict[str, Any] = {}
        #: Set, then replaced, whenever a task of this instance changes status (wakes listen streams at once).
        self._changed = anyio.Event()

    def install(self) -> None:
        """Serve tasks/get, tasks/result, tasks/list and tasks/cancel, and intercept task-augmented calls."""
        server = self.endpoint.server
        server.add_request_handler("tasks/get", types.GetTaskRequestParams, self._get)
        server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, self._result)
        server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, self._cancel)
        server.add_request_handler("tasks/list", types.PaginatedRequestParams, self._list)
        # The SDK admits subscriptions/listen at 2026-07-28 only. Served, it makes the SDK advertise the list-change
        # and resource subscriptions too; those are honored and never fire: this server's lists and resources do
        # not change while it runs.
        server.add_request_handler("subscriptions/listen", types.SubscriptionsListenRequestParams, self._listen)
        server.middleware.append(self._middleware)

    async def aclose(self) -> None:
        """Cancel the calls still running here, let each record its end, and close the store when the gateway
        opened it."""
        running = list(self._running.values())
        for task in running:
            task.cancel()
        if running:
            with anyio.move_on_after(_CLOSING):
                await asyncio.gather(*running, return_exceptions=True)
        if self._owns_store:
            await self.store.aclose()

    # The middleware: capability, tool execution hints, and task-augmented calls

    async def _middleware(self, ctx: Any, call_next: Any) -> Any:
        try:
            return await self._serve(ctx, call_next)
        except TaskStoreError as error:
            # The server's trouble: said as such, with when to try again; the outage is logged by the store.
            raise MCPError(code=_SERVER_ERROR, message=str(error), data={"retryAfter": error.retry_after}) from error

    async def _serve(self, ctx: Any, call_next: Any) -> Any:
        params = ctx.params if isinstance(ctx.params, Mapping) else {}
        if ctx.protocol_version == EXTENSION_VERSION:
            return await self._extension(ctx, params, call_next)
        if ctx.method in _CORE_METHODS and ctx.protocol_version != TASKS_VERSION:
            # The SDK's method table admits the 2025-11-25 task methods at every earlier version too.
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=ctx.method)
        if ctx.method == "tools/call" and params.get("task") is not None and ctx.protocol_version == TASKS_VERSION:
            asked = params["task"].get("ttl") if isinstance(params["task"], Mapping) else None
            return {"task": _public(await self._create(ctx, params, asked))}
        result = await call_next(ctx)
        if not isinstance(result, dict):
            return result
        if ctx.method == "initialize" and result.get("protocolVersion") == TASKS_VERSION:
            capabilities = result.setdefault("capabilities", {})
            # MCP 2025-11-25 tasks, capabilities: list, cancel, and task-augmented tools/call; "receivers that
            # cannot identify requestors SHOULD NOT declare the tasks.list capability".
            listing: dict[str, Any] = {"list": {}} if self.endpoint.caller_of(ctx).identified else {}
            capabilities["tasks"] = {**listing, "cancel": {}, "requests": {"tools": {"call": {}}}}
        elif ctx.method == "tools/list" and ctx.protocol_version == TASKS_VERSION:
            for tool in result.get("tools", ()):
                if isinstance(tool, dict) and tool.get("name") not in _INSTANT:
                    tool["execution"] = {"taskSupport": "optional"}
        return result

    async def _extension(self, ctx: Any, params: Mapping[str, Any], call_next: Any) -> Any:
        """The 2026-07-28 wire: tasks as the `io.modelcontextprotocol/tasks` extension (SEP-2663).

        A tools/call from a client that declared the extension in its per-request capabilities becomes a task
        (the server's choice, per SEP-2663; catalog-only tools still answer at once); tasks/get, tasks/update and
        tasks/cancel are served here, before the SDK's 2026-07-28 method table (which lacks them) refuses them;
        tasks/result and tasks/list do not exist on this version and stay METHOD_NOT_FOUND.
        """
        method = ctx.method
        if method == "tools/call" and _declares_extension(params) and params.get("name") not in _INSTANT:
            record = await self._create(ctx, params, None)
            return self._stamped({"resultType": "task", **_extension_task(record)})
        if method in ("tasks/get", "tasks/update", "tasks/cancel"):
            task_id = params.get("taskId")
            if not isinstance(task_id, str):
                raise MCPError(code=types.INVALID_PARAMS, message=f"{method} needs params.taskId, a string")
            if method == "tasks/cancel":
                # SEP-2663: cancelling is an acknowledged intent; a task already terminal stays as it is.
                await self._cancel_task(ctx, task_id)
                return self._stamped({"resultType": "complete"})
            _, record = await self._record(ctx, task_id)
            if method == "tasks/update":
                # SEP-2663: responses to keys not outstanding are ignored; these tasks never ask for input.
                return self._stamped({"resultType": "complete"})
            return self._stamped({"resultType": "complete", **_extension_task(record, detailed=True)})
        if method in _CORE_METHODS:
            # SEP-2663 drops tasks/result and tasks/list (the result is inline in tasks/get).
            raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data=method)
        result = await call_next(ctx)
        if method == "server/discover" and isinstance(result, dict):
            capabilities = result.setdefault("capabilities", {})
            capabilities.setdefault("extensions", {})[EXTENSION] = {}
        return result

    def _stamped(self, result: dict[str, Any]) -> dict[str, Any]:
        """`result` with the `serverInfo` `_meta` stamp that the SDK puts on every 2026-07-28 result it shapes
        (a middleware that answers by itself owns its envelope)."""
        return {**result, "_meta": {types.SERVER_INFO_META_KEY: self.endpoint.server.server_info_stamp}}

    async def _create(self, ctx: Any, params: Mapping[str, Any], asked: object) -> dict[str, Any]:
        """Store a working task for the tools/call `params` and start its call here; the stored record."""
        caller = self.endpoint.caller_of(ctx)
        name = params.get("name")
        if not isinstance(name, str) or not await self.endpoint.offers(name, caller):
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown tool {name!r}; call tools/list for the tools this server has",
            )
        arguments = params.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise MCPError(code=types.INVALID_PARAMS, message="arguments must be an object")
        ttl_ms = int(self.config.max_ttl * 1000)
        if isinstance(asked, int) and not isinstance(asked, bool) and 0 < asked < ttl_ms:
            ttl_ms = asked
        now = self._clock()
        try:
            lease = caller.start_task()
        except LimitError as error:
            raise _refused(error) from None
        # MCP 2025-11-25 tasks: task ids are cryptographically secure, so that without context-binding they are
        # the access control.
        task_id = secrets.token_urlsafe(18)
        owner = caller.owner
        record: dict[str, Any] = {
            "taskId": task_id,
            "status": "working",
            "statusMessage": f"{name} is running",
            "createdAt": _iso(now),
            "lastUpdatedAt": _iso(now),
            "ttl": ttl_ms,
            "pollInterval": int(self.config.poll_interval * 1000),
            "tool": name,
            "result": None,
        }
        expires_at = now + ttl_ms / 1000
        try:
            limits = caller.policy.limits
            full = await self.store.create(
                owner,
                task_id,
                record,
                expires_at=expires_at,
                limit=limits.tasks_stored_per_caller,
                total=limits.tasks_stored,
                pool="tasks",
                address=caller.address,
                address_limit=limits.tasks_stored_per_address,
                person=caller.person,
            )
            if full == "person":
                raise _refused(caller.tasks_kept_refusal())
            if full == "address":
                raise _refused(caller.tasks_kept_from_address_refusal())
            if full == "pool":
                raise _refused(caller.tasks_kept_in_all_refusal())
        except BaseException:
            lease.release()
            raise
        self._done[task_id] = anyio.Event()
        if caller.request.transport == "stdio" and ctx.protocol_version == TASKS_VERSION and ctx.session is not None:
            # MCP 2025-11-25 tasks: the receiver MAY send notifications/tasks/status. Only a session whose
            # stream outlives this request can carry it: over stateless HTTP the CreateTaskResult ends the stream.
            self._listeners[task_id] = ctx.session
        self._running[task_id] = asyncio.get_running_loop().create_task(
            self._run(owner, task_id, name, arguments, caller, expires_at, lease)
        )
        return record

    async def _run(
        self,
        owner: str,
        task_id: str,
        name: str,
        arguments: dict[str, Any],
        caller: CallerPolicy,
        expires_at: float,
        lease: Lease,
    ) -> None:
        token = CALL_TIMEOUT.set(self.config.timeout)
        watcher = asyncio.get_running_loop().create_task(self._watch(owner, task_id))
        try:
            result = await self.endpoint.call_tool(name, arguments, caller)
            payload = call_result(result)
            status = "failed" if result.is_error else "completed"
            message = f"{name} failed" if result.is_error else f"{name} completed"
        except asyncio.CancelledError:
            await self._finish(owner, task_id, "cancelled", "cancelled", None, expires_at)
            raise
        except Exception:
            # Boundary: a task that crashes fails alone; call_tool already turned tool faults into results.
            logger.exception("task %s of %r failed", task_id, name)
            payload = {"content": [{"type": "text", "text": f"Internal error in {name}"}], "isError": True}
            status, message = "failed", f"{name} failed"
        finally:
            watcher.cancel()
            CALL_TIMEOUT.reset(token)
            lease.release()
        await self._finish(owner, task_id, status, message, payload, expires_at)

    async def _watch(self, owner: str, task_id: str) -> None:
        """Cancel the call running here once the shared store says the task is cancelled (a tasks/cancel served by
        another instance) or gone (expired): the store is read every `poll_interval` while the call runs."""
        while True:
            await anyio.sleep(self.config.poll_interval)
            try:
                record = await self.store.get(owner, task_id)
            except TaskStoreError:
                continue  # a store that fails for a moment must not end the call (its outage is logged once)
            if record is None or record["status"] == "cancelled":
                running = self._running.get(task_id)
                if running is not None:
                    running.cancel()
                return

    async def _finish(
        self, owner: str, task_id: str, status: str, message: str, payload: Any, expires_at: float
    ) -> None:
        try:
            with anyio.CancelScope(shield=True):
                # The claim makes the move to a terminal status atomic across instances: a tasks/cancel that
                # claimed first wins, and a late result never overwrites `cancelled`.
                record, first = await self.store.claim(owner, task_id)
                if first and record is not None and record["status"] not in _TERMINAL:
                    record.update(
                        status=status, statusMessage=message, lastUpdatedAt=_iso(self._clock()), result=payload
                    )
                    await self.store.put(owner, task_id, record, expires_at=expires_at)
                    await self._tell(task_id, record)
                elif record is not None and record["status"] == "cancelled":
                    await self._tell(task_id, record)  # cancelled by a tasks/cancel another instance served
        except TaskStoreError as error:
            # Boundary: the call has ended either way; its task expires in the store with its ttl.
            logger.warning("the end of task %s (%s) could not be recorded: %s", task_id, status, error.detail)
        finally:
            self._listeners.pop(task_id, None)
            self._running.pop(task_id, None)
            done = self._done.pop(task_id, None)
            if done is not None:
                done.set()

    # subscriptions/listen (2026-07-28): notifications/tasks

    async def _listen(
        self, ctx: Any, params: types.SubscriptionsListenRequestParams
    ) -> types.SubscriptionsListenResult:
        """Serve one listen stream: the ack, then `notifications/tasks` for the caller's tasks named in `taskIds`.

        Task ids that are unknown, expired or another caller's are left out of the ack (and never reported). The
        stream ends with its result once every followed task has ended, unless list-change or resource
        subscriptions keep it open (until the client goes away).
        """
        subscription_id = ctx.request_id
        if subscription_id is None:
            raise MCPError(code=types.INVALID_REQUEST, message="subscriptions/listen needs a request id")
        requested = params.notifications
        asked = (requested.model_extra or {}).get("taskIds")
        if asked is not None and not _declares_extension(params.model_dump(by_alias=True, exclude_none=True)):
            # SEP-2663, task status notifications: a client that did not declare the extension is refused.
            raise MCPError(
                code=types.MISSING_REQUIRED_CLIENT_CAPABILITY,
                message="Missing required client capability",
                data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
            )
        if asked is not None and (
            not isinstance(asked, list) or not all(isinstance(task_id, str) for task_id in asked)
        ):
            raise MCPError(code=types.INVALID_PARAMS, message="notifications.taskIds must be an array of task ids")
        if asked is not None and len(asked) > _PAGE:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"notifications.taskIds names {len(asked)} tasks; listen to at most {_PAGE} on one stream",
            )
        caller = self.endpoint.caller_of(ctx)
        try:
            lease = caller.open_subscription()
        except LimitError as error:
            raise _refused(error) from None
        with lease:
            return await self._stream(ctx, caller, asked, requested, subscription_id)

    async def _stream(
        self,
        ctx: Any,
        caller: CallerPolicy,
        asked: list[str] | None,
        requested: types.SubscriptionFilter,
        subscription_id: Any,
    ) -> types.SubscriptionsListenResult:
        """The listen stream of `caller`'s tasks named in `asked` (and the subscriptions it honours)."""
        followed: dict[str, dict[str, Any]] = {}
        for task_id in dict.fromkeys(asked or ()):
            record = await self.store.get(caller.owner, task_id)
            if record is not None:
                followed[task_id] = record
        honored: dict[str, Any] = {
            key: True
            for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged")
            if requested.model_dump(by_alias=True).get(key)
        }
        if requested.resource_subscriptions:
            honored["resourceSubscriptions"] = list(requested.resource_subscriptions)
        others = bool(honored)
        if asked is not None:
            honored["taskIds"] = list(followed)
        meta: dict[str, Any] = {_sdk.SUBSCRIPTION_ID: subscription_id}
        await _sdk.send_listen_acknowledged(ctx.session, honored, meta, subscription_id)
        for record in followed.values():
            await _sdk.send_task_notification(
                ctx.session, _extension_task(record, detailed=True), meta, subscription_id
            )
        pending = {task_id: record for task_id, record in followed.items() if record["status"] not in _TERMINAL}
        while pending:
            changed = self._changed
            with anyio.move_on_after(self.config.poll_interval):
                await changed.wait()  # a task ended here; tasks on other instances are seen by the next read
            for task_id, seen in list(pending.items()):
                record = await self.store.get(caller.owner, task_id)
                if record is None:
                    del pending[task_id]  # expired: tasks/get would answer unknown too
                    continue
                if (record["status"], record["lastUpdatedAt"]) == (seen["status"], seen["lastUpdatedAt"]):
                    continue
                await _sdk.send_task_notification(
                    ctx.session, _extension_task(record, detailed=True), meta, subscription_id
                )
                if record["status"] in _TERMINAL:
                    del pending[task_id]
                else:
                    pending[task_id] = record
        if others:
            await anyio.sleep_forever()  # until the client goes away: these never fire
        return types.SubscriptionsListenResult(_meta=meta)

    # tasks/* handlers

    async def _record(self, ctx: Any, task_id: str) -> tuple[str, dict[str, Any]]:
        """The caller's owner key and its task `task_id`; -32602 when the caller has no such task."""
        owner = self.endpoint.caller_of(ctx).owner
        record = await self.store.get(owner, task_id)
        if record is None:
            # MCP 2025-11-25 tasks, error handling: an unknown or expired task id is -32602.
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Unknown task {task_id!r}: it expired, or was never created by this caller; "
                "tasks/list shows yours",
            )
        return owner, record

    async def _get(self, ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        _, record = await self._record(ctx, params.task_id)
        return _public(record)

    async def _result(self, ctx: Any, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        owner, record = await self._record(ctx, params.task_id)
        # MCP 2025-11-25 tasks: tasks/result blocks until the task reaches a terminal status.
        while record["status"] not in _TERMINAL:
            done = self._done.get(params.task_id)
            if done is not None:
                await done.wait()
            else:
                await anyio.sleep(self.config.poll_interval)  # the task runs on another instance
            found = await self.store.get(owner, params.task_id)
            if found is None:
                raise MCPError(code=types.INVALID_PARAMS, message=f"Task {params.task_id!r} expired")
            record = found
        if record["status"] == "cancelled" or record["result"] is None:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Task {params.task_id!r} was cancelled: it has no result"
            )
        payload = dict(record["result"])
        payload["_meta"] = {**payload.get("_meta", {}), RELATED_TASK: {"taskId": params.task_id}}
        return payload

    async def _cancel(self, ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        record, cancelled = await self._cancel_task(ctx, params.task_id)
        if not cancelled:
            # MCP 2025-11-25 tasks: cancelling a task in a terminal status is -32602.
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Task {params.task_id!r} is already {record['status']}; only a working task can be cancelled",
            )
        return _public(record)

    async def _cancel_task(self, ctx: Any, task_id: str) -> tuple[dict[str, Any], bool]:
        """Cancel the caller's task, here or on the instance running it; the record, and False when it had
        already ended (or another instance is recording its end right now)."""
        owner, _ = await self._record(ctx, task_id)
        # Claimed, so that of a cancel and the running call's result (on this or another instance) one wins.
        claimed, first = await self.store.claim(owner, task_id)
        record = claimed or {"status": "expired"}
        if record["status"] in _TERMINAL or claimed is None:
            return record, False
        if not first:
            raise MCPError(
                code=types.INVALID_PARAMS,
                message=f"Task {task_id!r} is finishing right now; call tasks/get for its final status",
            )
        now = self._clock()
        record.update(status="cancelled", statusMessage="cancelled by the caller", lastUpdatedAt=_iso(now))
        expires_at = _created(record) + record["ttl"] / 1000
        await self.store.put(owner, task_id, record, expires_at=max(expires_at, now + 1))
        await self._tell(task_id, record)
        running = self._running.get(task_id)
        if running is not None:
            running.cancel()
        return record, True

    async def _tell(self, task_id: str, record: Mapping[str, Any]) -> None:
        """Send notifications/tasks/status for the task's new status to the session that created it, if any, and
        wake this instance's listen streams."""
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        session = self._listeners.pop(task_id, None)
        if session is None:
            return
        try:
            await _sdk.send_task_status(session, _public(record))
        except Exception:
            # A client gone away must not fail the task it asked for.
            logger.debug("notifications/tasks/status for task %s could not be sent", task_id, exc_info=True)

    async def _list(self, ctx: Any, params: types.PaginatedRequestParams) -> dict[str, Any]:
        caller = self.endpoint.caller_of(ctx)
        owner = caller.owner
        # MCP 2025-11-25 tasks, task isolation: a requestor that cannot be identified is listed no task (its tasks
        # are reached by their unguessable ids alone).
        ids = await self.store.ids(owner) if caller.identified else []
        start = 0
        if params.cursor:
            if not params.cursor.isdigit():
                raise MCPError(code=types.INVALID_PARAMS, message=f"Invalid cursor {params.cursor!r}; list again")
            start = int(params.cursor)
        found: list[dict[str, Any]] = []
        position = start
        while position < len(ids) and len(found) < _PAGE:
            record = await self.store.get(owner, ids[position])
            position += 1
            if record is not None:
                found.append(_public(record))
        answer: dict[str, Any] = {"tasks": found}
        if position < len(ids):
            answer["nextCursor"] = str(position)
        return answer


def _public(record: Mapping[str, Any]) -> dict[str, Any]:
    """A task as the wire shows it (MCP 2025-11-25 `Task`)."""
    return {
        key: record[key]
        for key in ("taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttl", "pollInterval")
    }


def _created(record: Mapping[str, Any]) -> float:
    return datetime.fromisoformat(str(record["createdAt"]).replace("Z", "+00:00")).timestamp()


def _declares_extension(params: Mapping[str, Any]) -> bool:
    """Whether the request's per-request client capabilities declare the tasks extension (SEP-2663)."""
    meta = params.get("_meta")
    capabilities = meta.get(CLIENT_CAPABILITIES) if isinstance(meta, Mapping) else None
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    return isinstance(extensions, Mapping) and isinstance(extensions.get(EXTENSION), Mapping)


def _extension_task(record: Mapping[str, Any], *, detailed: bool = False) -> dict[str, Any]:
    """A task as the 2026-07-28 tasks extension shows it (SEP-2663 `Task`; `DetailedTask` when `detailed`).

    A call whose result is a tool error is `completed` there (`failed` is kept for JSON-RPC errors, which a
    task of this gateway never ends with), with the `CallToolResult` inline.
    """
    status = "completed" if record["status"] == "failed" and record["result"] is not None else record["status"]
    task: dict[str, Any] = {
        "taskId": record["taskId"],
        "status": status,
        "statusMessage": record["statusMessage"],
        "createdAt": record["createdAt"],
        "lastUpdatedAt": record["lastUpdatedAt"],
        "ttlMs": record["ttl"],
        "pollIntervalMs": record["pollInterval"],
    }
    if detailed and status == "completed":
        task["result"] = record["result"]
    return task
