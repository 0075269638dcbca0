"""What the gateway offers agents over the catalog: the fixed tools, promoted functions, run_script, ChatGPT's
search/fetch, whoami's view of the caller, the catalog as resources and prompts, how results become content, and
the approval a person gives before a call that changes data runs (`approvals`, `confirmation`).

Every tool answers from the caller policy it is handed and calls the API through the REST dispatcher.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gateway._lazy import lazy_exports

if TYPE_CHECKING:
    from gateway.tools.research import DataSource, ResearchConfig
    from gateway.tools.scripts import ScriptConfig
    from gateway.tools.toolset import ToolSet

__all__ = ["DataSource", "ResearchConfig", "ScriptConfig", "ToolSet"]

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "gateway.tools.research": (
            "DataSource",
            "ResearchConfig",
        ),
        "gateway.tools.scripts": ("ScriptConfig",),
        "gateway.tools.toolset": ("ToolSet",),
    },
    globals(),
)
