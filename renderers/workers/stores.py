"""Artifact stores chosen by URL: a shared directory (``file:///…``) or an S3 bucket (``s3://…``).

Workers on many machines write finished artifacts into one store and any service replica reads
them back. A store holds objects under keys (``artifacts/<job>/document.pdf``); it offers only
what every backend can promise without locks:

- **atomic objects**: a reader sees an object whole or not at all. The directory store writes
  a hidden temporary file and renames it (:func:`citations.atomic.write_atomic`); on S3 a
  single PUT is atomic by the service's own guarantee (an object appears when its upload
  completes). Hidden names are never listed or served, so a writer killed mid-write leaves
  nothing visible; its temporary file is swept by a later write of the same key.
- **listing** by prefix, and **read-after-write** (a local file system; S3 is strongly
  consistent since December 2020).

There is no compare-and-swap and no lock: provenance is kept one object per artifact
(:mod:`renderers.workers.provenance`), so concurrent writers never touch the same object.
S3 credentials and the endpoint come from the usual AWS settings (environment variables such as
``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL_S3`` for an S3-compatible server, or a profile),
never from the URL.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

from citations.atomic import write_atomic
from renderers.workers.errors import StoreUnavailable, WorkerSetupError

#: A key: ``/``-separated parts of letters, digits, ``._-``; no part starts with a dot (hidden
#: names are temporary files) and none is ``..``.
_KEY = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*")
#: A temporary file older than this was left by a killed writer and may be removed.
STALE_TEMP_S = 3600.0
_CHUNK = 1 << 20


def check_key(key: str) -> str:
    """``key`` if it is a store key, else :class:`WorkerSetupError` (never a path escape)."""
    if not _KEY.fullmatch(key) or ".." in key.split("/"):
        raise WorkerSetupError(f"store key {key!r}: expected parts of letters, digits and ._-")
    return key


class ArtifactStore(Protocol):
    """What the job code needs from a store; both backends implement it."""

    url: str

    def put(self, key: str, data: bytes) -> None:
        """Write ``data`` under ``key`` atomically (replacing any object there)."""

    def get(self, key: str) -> bytes | None:
        """The object's bytes, or ``None`` when there is none."""

    def stream(self, key: str) -> Iterator[bytes]:
        """The object's bytes in chunks (for large downloads); KeyError when there is none."""

    def keys(self, prefix: str) -> Iterator[str]:
        """Every key under ``prefix`` (a folder such as ``provenance/``), in no set order."""

    def delete(self, key: str) -> None:
        """Remove the object under ``key`` (nothing when there is none)."""

    def check(self) -> None:
        """Raise :class:`StoreUnavailable` unless the store can be written and read."""


class FileStore:
    """A directory, local or mounted from a shared file system (NFS, SMB, a cluster FS)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = root.as_uri()

    def _path(self, key: str) -> Path:
        return self.root / check_key(key)

    def _failed(self, what: str, key: str, exc: OSError) -> StoreUnavailable:
        return StoreUnavailable(f"{self.url}: cannot {what} {key} ({exc.strerror or exc})")

    def put(self, key: str, data: bytes) -> None:
        target = self._path(key)
        try:
            write_atomic(target, data)
        except OSError as exc:
            raise self._failed("write", key, exc) from exc
        _sweep_stale_temps(target)

    def get(self, key: str) -> bytes | None:
        try:
            return self._path(key).read_bytes()
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:
            raise self._failed("read", key, exc) from exc

    def stream(self, key: str) -> Iterator[bytes]:
        try:
            handle = self._path(key).open("rb")
        except (FileNotFoundError, NotADirectoryError):
            raise KeyError(key) from None
        except OSError as exc:
            raise self._failed("read", key, exc) from exc
        return _chunks(handle)

    def delete(self, key: str) -> None:
        """Remove the object, and its folder once empty when that is a job's own
        (``artifacts/<job>/``; never a top-level folder another writer may be using)."""
        path = self._path(key)
        try:
            path.unlink(missing_ok=True)
        except NotADirectoryError:
            return
        except OSError as exc:
            raise self._failed("remove", key, exc) from exc
        if len(path.parent.relative_to(self.root).parts) >= 2:
            with contextlib.suppress(OSError):  # not empty, or gone
                path.parent.rmdir()

    def keys(self, prefix: str) -> Iterator[str]:
        base = self.root / check_key(prefix.rstrip("/")) if prefix.strip("/") else self.root
        if not base.is_dir():
            return
        for folder, dirs, files in os.walk(base):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            relative = Path(folder).relative_to(self.root).as_posix()
            for name in sorted(files):
                if not name.startswith("."):
                    yield name if relative == "." else f"{relative}/{name}"

    def check(self) -> None:
        probe = f"probes/{os.getpid()}-{threading.get_ident()}"
        self.put(probe, b"ok")
        if self.get(probe) != b"ok":
            raise StoreUnavailable(f"{self.url}: a written probe did not read back")
        with contextlib.suppress(OSError):
            self._path(probe).unlink()


def _chunks(handle: Any) -> Iterator[bytes]:
    with handle:
        while block := handle.read(_CHUNK):
            yield block


def _sweep_stale_temps(target: Path) -> None:
    """Remove temporary files of ``target`` that a killed writer left more than an hour ago.

    Their age is read on the file system's clock, against ``target`` just written (a shared
    file system stamps files by its server's clock, not the writer's): compared with this
    machine's clock, one an hour ahead of the server removed another writer's temporary file
    while it wrote (its rename then failed), and one behind never swept. A sweep that fails
    leaves the temporary files for a later write; the object is written either way."""
    try:
        cutoff = target.stat().st_mtime - STALE_TEMP_S
    except OSError:
        return
    for temp in target.parent.glob(f".{target.name}.*.tmp"):
        with contextlib.suppress(OSError):
            if temp.stat().st_mtime < cutoff:
                temp.unlink()


class S3Store:
    """A bucket and key prefix on S3 or an S3-compatible server (MinIO, Ceph, moto)."""

    def __init__(self, bucket: str, prefix: str) -> None:
        self.bucket = bucket
        self.prefix = f"{prefix.strip('/')}/" if prefix.strip("/") else ""
        self.url = f"s3://{bucket}/{self.prefix}"
        self._clients: dict[int, Any] = {}

    @property
    def client(self) -> Any:
        """A boto3 S3 client for this process (clients do not survive a fork)."""
        pid = os.getpid()
        if pid not in self._clients:
            import boto3
            from botocore.config import Config

            config = Config(connect_timeout=3, read_timeout=30,
                            retries={"max_attempts": 3, "mode": "standard"})
            self._clients = {pid: boto3.client("s3", config=config)}
        return self._clients[pid]

    def _call(self, what: str, key: str, fn: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(Bucket=self.bucket, **kwargs)
        except ClientError as exc:
            code = str(exc.response.get("Error", {}).get("Code", ""))
            if code in ("NoSuchKey", "404", "NotFound"):
                raise KeyError(key) from None
            raise StoreUnavailable(f"{self.url}: cannot {what} {key} ({code}: {exc})") from exc
        except BotoCoreError as exc:
            raise StoreUnavailable(f"{self.url}: cannot {what} {key} ({exc})") from exc

    def put(self, key: str, data: bytes) -> None:
        self._call("write", key, self.client.put_object, Key=self.prefix + check_key(key),
                   Body=data)

    def get(self, key: str) -> bytes | None:
        try:
            return b"".join(self.stream(key))
        except KeyError:
            return None

    def stream(self, key: str) -> Iterator[bytes]:
        answer = self._call("read", key, self.client.get_object, Key=self.prefix + check_key(key))
        body = answer["Body"]
        return _chunks(body)

    def delete(self, key: str) -> None:
        self._call("remove", key, self.client.delete_object, Key=self.prefix + check_key(key))

    def keys(self, prefix: str) -> Iterator[str]:
        start = self.prefix + (check_key(prefix.rstrip("/")) + "/" if prefix.strip("/") else "")
        paginator = self.client.get_paginator("list_objects_v2")
        pages = self._call("list", prefix, paginator.paginate, Prefix=start)
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            for page in pages:
                for item in page.get("Contents", []):
                    yield item["Key"][len(self.prefix):]
        except (BotoCoreError, ClientError) as exc:
            raise StoreUnavailable(f"{self.url}: cannot list {prefix} ({exc})") from exc

    def check(self) -> None:
        probe = f"probes/{os.getpid()}-{threading.get_ident()}"
        self.put(probe, b"ok")
        if self.get(probe) != b"ok":
            raise StoreUnavailable(f"{self.url}: a written probe did not read back")
        self.delete(probe)


def open_store(url: str) -> ArtifactStore:
    """The store for ``url``: ``file:///absolute/dir`` or ``s3://bucket[/prefix]``."""
    parts = urlsplit(url)
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise WorkerSetupError(
                f"store {url!r}: a directory store is file:///absolute/path (three slashes)"
            )
        return FileStore(Path(unquote(parts.path)))
    if parts.scheme == "s3":
        if not parts.netloc or parts.query or parts.password or parts.username:
            raise WorkerSetupError(
                f"store {url!r}: an S3 store is s3://bucket/prefix; credentials and endpoint "
                "come from the AWS environment variables or profile, not the URL"
            )
        try:
            import boto3  # noqa: F401
        except ImportError as exc:
            raise WorkerSetupError(
                f"store {url!r} needs boto3: pip install 'citerender[workers]'"
            ) from exc
        prefix = unquote(parts.path).strip("/")
        if prefix:
            check_key(prefix)
        return S3Store(parts.netloc, prefix)
    raise WorkerSetupError(
        f"store {url!r}: accepted: file:///absolute/dir (a shared directory) or "
        "s3://bucket/prefix (S3 or an S3-compatible server)"
    )
