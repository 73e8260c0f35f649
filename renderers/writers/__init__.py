"""renderers/writers."""
