"""Every sample in samples/ × every output format against its golden files in tests/golden/.

Regenerate with ``make golden`` (``pytest tests/test_golden.py --update-golden``) and review the
diff. The 50-page long report is rasterized to PNG for its first two pages only.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from renderers.api import EXTENSIONS
from renderers.cli import sample_inputs
from renderers.options import FORMATS
from renderers.testing import assert_matches_golden, normalize_artifact, render_artifacts

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "golden"
#: Per-sample render options (the long report's PNG: first pages only, to bound test time).
SAMPLE_OPTIONS: dict[str, dict[str, Any]] = {"long-report": {"pages": (1, 2)}}


@dataclass(frozen=True)
class Sample:
    """One sample report and how the tests render it."""

    name: str
    input: Path
    pool: Path
    options: dict[str, Any] = field(default_factory=dict)

    def render(self, out_dir: Path) -> list[Path]:
        """Every artifact of this sample in every format, written into ``out_dir``."""
        return render_artifacts(
            self.input, out_dir, sources_pool=str(self.pool), formats=FORMATS, **self.options
        )


SAMPLES: list[Sample] = [
    Sample(path.stem, path, pool, SAMPLE_OPTIONS.get(path.stem, {}))
    for path, pool in sample_inputs(ROOT / "samples")
]
SAMPLE_IDS = [sample.name for sample in SAMPLES]


def of_format(paths: list[Path], fmt: str) -> list[Path]:
    """The artifacts among ``paths`` that belong to ``fmt``."""
    return [path for path in paths if path.suffix == EXTENSIONS[fmt]]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, list[Path]]]:
    """Each sample rendered once (without SOURCE_DATE_EPOCH, like the golden files)."""
    out = tmp_path_factory.mktemp("golden-render")
    cache: dict[str, list[Path]] = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("SOURCE_DATE_EPOCH", raising=False)
        for sample in SAMPLES:
            cache[sample.name] = sample.render(out / sample.name)
    yield cache
    shutil.rmtree(out, ignore_errors=True)


def test_there_are_samples_for_every_use() -> None:
    assert len(SAMPLES) >= 6, SAMPLE_IDS
    assert {p.suffix for s in SAMPLES for p in [s.input]} >= {".md", ".html"}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_output_matches_golden(
    sample: Sample, fmt: str, rendered: dict[str, list[Path]], update_golden: bool
) -> None:
    artifacts = of_format(rendered[sample.name], fmt)
    assert artifacts, f"{sample.name}: nothing written for {fmt}"
    golden_dir = GOLDEN / sample.name
    for artifact in artifacts:
        assert_matches_golden(artifact, golden_dir, update=update_golden or None)
    if update_golden:  # drop goldens of PNG pages that no longer exist
        names = {a.name for a in artifacts}
        for stale in golden_dir.glob(f"*{EXTENSIONS[fmt]}"):
            if stale.name not in names:
                shutil.rmtree(stale)
    written = {p.name for p in golden_dir.glob(f"*{EXTENSIONS[fmt]}")}
    assert written == {a.name for a in artifacts}, "golden files for pages that were not rendered"


def test_a_changed_output_fails_with_a_readable_diff(
    rendered: dict[str, list[Path]], tmp_path: Path
) -> None:
    """Perturb a rendered artifact: the comparison must fail and show the changed line."""
    sample = SAMPLES[0]
    source = of_format(rendered[sample.name], "md")[0]
    golden = tmp_path / "golden"
    assert_matches_golden(source, golden, update=True)
    changed = tmp_path / source.name
    changed.write_text(source.read_text(encoding="utf-8") + "\nA sentence nobody wrote.\n")
    with pytest.raises(AssertionError) as caught:
        assert_matches_golden(changed, golden, update=False)
    assert "+A sentence nobody wrote." in str(caught.value)
    assert normalize_artifact(source) != normalize_artifact(changed)
