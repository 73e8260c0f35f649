"""Citation styles: CSL styles (bundled or a file) and citation formats, applied to a resolved
document as one pass (:func:`apply_style`) so that writers only show IR they already know."""

from renderers.styles.apply import apply_style
from renderers.styles.catalog import BUNDLED, CslStyle, load_style

__all__ = ["BUNDLED", "CslStyle", "apply_style", "load_style"]
