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
from pathlib import Path, PurePosixPath

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
#: Where the cgroup hierarchies are mounted: cgroup v2's unified tree, with cgroup v1's memory
#: controller under ``memory/``.
CGROUP_ROOT = Path("/sys/fs/cgroup")
#: Which cgroup this process is in, one line per hierarchy (``0::/path`` for cgroup v2,
#: ``N:memory:/path`` for cgroup v1's memory controller).
PROC_SELF_CGROUP = Path("/proc/self/cgroup")
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


def container_memory_mib(root: Path | None = None, membership: Path | None = None) -> int | None:
    """The cgroup memory limit this process lives under in MiB, or None when there is none or
    it cannot be read.

    The kernel holds a cgroup to the lowest limit on the way from it up to the root, so every
    ``memory.max`` (cgroup v2) and ``memory.limit_in_bytes`` (v1) on that way counts, starting
    from this process's own cgroup as ``membership`` (``/proc/self/cgroup``) names it. Why:
    a container sees its own limit at the top of ``root``, but a systemd unit's
    ``MemoryMax=`` lives at ``root/system.slice/<unit>/memory.max``, which reading only the top
    missed. Both are parameters so that tests can stand up a fake hierarchy."""
    root = root or CGROUP_ROOT
    own_v2, own_v1 = _own_cgroups(membership or PROC_SELF_CGROUP)
    candidates = [
        *_up_to(root, own_v2, "memory.max"),
        *_up_to(root / "memory", own_v1, "memory.limit_in_bytes"),
    ]
    limits = [mib for mib in map(_limit_mib, candidates) if mib is not None]
    return min(limits) if limits else None


def _own_cgroups(membership: Path) -> tuple[PurePosixPath, PurePosixPath]:
    """This process's cgroup v2 path and cgroup v1 memory-controller path, relative to their
    hierarchies' roots (the root itself where ``membership`` cannot be read or names none,
    and where a path climbs out of the root, as it does from outside a cgroup namespace)."""
    v2 = v1 = PurePosixPath()
    try:
        lines = membership.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return v2, v1
    for line in lines:
        hierarchy, _, rest = line.partition(":")
        controllers, _, path = rest.partition(":")
        relative = PurePosixPath(path.lstrip("/"))
        if ".." in relative.parts:
            continue
        if hierarchy == "0" and controllers == "":
            v2 = relative
        elif "memory" in controllers.split(","):
            v1 = relative
    return v2, v1


def _up_to(hierarchy: Path, own: PurePosixPath, name: str) -> list[Path]:
    """The file ``name`` in the cgroup ``own`` and in each of its parents up to the root of
    ``hierarchy``, nearest first."""
    return [hierarchy.joinpath(*parent.parts) / name for parent in (own, *own.parents)]


def _limit_mib(path: Path) -> int | None:
    """The limit a cgroup file holds in MiB; None for "max", v1's huge no-limit number, or a
    file that is missing or unreadable."""
    try:
        text = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    if text.isdigit() and 0 < int(text) < _NO_CGROUP_LIMIT:
        return max(1, int(text) // _MIB)
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
