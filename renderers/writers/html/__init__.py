"""renderers/writers/html."""
