"""Where the ``templates/`` directory is: every writer's and the service's templates.

Its own module so that a writer needing only a template file (the Typst engine's
``report.typ``) does not import Jinja2 and the HTML writer with it. In a source checkout the
templates live at the repository root (``templates/``); in an installed wheel they are packaged
as ``renderers/_templates`` (``pyproject.toml`` force-include).
"""

from __future__ import annotations

from pathlib import Path


def templates_dir() -> Path:
    """The directory holding ``report.html.j2`` (installed wheel first, then the checkout)."""
    package = Path(__file__).resolve().parent  # renderers/
    for candidate in (package / "_templates", package.parent / "templates"):
        if (candidate / "report.html.j2").is_file():
            return candidate
    raise FileNotFoundError(
        f"citerender templates not found: looked in {package / '_templates'} and "
        f"{package.parent / 'templates'} for report.html.j2"
    )
