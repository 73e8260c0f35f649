"""The one error of the math package (its own module so that every step of parsing can raise it)."""


class MathError(ValueError):
    """TeX that cannot become math: the message says why (shown in the warning)."""
