"""renderers/service."""
