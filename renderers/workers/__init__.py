"""Scale-out rendering: Celery workers, artifact stores and the job state they share.

``citerender worker`` (:mod:`.command`) runs the Celery app of :mod:`.celery_app`; a job is
executed by :mod:`.execute` into a store of :mod:`.stores` with provenance kept by
:mod:`.provenance` and its state on a board of :mod:`.jobstate`. The service's job routes
(:mod:`renderers.service.jobs`) and the batch CLI (:mod:`.batch`) submit through
:mod:`.submit`. Celery, redis and boto3 load only when a broker or an S3 store is used.
"""

from __future__ import annotations

from renderers.workers.errors import WorkerSetupError

#: Queue → the formats whose jobs it carries (one queue per engine family).
QUEUES: dict[str, tuple[str, ...]] = {
    "render.pdf": ("pdf", "png"),
    "render.office": ("docx", "pptx", "html", "md"),
}
#: Seconds between a worker's advertisements of its store in Redis (``--advertise-interval``);
#: each one lasts three intervals.
ADVERTISE_INTERVAL_S = 30


def queue_for(fmt: str) -> str:
    """The queue that carries jobs of format ``fmt``."""
    for queue, formats in QUEUES.items():
        if fmt in formats:
            return queue
    raise WorkerSetupError(f"format {fmt!r} has no queue; accepted: {', '.join(QUEUES)}",
                           field="format")
