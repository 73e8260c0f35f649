"""Submitting a job once: the idempotency rule shared by the service and the batch CLI.

The job id is the request's key, so:

- a request whose job is **done** (on the board, or in the store after Redis forgot it) gets
  the finished result and nothing is rendered again — output is byte-identical for the same
  request, so the old result is the new one;
- a request whose job is **queued or running** gets that job (only the first request's
  webhook is called), unless it is stale (below). A job the board says is running but whose
  run's result the store already holds has ended (the worker writes the store first): it
  counts as done, not as running;
- a request whose job **failed**, or that nobody asked for yet, is queued. The queued state
  is claimed on the board before the message is published (two replicas that race for the
  same new job publish it once), and dropped again when the broker does not take it;
- a job still ``queued`` after :data:`~renderers.workers.jobstate.STALE_QUEUED_S` is
  published again: its message may have been lost with a crashed publisher; so is a
  ``stalled`` job, ``running`` past its worker's lease: the board may have refused its end
  (Redis down or out of memory at that moment), and it would otherwise answer every repeat for
  the board's 7 days. Both are one rule, :meth:`~renderers.workers.jobstate.JobState.lapsed`,
  decided on Redis's clock (the leases are keys Redis expires), never by comparing this
  machine's clock with the writer's. A duplicate message costs nothing, because a task whose
  job is already done returns at once, and its attempts are counted on.

Each time a job is queued again it is a new run (:attr:`~renderers.workers.jobstate.JobState.run`),
so a late write of the run it replaces (a worker still recording its end) cannot stand for it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from renderers.service.requests import RenderRequest
from renderers.workers.jobstate import (
    STALE_QUEUED_S,
    JobBoard,
    JobState,
    look_up,
    new_state,
    next_run,
    save_result,
)
from renderers.workers.stores import ArtifactStore

#: Publishes a claimed job: ``enqueue(state, payload)``; raises when it cannot.
Enqueue = Callable[[JobState, dict[str, Any]], None]


@dataclass(frozen=True)
class Submission:
    """The job a request maps to, and whether this call queued it."""

    state: JobState
    queued_now: bool


def submit(
    request: RenderRequest, *, board: JobBoard, store: ArtifactStore, enqueue: Enqueue,
    webhook: str = "",
) -> Submission:
    """Find or queue the job for ``request`` (see the module docstring for the rules)."""
    job_id = request.job_key()
    found = look_up(board, store, job_id)
    if found.finished is not None:
        return Submission(found.finished, False)
    state = found.state  # a run the store says ended is not joined, though the board lags
    if state is not None and state.status in ("queued", "running"):
        if not state.lapsed():
            return Submission(state, False)
        fresh = state.with_status("queued", lease_until=None, queued_lease_s=STALE_QUEUED_S,
                                  run=next_run(state))
        if not board.put(fresh):
            return Submission(board.get(job_id) or fresh, False)
        enqueue(fresh, request.payload)
        return Submission(fresh, True)
    fresh = new_state(job_id, request.format, request.stem, webhook, next_run(state))
    if state is not None:  # failed before, or done but its artifacts are gone: again from the
        fresh = dataclasses.replace(fresh, created_at=state.created_at)  # first attempt
    # Claimed when the board has no state (of two requests racing, one publishes), else put
    # unless another request has queued a newer run meanwhile (that one answers).
    if not (board.claim(fresh) if found.board_state is None else board.put(fresh)):
        return Submission(board.get(job_id) or fresh, False)
    if found.stale_result:  # done once, its artifacts removed since: that result must not
        save_result(store, fresh)  # answer for this run
    try:
        enqueue(fresh, request.payload)
    except BaseException:
        board.drop(job_id)
        raise
    return Submission(fresh, True)

