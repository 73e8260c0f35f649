"""renderers/readers."""
