"""Output names stay inside the output directory; writes are atomic."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from renderers import outputs
from renderers.errors import OutputPathError
from renderers.outputs import output_path, relative_name, validate_name, write_atomic


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("report.pdf", "report.pdf"),
        ("reports/q1/summary.docx", "reports/q1/summary.docx"),
        ("Ünïcode – report 2024.md", "Ünïcode – report 2024.md"),
        ("report-1.png", "report-1.png"),
        (".hidden.html", ".hidden.html"),
    ],
)
def test_accepted_names(name: str, expected: str) -> None:
    assert validate_name(name) == expected


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("../escape.pdf", r"'\.\.' is refused"),
        ("a/../../b.pdf", r"'\.\.' is refused"),
        ("..", r"'\.\.' is refused"),
        ("/etc/passwd", "absolute"),
        ("C:/Windows/x.pdf", "absolute"),
        ("C:\\Windows\\x.pdf", "absolute"),
        ("a\\b.pdf", "reserved characters"),
        ("a\x00b.pdf", "control characters"),
        ("line\nbreak.pdf", "control characters"),
        ("what?.pdf", "reserved characters"),
        ('quote".pdf', "reserved characters"),
        ("pipe|.pdf", "reserved characters"),
        ("a<b>.pdf", "reserved characters"),
        ("star*.pdf", "reserved characters"),
        ("col:on.pdf", "reserved characters"),
        ("CON", "reserved device name"),
        ("nul.txt", "reserved device name"),
        ("sub/LPT1.pdf", "reserved device name"),
        ("com9.docx", "reserved device name"),
        ("trailing.", "end with a dot or a space"),
        ("trailing ", "end with a dot or a space"),
        ("a//b.pdf", "empty or '.'"),
        ("./b.pdf", "empty or '.'"),
        ("x" * 300 + ".pdf", "longer than 255"),
    ],
)
def test_refused_names(name: str, reason: str) -> None:
    with pytest.raises(OutputPathError, match=reason):
        validate_name(name)


def test_refusal_message_names_the_input_and_what_is_refused() -> None:
    with pytest.raises(OutputPathError) as info:
        validate_name("bad|name.pdf")
    message = str(info.value)
    assert "'bad|name.pdf'" in message and "|" in message


def test_non_string_name_is_refused() -> None:
    with pytest.raises(OutputPathError, match="expected a string"):
        validate_name(None)  # type: ignore[arg-type]


def test_output_path_stays_inside(tmp_path: Path) -> None:
    target = output_path(tmp_path, "sub/report.pdf")
    assert target == (tmp_path / "sub" / "report.pdf").resolve()
    assert relative_name(tmp_path, target) == "sub/report.pdf"


def test_output_path_refuses_symlink_escape(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "link").symlink_to(outside, target_is_directory=True)
    with pytest.raises(OutputPathError, match="outside the output directory"):
        output_path(out_dir, "link/report.pdf")
    with pytest.raises(OutputPathError):
        relative_name(out_dir, outside / "x.pdf")


def test_write_atomic_writes_and_replaces(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "dir" / "a.bin"
    write_atomic(target, b"first")
    assert target.read_bytes() == b"first"
    write_atomic(target, b"second")
    assert target.read_bytes() == b"second"
    assert sorted(p.name for p in target.parent.iterdir()) == ["a.bin"]
    mode = target.stat().st_mode & 0o777
    assert mode & 0o644 == 0o644 or os.name != "posix"  # readable like any normal file


def test_write_atomic_fsyncs_before_replacing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        calls.append("fsync")
        real_fsync(fd)

    def replace(src: str, dst: str, **dir_fds: int) -> None:
        calls.append("replace")
        real_replace(src, dst, **dir_fds)

    monkeypatch.setattr(outputs.os, "fsync", fsync)
    monkeypatch.setattr(outputs.os, "replace", replace)
    write_atomic(tmp_path / "x.pdf", b"%PDF-1.7")
    assert calls[:2] == ["fsync", "replace"]


def test_crash_before_replace_keeps_the_old_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old complete file")

    def crash(src: object, dst: object, **dir_fds: int) -> None:
        raise OSError("disk vanished")

    monkeypatch.setattr(outputs.os, "replace", crash)
    with pytest.raises(OSError, match="disk vanished"):
        write_atomic(target, b"new half-written")
    assert target.read_bytes() == b"old complete file"
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]  # no temp file left behind


def test_crash_while_writing_leaves_no_partial_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "new.docx"

    def crash(fd: int) -> None:
        raise OSError("fsync failed")

    monkeypatch.setattr(outputs.os, "fsync", crash)
    with pytest.raises(OSError, match="fsync failed"):
        write_atomic(target, b"PK\x03\x04 partial")
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------- hostile names and links


@pytest.mark.parametrize(
    "name",
    ["x\x85.pdf", "report\u202egpj.pdf", "a\u2028b.pdf", "COM¹.pdf", "lpt².md", "CONIN$.pdf",
     "conout$", "x\ud800.pdf", "zero\u200bwidth.pdf", "sources_used.json",
     "Sources_Used.json.lock"],
)
def test_odd_output_names_are_refused(name: str) -> None:
    with pytest.raises(OutputPathError):
        validate_name(name)


def test_a_name_taken_for_the_provenance_files_says_whose_it_is() -> None:
    """The lock's name and the copies' start as the provenance file's does: the message says
    so, not that the name is that file's."""
    with pytest.raises(OutputPathError, match=r"'sources_used\.json\.lock\.md' starts as the "
                       r"provenance file's name does \('sources_used\.json': its own, its "
                       r"lock's and its copies'\)"):
        validate_name("sources_used.json.lock.md")


def test_a_planted_link_at_the_artifact_name_is_replaced_not_followed(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("untouched")
    (out / "sources_used.json").write_text("[]\n")
    (out / "a.md").symlink_to(outside)
    (out / "b.md").symlink_to(out / "sources_used.json")
    from renderers import write_markdown

    for name in ("a.md", "b.md"):
        write_markdown("Text.", out / name)
        assert not (out / name).is_symlink()
        assert (out / name).read_text().startswith("Text.")
    assert outside.read_text() == "untouched"
    records = json.loads((out / "sources_used.json").read_text())
    assert sorted(r["filename"] for r in records) == ["a.md", "b.md"]


def test_a_directory_swapped_for_a_link_during_the_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    real_open = os.open

    def swap_then_open(path: object, flags: int, *args: object, **kwargs: object) -> int:
        if Path(str(path)) == out and flags & os.O_DIRECTORY:
            out.rename(tmp_path / "moved")
            out.symlink_to(elsewhere)
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(outputs.os, "open", swap_then_open)
    with pytest.raises(OSError):
        write_atomic(out / "report.pdf", b"%PDF")
    assert list(elsewhere.iterdir()) == []
