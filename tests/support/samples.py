"""The sample reports in ``samples/`` as the golden and determinism tests render them."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from renderers.cli import sample_inputs
from renderers.options import FORMATS
from renderers.testing import render_artifacts
from tests.helpers import ROOT

#: Per-sample render options (the long report's PNG: first pages only, to bound test time;
#: the engineering note with its table of contents).
SAMPLE_OPTIONS: dict[str, dict[str, Any]] = {
    "long-report": {"pages": (1, 2)},
    "engineering-note": {"toc": True},
}
#: The formats the PDF engine typesets: rendered again with each engine besides WeasyPrint.
ENGINE_FORMATS: tuple[str, ...] = ("pdf", "png")
#: The PDF engines besides the default one, each with golden files of its own.
OTHER_ENGINES: tuple[str, ...] = ("typst",)


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

    def render_engine(self, out_dir: Path, engine: str) -> list[Path]:
        """This sample's PDF and PNG through the PDF engine ``engine``."""
        return render_artifacts(
            self.input, out_dir, sources_pool=str(self.pool), formats=ENGINE_FORMATS,
            pdf_engine=engine, **self.options,
        )  # fmt: skip


SAMPLES: list[Sample] = [
    Sample(path.stem, path, pool, SAMPLE_OPTIONS.get(path.stem, {}))
    for path, pool in sample_inputs(ROOT / "samples")
]
SAMPLE_IDS = [sample.name for sample in SAMPLES]
