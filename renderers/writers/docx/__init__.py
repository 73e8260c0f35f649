"""renderers/writers/docx."""
