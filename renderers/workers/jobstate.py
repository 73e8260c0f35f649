"""The state of an asynchronous render job, and the boards that hold it.

A job's id is its request's key (:meth:`renderers.service.requests.RenderRequest.job_key`), so
a repeated request finds the job it already started. The state moves
``queued → running → done | failed`` (``running`` again when a lost task is redelivered).

A client reads one more status, ``stalled`` (:meth:`JobState.public`): a job on a broker's
worker still ``running`` past its worker's lease (:attr:`JobState.lease_until`). Nothing is
known of it then: the board may have refused how it ended (Redis down or out of memory at that
moment), or its worker died and its message waits for another. Answered ``running``, a client
polling it waited for ever; answered ``failed``, it could be wrong while a redelivered attempt
waits. ``stalled`` says so, and that sending the request again renders it again
(:func:`renderers.workers.submit.submit`); a redelivered attempt that starts makes it
``running`` again. The board never stores it: it is how a stored ``running`` state reads.

Whether the lease has passed is decided by the board's one clock, never by comparing the
running machine's clock with the reader's: :class:`RedisBoard` keeps a worker's lease as a key
that Redis itself expires (``citerender:lease:<id>``, set with the running state, gone with
it), and the state read says whether that key was still there (:attr:`JobState.lease_held`).
Compared with the reader's clock, a worker's ``lease_until`` stamped by a clock a minute
behind made a running job read ``stalled`` a minute early, and a repeat of its request
published it again while it ran (one ahead delayed a real stall as long). ``lease_until``
stays, as the worker's own stamp of the end (what ``stalled.since`` shows), and decides only
for a state written by an older worker, which set no key.

A job still ``queued`` is judged the same way: its publisher answers for its message for
:data:`STALE_QUEUED_S` (:attr:`JobState.queued_lease_s`), after which the message may have been
lost with a crashed publisher and a repeat of the request publishes it again
(:meth:`JobState.lapsed`). The same key holds that lease while the job is queued, so a producer
whose clock is behind no longer makes every repeat publish the job again, nor one ahead keep a
lost message waiting as long. A queued state written by an older producer (no
``queued_lease_s``) is judged by its ``updated_at`` against the reader's clock, as before.

Two boards hold states: :class:`RedisBoard` in the broker's Redis, shared by every service
replica and worker (no process keeps job state of its own), and :class:`MemoryBoard` for the
single-process service without a broker. A finished job's state is also written to the
artifact store (``jobs/<id>.json``, after its artifacts and provenance), which outlives
Redis: the store's copy is what makes a repeat of a finished request free.

Every state names its **run** (:attr:`JobState.run`): one more each time the job is queued
anew, or begun again after it finished (:func:`next_run`). Writers of one job do not take
turns: a worker records its end in the store, then on the board, and a client may read the
store's ``done`` in between, remove the artifact and send the request again. That request
queues a new run, and the first run's board write, landing after it, put the old result back
over it (the client then read the first run's ``done`` again, its artifact gone). So a board
keeps no state of a run older than the one it holds (:meth:`JobBoard.put`), and the store's
result answers only when it is of the board's run or a later one (:func:`newest`): written
first, it is ahead of the board until the run's board write lands, never behind it.
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol, cast

from renderers.workers.errors import BrokerUnavailable, redact_url
from renderers.workers.stores import ArtifactStore

JobStatus = Literal["queued", "running", "done", "failed"]
JOB_STATUSES: tuple[JobStatus, ...] = ("queued", "running", "done", "failed")
#: What a client reads: a stored status, or ``stalled`` for a running job past its lease.
PublicStatus = Literal["queued", "running", "stalled", "done", "failed"]
PUBLIC_STATUSES: tuple[PublicStatus, ...] = ("queued", "running", "stalled", "done", "failed")
#: How long Redis keeps a job's state (a finished job's result stays in the store).
STATE_TTL_S = 7 * 24 * 3600
#: How long a queued job's publisher answers for its message (:attr:`JobState.queued_lease_s`):
#: past it, a repeat of the request publishes the job again (the message may have been lost).
STALE_QUEUED_S = 900
_KEY_PREFIX = "citerender:job:"
#: The lease of a queued or running job's holder, expired by Redis (module doc).
_LEASE_PREFIX = "citerender:lease:"
#: The artifact store URL the workers advertise, for services and batches given no ``--store``.
_STORE_KEY = "citerender:store"


@dataclass
class JobState:
    """One job as the board and the store keep it (JSON-ready)."""

    id: str
    status: JobStatus
    format: str
    stem: str
    created_at: float
    updated_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    attempts: int = 0
    worker: str = ""
    pid: int = 0
    #: A running job on a broker's worker: until when its worker answers for it, by the
    #: worker's clock. Its end comes before (a render stops at the hard time limit), or its
    #: next attempt renews it; past it the job is :meth:`stalled` (decided on the board's
    #: clock when the board keeps the lease, :attr:`lease_held`).
    lease_until: float | None = None
    #: The lease's length, which :class:`RedisBoard` counts on Redis's clock (module doc).
    lease_s: int | None = None
    #: A queued job: how long its publisher answers for its message (:data:`STALE_QUEUED_S`),
    #: counted like ``lease_s``. Its own field, not ``lease_s``: a producer of the previous
    #: version copies a running job's ``lease_s`` into the queued state it publishes again,
    #: and sets no key for it. None: an older producer's state, ``updated_at`` decides.
    queued_lease_s: int | None = None
    webhook: str = ""
    #: A finished job: the envelope of ``POST /render`` without the file, plus ``artifacts``
    #: (store keys) and ``provenance`` (the artifacts' ``sources_used.json`` records).
    result: dict[str, Any] | None = None
    #: A failed job: ``{"code", "message", "field"}``.
    error: dict[str, str] | None = None
    #: Which run of the job this state belongs to (module doc, :func:`next_run`); 0: a state
    #: written before runs were counted, which any run replaces.
    run: int = 0
    #: Read from a board that keeps leases on its own clock: whether the running job's lease
    #: had not yet expired there. None: not known, ``lease_until`` decides. Never stored.
    lease_held: bool | None = dataclasses.field(default=None, compare=False)

    def lapsed(self, now: float | None = None) -> bool:
        """Whether the queued or running job's holder no longer answers for it: a running
        job past its worker's lease (:meth:`stalled`), or a queued one whose message may have
        been lost (:data:`STALE_QUEUED_S` after it was queued); either is published again by a
        repeat of its request. The board's word (:attr:`lease_held`) decides when it gave
        one; else the writer's stamp against ``now`` (this machine's clock by default)."""
        if self.status not in ("queued", "running"):
            return False
        if self.lease_held is not None:
            return not self.lease_held
        clock = time.time() if now is None else now
        if self.status == "running":
            return self.lease_until is not None and clock > self.lease_until
        return clock - self.updated_at >= STALE_QUEUED_S

    def stalled(self, now: float | None = None) -> bool:
        """Whether the job is ``running`` past its worker's lease: its end was refused by the
        board, or its message waits for another worker (see the module docstring)."""
        return self.status == "running" and self.lapsed(now)

    def lease_ms(self) -> int | None:
        """How long the board keeps this state's lease key, in milliseconds: the worker's
        lease while running, the publisher's while queued; None: the state has no lease."""
        seconds = self.lease_s if self.status == "running" else (
            self.queued_lease_s if self.status == "queued" else None)
        return None if seconds is None else max(1, round(seconds * 1000))

    def with_status(self, status: JobStatus, **changes: Any) -> JobState:
        """A copy in ``status`` with ``changes``, stamped now (what the board said of the
        lease applies to the state read, not to the copy; a queued lease only to a state
        queued anew, which passes ``queued_lease_s``)."""
        return dataclasses.replace(self, status=status, updated_at=time.time(),
                                   **{"lease_held": None, "queued_lease_s": None, **changes})

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        del data["lease_held"]  # the board's word when read, not part of the state
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobState:
        known = {f.name for f in dataclasses.fields(cls)} - {"lease_held"}
        values = {k: v for k, v in data.items() if k in known}
        if values.get("status") not in JOB_STATUSES:
            raise ValueError(f"job state with status {values.get('status')!r}")
        return cls(**values)

    def dumps(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)  # ASCII: lone surrogates survive

    @classmethod
    def loads(cls, text: str | bytes) -> JobState:
        return cls.from_dict(json.loads(text))

    def public(self, now: float | None = None) -> dict[str, Any]:
        """What ``GET /jobs/{id}`` answers (and a webhook receives): the state, with
        ``stalled`` and the reason for a job :meth:`stalled` at ``now``."""
        status_url = f"/jobs/{self.id}"
        stalled = self.stalled(now)
        status: PublicStatus = "stalled" if stalled else self.status
        out: dict[str, Any] = {
            "id": self.id,
            "status": status,
            "status_url": status_url,
            "format": self.format,
            "attempts": self.attempts,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
        }
        if self.status == "done" and self.result is not None:
            out["artifact_url"] = f"{status_url}/artifact"
            out["result"] = self.result
        if self.status == "failed" and self.error is not None:
            out["error"] = self.error
        if stalled:
            out["stalled"] = {"since": self.lease_until, "message": STALLED_MESSAGE}
        return out


#: Why a job reads ``stalled``, and what the client may do (:meth:`JobState.public`).
STALLED_MESSAGE = (
    "its worker has not reported for longer than it answers for a job: the broker may have "
    "refused how the job ended, or its worker stopped and the job waits for another; send the "
    "same request to POST /jobs again to render it again (a finished job answers at once), or "
    "keep polling: a worker that takes it up again makes it running"
)


def result_key(job_id: str) -> str:
    """Where the store keeps a finished job's state."""
    return f"jobs/{job_id}.json"


def save_result(store: ArtifactStore, state: JobState) -> None:
    """Write a finished job's state to the store (the last write of a job), or the queued state
    that replaces a finished one whose artifacts were removed (:mod:`~renderers.workers.submit`)."""
    store.put(result_key(state.id), (state.dumps() + "\n").encode("utf-8"))


def load_result(store: ArtifactStore, job_id: str) -> JobState | None:
    """A finished job's state from the store, or None (also for an unreadable object)."""
    raw = store.get(result_key(job_id))
    if raw is None:
        return None
    try:
        state = JobState.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return None
    return state if state.status == "done" else None


def next_run(latest: JobState | None) -> int:
    """The run of a job queued anew, or begun again after it finished, when ``latest`` is the
    newest state known of it (None: none): one more than its run (module doc)."""
    return (latest.run if latest is not None else 0) + 1


def newest(state: JobState | None, stored: JobState | None) -> JobState | None:
    """The job's newest word of the board's ``state`` and the store's finished ``stored``:
    the stored result when it is of the board's run or a later one (the store is written
    first, so the board may lag it by one write, or Redis forgot the job), else the board's
    state (the stored result is an older run's, which a newer one replaced)."""
    if stored is not None and (state is None or stored.run >= state.run):
        return stored
    return state


def current_state(
    board: JobBoard, store: Callable[[], ArtifactStore], job_id: str,
) -> JobState | None:
    """What ``GET /jobs/{id}`` answers: the board's state, or the store's result when it is
    newer (:func:`newest`); only the store's result while the board is unreachable (a finished
    job outlives Redis), else :class:`BrokerUnavailable`. ``store`` is called only when the
    board's state is not ``done`` (a service may not have found its store yet)."""
    try:
        state = board.get(job_id)
    except BrokerUnavailable:
        stored = load_result(store(), job_id)
        if stored is None:
            raise
        return stored
    if state is not None and state.status == "done":
        return state
    return newest(state, load_result(store(), job_id))


def artifacts_kept(store: ArtifactStore, state: JobState) -> bool:
    """Whether every artifact of the finished ``state`` is still in the store (one listing of
    the job's folder). A lifecycle rule or an operator may remove them; then the job counts as
    not done, and the same request renders it again instead of answering 410 for ever."""
    wanted = list((state.result or {}).get("artifacts") or [])
    if not wanted:
        return True
    present = set(store.keys(f"artifacts/{state.id}/"))
    return all(key in present for key in wanted)


@dataclass(frozen=True)
class JobLookup:
    """What the board and the store say of one job, each read once."""

    #: The job's state on the board (None: the board never knew it, or forgot it).
    board_state: JobState | None
    #: Its newest state (:func:`newest`): the board's, or the store's result of the same run
    #: or a later one (a run that ended while the board still says ``running``).
    state: JobState | None
    #: Its finished state, when it is done and its artifacts are still stored.
    finished: JobState | None
    #: The store's result is the newest state, and its artifacts have been removed since.
    stale_result: bool


def look_up(board: JobBoard, store: ArtifactStore, job_id: str) -> JobLookup:
    """Read the job from the board, then (unless it is done there) from the store, which is
    written before the board: a finished state newer than the board's (:func:`newest`) is put
    back on the board (Redis forgot it, or the run's own board write has not landed yet)."""
    state = board.get(job_id)
    if state is not None and state.status == "done" and artifacts_kept(store, state):
        return JobLookup(state, state, state, False)
    stored = load_result(store, job_id)
    latest = newest(state, stored)
    if stored is None or latest is not stored:
        return JobLookup(state, latest, None, False)
    if not artifacts_kept(store, stored):
        return JobLookup(state, stored, None, True)
    board.put(stored)
    return JobLookup(state, stored, stored, False)


def finished_state(board: JobBoard, store: ArtifactStore, job_id: str) -> JobState | None:
    """The job's finished state when it is done and its artifacts are still stored (on the
    board, or in the store after Redis forgot it), else None."""
    return look_up(board, store, job_id).finished


class JobBoard(Protocol):
    """Where job states live while jobs run."""

    def get(self, job_id: str) -> JobState | None:
        """The state, or None for an unknown job."""

    def put(self, state: JobState) -> bool:
        """Store ``state`` (replacing the job's previous state) unless the board holds a state
        of a newer run (:attr:`JobState.run`): a late write of a replaced run is dropped.
        Whether it was stored."""

    def claim(self, state: JobState) -> bool:
        """Store ``state`` only if the job has no state yet; whether it was stored."""

    def drop(self, job_id: str) -> None:
        """Forget the job (a submission that could not be queued)."""


class MemoryBoard:
    """Job states in this process (the service without a broker)."""

    def __init__(self) -> None:
        #: id → (run, state as JSON).
        self._states: dict[str, tuple[int, str]] = {}
        self._lock = threading.Lock()

    def get(self, job_id: str) -> JobState | None:
        with self._lock:
            held = self._states.get(job_id)
        return JobState.loads(held[1]) if held is not None else None

    def put(self, state: JobState) -> bool:
        with self._lock:
            held = self._states.get(state.id)
            if held is not None and held[0] > state.run:
                return False
            self._states[state.id] = (state.run, state.dumps())
            return True

    def claim(self, state: JobState) -> bool:
        with self._lock:
            if state.id in self._states:
                return False
            self._states[state.id] = (state.run, state.dumps())
            return True

    def drop(self, job_id: str) -> None:
        with self._lock:
            self._states.pop(job_id, None)


#: Set or remove a stored state's lease key (KEYS[2]; ARGV[3] its milliseconds, '' for none;
#: ARGV[4] its holder), the tail of both scripts below.
_SET_LEASE = """
if ARGV[3] == '' then redis.call('DEL', KEYS[2])
else redis.call('SET', KEYS[2], ARGV[4], 'PX', ARGV[3]) end
return 1
"""
#: Claim a job (its state only if it has none) and, when claimed, set or remove its lease
#: key, at once: a claim that loses must not touch the lease of the job that holds the id.
_CLAIM_SCRIPT = """
if not redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2], 'NX') then return 0 end
""" + _SET_LEASE
#: Store a state (ARGV[1], for ARGV[2] seconds) and set or remove its lease key, at once,
#: unless the state held is of a newer run than ARGV[5] (:meth:`JobBoard.put`). A held state
#: that cannot be read (or of a version without runs) is replaced.
_PUT_SCRIPT = """
local held = redis.call('GET', KEYS[1])
if held then
  local readable, state = pcall(cjson.decode, held)
  if readable and type(state) == 'table' and (tonumber(state['run']) or 0) > tonumber(ARGV[5])
  then return 0 end
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
""" + _SET_LEASE


def _refuses_scripts(error: BaseException) -> bool:
    """Whether ``error`` is Redis refusing to run a script at all (not a script failing):
    ``NOPERM`` for an ACL user without ``@scripting``, or ``EVAL``/``EVALSHA`` disabled or
    renamed, which Redis answers as an unknown command."""
    from redis.exceptions import NoPermissionError, ResponseError

    text = str(error).lower()
    return (isinstance(error, NoPermissionError) and ("eval" in text or "script" in text)) or (
        isinstance(error, ResponseError) and "unknown command" in text and "eval" in text)


class RedisBoard:
    """Job states in Redis under ``citerender:job:<id>``, shared by replicas and workers; a
    queued or running job's lease under ``citerender:lease:<id>``, expiring on Redis's
    clock."""

    def __init__(self, url: str, ttl_s: int = STATE_TTL_S) -> None:
        import redis

        self.url = url
        self.ttl_s = ttl_s
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._redis = redis.Redis.from_url(
            url, socket_connect_timeout=2, socket_timeout=10, health_check_interval=30
        )
        self._claim = self._redis.register_script(_CLAIM_SCRIPT)
        self._put = self._redis.register_script(_PUT_SCRIPT)

    def _run(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except self._errors as exc:
            if _refuses_scripts(exc):
                raise BrokerUnavailable(
                    f"the broker {redact_url(self.url)} refuses Lua scripts ({what}: {exc}); "
                    "Celery's Redis transport (kombu's locks) and the job board's writes run "
                    "them: allow the user @scripting (ACL) or use a Redis plan that allows EVAL"
                ) from exc
            raise BrokerUnavailable(
                f"the broker {redact_url(self.url)} is unreachable ({what}: {exc}); "
                "jobs cannot be queued or looked up until it is back"
            ) from exc

    def ping(self) -> None:
        """Raise :class:`BrokerUnavailable` unless Redis answers and runs Lua scripts, which
        some managed Redis plans and ACL users without ``@scripting`` refuse: a worker would
        otherwise start and fail in kombu, and every job's claim in the service."""
        self._run("ping", self._redis.ping)
        self._run("script check", self._redis.eval, "return 1", 0)

    def get(self, job_id: str) -> JobState | None:
        """The state, with whether its lease is still held on Redis's clock (one round trip,
        both read at once)."""
        reads = self._redis.pipeline(transaction=True)
        reads.get(_KEY_PREFIX + job_id)
        reads.exists(_LEASE_PREFIX + job_id)
        raw, leased = self._run("read", reads.execute)
        if raw is None:
            return None
        try:
            state = JobState.loads(cast(bytes, raw))
        except (ValueError, TypeError):
            return None
        if state.lease_ms() is not None:
            state.lease_held = bool(leased)
        return state

    def put(self, state: JobState) -> bool:
        """Store ``state`` unless Redis holds a newer run of the job (:meth:`JobBoard.put`); a
        state with a lease (:meth:`JobState.lease_ms`) sets its key to expire on Redis's
        clock, any other state removes it (one script: the check and both writes at once)."""
        return self._write(self._put, state, state.run)

    def claim(self, state: JobState) -> bool:
        """Store ``state`` and its lease only if the job has no state yet (one script)."""
        return self._write(self._claim, state)

    def _write(self, script: Any, state: JobState, *more: object) -> bool:
        """Run ``script`` (:data:`_CLAIM_SCRIPT`, :data:`_PUT_SCRIPT`) for ``state``: whether
        it was stored."""
        lease_ms = state.lease_ms()
        stored = self._run(
            "write", script, keys=[_KEY_PREFIX + state.id, _LEASE_PREFIX + state.id],
            args=[state.dumps(), self.ttl_s, "" if lease_ms is None else lease_ms,
                  state.worker or "1", *more])
        return bool(stored)

    def drop(self, job_id: str) -> None:
        self._run("write", self._redis.delete, _KEY_PREFIX + job_id, _LEASE_PREFIX + job_id)

    def advertise_store(self, url: str, ttl_s: int) -> None:
        """Advertise ``url`` as the workers' artifact store for ``ttl_s`` seconds.

        Workers call this at start, at every task and on a timer
        (:func:`renderers.workers.celery_app.advertise_store`), so the advertisement comes
        back after Redis restarts or is flushed, and expires once no worker serves the store.
        """
        self._run("write", self._redis.set, _STORE_KEY, url, ex=ttl_s)

    def advertised_store(self) -> str | None:
        """The store URL a worker advertised in the last few intervals, or None."""
        raw = self._run("read", self._redis.get, _STORE_KEY)
        return raw.decode("utf-8") if isinstance(raw, bytes) else None

    def close(self) -> None:
        self._redis.close()


def new_state(job_id: str, fmt: str, stem: str, webhook: str = "", run: int = 1) -> JobState:
    """A queued state for a job submitted now, its publisher's lease with it (``run``: see
    :func:`next_run`)."""
    now = time.time()
    return JobState(id=job_id, status="queued", format=fmt, stem=stem, created_at=now,
                    updated_at=now, webhook=webhook, queued_lease_s=STALE_QUEUED_S, run=run)

