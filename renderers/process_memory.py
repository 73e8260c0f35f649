"""A memory cap for the render processes the service owns, set by the kernel.

Why: the input limits bound a render's memory only in proportion to the input, and
``limits.max_seconds`` stops a render only once its time is up. Measured here: 20,000
citations (426 KB of markdown, far below the 10 MiB body the service accepts) make WeasyPrint
hold 1.0 GiB after 50 s, and Typst 455 MiB after 3 s; a body twenty times that size would take
several GiB per worker, on every worker at once. A process we own can be capped by the kernel
instead: ``RLIMIT_DATA`` counts the heap and the private writable mappings, which is what a
render grows (a warm worker's ``VmData`` stays within a few per cent of its resident size,
measured through a WeasyPrint and a Typst render), while the libraries' shared code and the
address space they only reserve do not count against it.

Past the cap an allocation fails: Python code (WeasyPrint, python-docx, the readers) raises
:class:`MemoryError`, which the worker reports before it exits; a library written in Rust
(Typst) aborts the process instead, which the pool sees as a worker that died. Either way that
one job fails with a message naming the cap, and a fresh worker takes the dead one's place.
"""

from __future__ import annotations

import os
from pathlib import Path

#: The cap when the operator sets none, in MiB: enough for the largest documents the default
#: limits admit that we measured (a 500-page report: 842 MiB with Typst), and never more than
#: the machine can give every worker at once (:func:`default_worker_memory_mib`).
DEFAULT_WORKER_MEMORY_MIB = 4096
#: Share of the machine's memory the workers may hold together under the default cap.
_MACHINE_SHARE = 0.8
#: Smallest cap accepted: below it a warm worker (about 100 MiB with every renderer loaded)
#: could not take a job at all.
MIN_WORKER_MEMORY_MIB = 256

_MIB = 1024 * 1024
#: Where a container's memory limit is read (cgroup v2, then v1, as mounted in a container).
CGROUP_ROOT = Path("/sys/fs/cgroup")
_CGROUP_LIMITS = ("memory.max", "memory/memory.limit_in_bytes")
#: A cgroup v1 "limit" this large is the kernel's way of saying none.
_NO_CGROUP_LIMIT = 1 << 60


def machine_memory_mib() -> int | None:
    """The memory this machine gives us in MiB: its physical memory, or the container's
    memory limit when lower (None where the platform says neither). In a container limited to
    2 GiB on a large host, the default caps went by the host, and workers at their caps
    together would have the container's out-of-memory killer stop the service itself."""
    try:
        pages, page_size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        pages = page_size = 0
    physical = pages * page_size // _MIB if pages > 0 and page_size > 0 else None
    limits = [mib for mib in (physical, container_memory_mib()) if mib is not None]
    return min(limits) if limits else None


def container_memory_mib(root: Path | None = None) -> int | None:
    """The cgroup memory limit of this process in MiB (``memory.max``, or cgroup v1's
    ``memory.limit_in_bytes``), or None when there is none or it cannot be read."""
    for name in _CGROUP_LIMITS:
        try:
            text = ((root or CGROUP_ROOT) / name).read_text(encoding="ascii").strip()
        except (OSError, UnicodeDecodeError):
            continue
        if text.isdigit() and 0 < int(text) < _NO_CGROUP_LIMIT:
            return max(1, int(text) // _MIB)
        return None  # "max", or no limit worth the name
    return None


def default_worker_memory_mib(workers: int) -> int:
    """:data:`DEFAULT_WORKER_MEMORY_MIB`, lowered so that ``workers`` processes at the cap
    together hold at most 80 % of the machine's memory (:func:`machine_memory_mib`: the
    container's, when it has less), never below the minimum."""
    total = machine_memory_mib()
    if total is None:
        return DEFAULT_WORKER_MEMORY_MIB
    share = int(total * _MACHINE_SHARE) // max(1, workers)
    return max(MIN_WORKER_MEMORY_MIB, min(DEFAULT_WORKER_MEMORY_MIB, share))


def cap_process_memory(mib: int) -> None:
    """Cap this process's data (heap and private writable mappings) at ``mib`` MiB, for good:
    the hard limit is lowered too, so nothing the render runs can raise it again."""
    import resource  # POSIX only: imported where a cap is set, so the CLI starts anywhere

    wanted = mib * _MIB
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        wanted = min(wanted, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (wanted, wanted))


def current_cap_mib() -> int | None:
    """The cap :func:`cap_process_memory` set on this process, in MiB (None: no cap, or a
    platform without POSIX resource limits)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    return None if soft == resource.RLIM_INFINITY else soft // _MIB


def memory_exceeded(mib: int, setting: str) -> str:
    """The message of a render stopped by the cap: what happened, and the setting that sets
    it (``setting``, e.g. ``serve --max-worker-memory``)."""
    return (
        f"the render needed more than the {mib} MiB of memory a render process may use here "
        f"({setting}); shorten the input, or raise the setting"
    )
