"""The Typst PDF engine (``pdf_engine="typst"``): the document model as Typst markup, compiled
in-process by the ``typst`` binding.

``markup`` (with ``tables``, ``math`` and ``code``) walks the IR over the shared rules of
:mod:`renderers.writers.common`; ``escape`` and ``parts`` are the only ways author text reaches
the markup (as string literals); ``fonts`` gives Typst the report's font files and nothing
else; ``writer`` compiles in a confined temporary root and returns the artifact.
"""
