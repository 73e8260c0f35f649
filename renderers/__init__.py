"""citerender's readers, document model and writers."""
