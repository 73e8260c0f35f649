"""One table of output formats and aliases, the same on every surface: ``markdown``/``htm`` are
aliases everywhere; ``jpg``/``jpeg`` are refused everywhere with a hint to ask for PNG."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from typer.testing import CliRunner

from renderers import cli
from renderers.errors import ErrorCode, OptionError
from renderers.formats import EXTENSIONS, FORMAT_NAMES, OUTPUT_FORMATS, normalize_formats
from renderers.service.app import CONTENT_TYPES, REQUEST_SCHEMA, create_app
from renderers.tools import TOOL_FORMATS

POOL = [{"sid": 1, "title": "One", "url": "https://example.org/"}]


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(workers=1, warmup=False)) as test_client:
        yield test_client


def test_the_table_feeds_every_surface() -> None:
    assert set(TOOL_FORMATS.values()) == set(EXTENSIONS) == {f.name for f in OUTPUT_FORMATS}
    assert REQUEST_SCHEMA["properties"]["format"]["enum"] == sorted(FORMAT_NAMES)
    for fmt in OUTPUT_FORMATS:
        assert CONTENT_TYPES[fmt.name] == fmt.media_type
    assert FORMAT_NAMES["markdown"] == "md" and FORMAT_NAMES["htm"] == "html"
    assert "jpg" not in FORMAT_NAMES and "jpeg" not in FORMAT_NAMES


@pytest.mark.parametrize("name", ["jpg", "jpeg", "JPEG", ".jpg"])
def test_jpeg_is_refused_by_the_api(name: str) -> None:
    with pytest.raises(OptionError, match="ask for 'png'") as caught:
        normalize_formats(name)
    assert caught.value.code is ErrorCode.INVALID_ARGUMENT and caught.value.field == "formats"


@pytest.mark.parametrize("name", ["jpg", "jpeg"])
def test_jpeg_is_refused_by_the_service(client: TestClient, name: str) -> None:
    response = client.post(
        "/render", json={"content": "Hi.[[S:1]]", "format": name, "sources_pool": POOL}
    )
    assert response.status_code == 400
    assert response.json()["field"] == "format" and "ask for 'png'" in response.json()["error"]
    assert response.headers["content-type"].startswith("application/json")


@pytest.mark.parametrize("name", ["jpg", "jpeg"])
def test_jpeg_is_refused_by_the_cli(tmp_path: Path, name: str) -> None:
    (tmp_path / "in.md").write_text("Hi.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    result = CliRunner().invoke(
        cli.app,
        ["render", str(tmp_path / "in.md"), "--pool", str(tmp_path / "pool.json"), "--to", name],
    )
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--to" in lines[0] and "ask for 'png'" in lines[0]


@pytest.mark.parametrize(("alias", "fmt"), [("markdown", "md"), ("htm", "html")])
def test_aliases_mean_the_same_everywhere(
    client: TestClient, tmp_path: Path, alias: str, fmt: str
) -> None:
    assert normalize_formats(alias) == (fmt,)
    response = client.post(
        "/render", json={"content": "Hi.[[S:1]]", "format": alias, "sources_pool": POOL}
    )
    assert response.status_code == 200
    assert response.headers["content-type"] == CONTENT_TYPES[fmt]
    (tmp_path / "in.md").write_text("Hi.[[S:1]]\n", encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(POOL), encoding="utf-8")
    result = CliRunner().invoke(cli.app, [
        "render", str(tmp_path / "in.md"), "--pool", str(tmp_path / "pool.json"),
        "--to", alias, "--out", str(tmp_path / "out"),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / f"in{EXTENSIONS[fmt]}").is_file()
