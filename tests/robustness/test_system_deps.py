"""``.ci/system-deps`` decides by the commands, libraries and fonts present, not package names."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.helpers import ROOT

SCRIPT = ROOT / ".ci" / "system-deps"
BASH = shutil.which("bash") or "/bin/bash"
FAMILIES = ["Noto Sans Devanagari", "Noto Sans CJK JP", "Noto Color Emoji", "DejaVu Sans",
            "Liberation Sans"]
LIBS = ["libpango-1.0.so.0", "libpangoft2-1.0.so.0", "libharfbuzz-subset.so.0"]


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


def _machine(
    tmp_path: Path, *, impress: bool, installed: str = "", math: bool = True
) -> tuple[Path, dict[str, str]]:
    """A fake machine: LibreOffice (writer-nogui style, with or without Impress and Math),
    Chromium, poppler, redis-server, pandoc, the fonts and libraries, a dpkg that knows no
    package except ``installed``, and an apt-get that records what it was asked to install."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("grep", "dirname", "readlink", "ls", "cat"):  # the only real commands it sees
        (bin_dir / tool).symlink_to(Path("/usr/bin", tool) if Path("/usr/bin", tool).exists()
                                    else Path("/bin", tool))
    program = tmp_path / "lo" / "program"
    program.mkdir(parents=True)
    _fake(program, "soffice", "exit 0")
    (bin_dir / "soffice").symlink_to(program / "soffice")
    registry = tmp_path / "lo" / "share" / "registry"
    registry.mkdir(parents=True)
    (registry / "writer.xcd").write_text("")
    if impress:
        (registry / "impress.xcd").write_text("")
    if math:
        (registry / "math.xcd").write_text("")
    for name in ("chromium", "pdftotext", "pdftoppm", "redis-server", "pandoc"):
        _fake(bin_dir, name, "exit 0")
    _fake(bin_dir, "fc-list", "printf '%s\\n' " + " ".join(f"'{f}'" for f in FAMILIES))
    _fake(bin_dir, "ldconfig", "printf '\\t%s (libc6,x86-64)\\n' " + " ".join(LIBS))
    status = "install ok installed"
    _fake(bin_dir, "dpkg-query",
          f'[ "$3" = "{installed}" ] && [ -n "{installed}" ] && printf "{status}" && exit 0\n'
          "exit 1")
    log = tmp_path / "apt.log"
    _fake(bin_dir, "apt-get", f'echo "$@" >> {log}')
    _fake(bin_dir, "id", "echo 0")
    env = {**os.environ, "PATH": str(bin_dir)}
    return log, env


def test_an_equivalent_install_under_other_package_names_is_left_alone(tmp_path: Path) -> None:
    log, env = _machine(tmp_path, impress=True)
    subprocess.run([BASH, str(SCRIPT), "all"], check=True, env=env, timeout=60)
    assert not log.exists(), log.read_text()


def test_a_missing_impress_is_added_in_the_flavour_of_the_core(tmp_path: Path) -> None:
    log, env = _machine(tmp_path, impress=False, installed="libreoffice-core-nogui")
    subprocess.run([BASH, str(SCRIPT), "all"], check=True, env=env, timeout=60)
    asked = log.read_text()
    assert "libreoffice-impress-nogui" in asked
    assert "libreoffice-writer" not in asked and "chromium" not in asked


def test_a_missing_math_module_is_added_in_the_flavour_of_the_core(tmp_path: Path) -> None:
    log, env = _machine(tmp_path, impress=True, math=False, installed="libreoffice-core-nogui")
    subprocess.run([BASH, str(SCRIPT), "all"], check=True, env=env, timeout=60)
    asked = log.read_text()
    assert "libreoffice-math-nogui" in asked and "libreoffice-impress" not in asked


def test_missing_commands_and_fonts_are_installed(tmp_path: Path) -> None:
    log, env = _machine(tmp_path, impress=True)
    (tmp_path / "bin" / "chromium").unlink()
    _fake(tmp_path / "bin", "fc-list", "echo 'DejaVu Sans'")
    subprocess.run([BASH, str(SCRIPT), "all"], check=True, env=env, timeout=60)
    asked = log.read_text()
    for package in ("chromium", "fonts-noto-core", "fonts-noto-cjk", "fonts-noto-color-emoji",
                    "fonts-liberation2"):
        assert package in asked
    assert "libreoffice" not in asked and "poppler" not in asked
