"""Errors carry ``code`` and ``field``; the tool envelope, the service's status and the CLI's exit
code follow them — never the wording of the message."""

from __future__ import annotations

import inspect
import pickle
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import citations.errors as citation_errors
import renderers.errors as render_errors
from renderers import cli, tools
from renderers.errors import (
    ErrorCode,
    InputError,
    LimitError,
    OptionError,
    OutputPathError,
    StrictError,
)
from renderers.service.app import HTTP_STATUS, JobOutcome, RenderJob, create_app, render_job

MISLEADING = "dpi=5: a message that looks like it is about an option"


def error_classes() -> list[type[Exception]]:
    found = []
    for module in (citation_errors, render_errors):
        for _, value in inspect.getmembers(module, inspect.isclass):
            if (
                issubclass(value, citation_errors.CodedError)
                and value.__module__ == module.__name__
            ):
                found.append(value)
    return found


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_has_a_code_and_a_field(cls: type[Any]) -> None:
    error = cls("message", field="dpi") if cls is OptionError else cls("message")
    assert isinstance(error.code, ErrorCode)
    assert isinstance(error.field, str)
    assert error.code in HTTP_STATUS, "every code has an HTTP status"
    again = pickle.loads(pickle.dumps(error))  # worker processes send errors back pickled
    assert (type(again), str(again), again.code, again.field) == (
        cls,
        "message",
        error.code,
        error.field,
    )


def test_the_message_regex_is_gone() -> None:
    assert not hasattr(tools, "classify_error")
    assert "re" not in vars(tools)


@pytest.mark.parametrize(
    ("error", "code", "where"),
    [
        (InputError(MISLEADING), "invalid_input", "content"),
        (LimitError("1,000,001 rows", field="sources_pool"), "limit_exceeded", "sources_pool"),
        (OptionError(MISLEADING, field="page_size"), "invalid_argument", "page_size"),
        (StrictError("unknown sid 7"), "strict_failed", "content"),
        (OutputPathError("refused"), "invalid_path", "path"),
        (ValueError(MISLEADING), "internal_error", ""),
        (RecursionError("deep"), "limit_exceeded", ""),
    ],
)
def test_tool_envelope_follows_code_and_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: Exception, code: str, where: str
) -> None:
    def failing_render(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr("renderers.api.render", failing_render)
    envelope = tools.call_tool("write_markdown", {"content": "x"}, out_dir=tmp_path)
    assert envelope["ok"] is False
    assert (envelope["error"]["code"], envelope["error"]["where"]) == (code, where)
    assert envelope["error"]["message"]


ERRORS = {
    "limit": LimitError("the pool has too many rows", field="sources_pool"),
    "option": OptionError(MISLEADING, field="dpi"),
    "strict": StrictError("unknown sid 7"),
    "input": InputError(MISLEADING),
}


def raising_job(job: RenderJob) -> JobOutcome:
    """Worker job whose render raises the error named by the content."""
    import renderers.api

    def failing_render(*args: Any, **kwargs: Any) -> Any:
        raise ERRORS[job.content]

    renderers.api.render = failing_render  # type: ignore[assignment]  # this worker only
    return render_job(job)


@pytest.fixture(scope="module")
def raising_client() -> Iterator[TestClient]:
    with TestClient(create_app(workers=1, warmup=False, job=raising_job)) as client:
        yield client


@pytest.mark.parametrize(
    ("name", "status", "field"),
    [
        ("limit", 422, "sources_pool"),
        ("option", 400, "dpi"),
        ("strict", 422, "content"),
        ("input", 422, "content"),
    ],
)
def test_service_status_follows_code_and_field(
    raising_client: TestClient, name: str, status: int, field: str
) -> None:
    response = raising_client.post("/render", json={"content": name, "format": "md"})
    assert response.status_code == status, response.text
    body = response.json()
    assert body["field"] == field and body["code"] == str(ERRORS[name].code)


@pytest.mark.parametrize(
    ("error", "exit_code", "names"),
    [
        (StrictError("unknown sid 7"), 1, "in.md"),
        (InputError(MISLEADING), 2, "in.md"),
        (LimitError("too many rows", field="sources_pool"), 2, "pool.json"),
        (KeyError("a bug"), 2, "internal error"),
    ],
)
def test_cli_exit_code_follows_code_and_field(
    monkeypatch: pytest.MonkeyPatch, error: Exception, exit_code: int, names: str
) -> None:
    def failing_render_file(*args: Any, **kwargs: Any) -> Any:
        raise error

    monkeypatch.setattr("renderers.api.render_file", failing_render_file)
    job = cli.Job(
        input="in.md", pool="pool.json", out="out", name=None, formats=("md",), content_format=None
    )
    outcome = cli.run_job(job, lambda event: None)
    assert outcome.code == exit_code
    assert outcome.error.startswith("citerender: error: ") and names in outcome.error
    assert "\n" not in outcome.error
