"""Tool calls in a render process of their own, under a memory cap: the MCP server's renders.

Why: the MCP server is one long-lived process an agent keeps for a whole session. Rendering
in it, one hostile or simply huge document (10 MiB of citations can make WeasyPrint hold
several GiB, and Typst's compile cannot be interrupted) could take the agent's tool server
down with it, through the out-of-memory killer. Here each call runs in a warm worker process
(:class:`renderers.service.pool.WorkerPool`, as the HTTP service's renders do) whose memory the
kernel caps (:mod:`renderers.process_memory`): a call past the cap answers a ``limit_exceeded``
envelope, the worker is replaced, and the server carries on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from renderers.process_memory import default_worker_memory_mib

if TYPE_CHECKING:
    from renderers.service.pool import WorkerPool

#: How long past ``limits.max_seconds`` a call may take before its process is killed: the
#: render stops itself at its deadline, and this is the time for that and for the envelope.
STOP_GRACE_S = 30


def hard_timeout_s() -> float:
    """How long the pool waits for a call before it kills the worker. The tools take no
    ``limits``, so every call renders within the default ``limits.max_seconds``; a render
    stuck where the deadline cannot interrupt it (in C, a Typst compile) is stopped here,
    where it held the server, which takes one call at a time, for a week."""
    from renderers.options import Limits

    return Limits().max_seconds + STOP_GRACE_S


def run_tool_call(job: tuple[object, object, str]) -> dict[str, Any]:
    """In the worker: ``call_tool(name, arguments, out_dir=…)`` (it never raises)."""
    from renderers.tools import call_tool

    name, arguments, out_dir = job
    return call_tool(name, arguments, out_dir=out_dir)


class ToolProcess:
    """One warm worker process for tool calls (started with the first call), capped at
    ``memory_mib`` MiB (default: :func:`default_worker_memory_mib` for one worker);
    ``setting`` names the option that sets the cap, for the refusal's message."""

    def __init__(self, memory_mib: int | None = None, *, setting: str) -> None:
        self.memory_mib = memory_mib or default_worker_memory_mib(1)
        self.setting = setting
        self._pool: WorkerPool | None = None

    async def call(self, name: object, arguments: object, out_dir: Path) -> dict[str, Any]:
        """The envelope of the tool call, rendered in the worker; a call the worker could
        not finish is an error envelope too (``limit_exceeded`` past the memory cap or
        :func:`hard_timeout_s`)."""
        from renderers.deadline import RenderTimeout
        from renderers.errors import LimitError
        from renderers.service.pool import JobTimeout, PoolError, memory_refusal
        from renderers.tools import error_envelope

        pool = await self._started()
        timeout = hard_timeout_s()
        try:
            envelope: dict[str, Any] = await pool.run(
                run_tool_call, (name, arguments, str(out_dir)), timeout=timeout
            )
        except JobTimeout:
            return error_envelope(RenderTimeout(
                f"the render did not stop within {timeout:g} s (limits.max_seconds and "
                f"{STOP_GRACE_S} s to stop); its process was stopped and replaced"))
        except PoolError as exc:
            refused = memory_refusal(exc, self.setting)
            return error_envelope(exc if refused is None else LimitError(refused, field="content"))
        return envelope

    async def _started(self) -> WorkerPool:
        if self._pool is None:
            from renderers.service.app import PRELOAD_MODULES, warm_worker
            from renderers.service.pool import WorkerPool

            pool = WorkerPool(1, queue_limit=1, initializer=warm_worker,
                              preload=PRELOAD_MODULES, memory_mib=self.memory_mib)
            await pool.start()
            self._pool = pool
        return self._pool

    async def close(self) -> None:
        """Stop the worker (bounded; nothing when no call was made)."""
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
