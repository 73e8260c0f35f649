"""renderers/writers/pptx."""
