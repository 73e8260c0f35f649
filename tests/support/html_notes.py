"""An HTML input whose reader notes have lines to point at, behind markup spread over lines.

A multi-line script (line 3), style and comment and a tag split over lines come before the
notes: the sanitizer leaves none of their lines, so a line counted in its output would be off.
"""

from __future__ import annotations

NOTED_HTML = """<!doctype html>
<html lang="en"><head><title>Lines</title>
<script>
var x = "[[S:0]]";
</script>
<style>p { margin: 0 }
</style></head><body><p>A bad token [[S:abc]] on line 7.</p>
<!-- a comment
over two lines --><p
  class="lead">Reversed <sup class="cite"
  data-sids="3-2">[3-2]</sup> on line 10.</p>
<p>Unknown [[S:99]] on line 12, fine [[S:1]].</p>
<p><img alt="logo"
  src="javascript:alert(1)"></p>
<svg><text>[[S:0]] dropped with the svg</text></svg>
<pre>[[S:0]] is code</pre>
<p>Again [[S:0]] on line 17.</p>
</body></html>
"""

POOL = [{"sid": sid, "title": f"Source {sid}", "url": f"https://s{sid}.example"}
        for sid in (1, 2, 3)]

#: ``(code, line, message)`` of each diagnostic, in order; the unknown sid has no line, as for
#: markdown input (the citation pass names sids, not places).
NOTES = [
    ("reader-note", 7, "HTML input, line 7: invalid citation token '[[S:abc]]': 'abc' is not "
                       "a sid or a range (expected e.g. 1, 3-5); kept as text"),
    ("reader-note", 10, "HTML input, line 10: '[3-2]': reversed range '3-2' read as 2-3"),
    ("reader-note", 17, "HTML input, line 17: invalid citation token '[[S:0]]': sid 0 is not "
                        "valid: sids are positive integers; kept as text"),
    ("unknown-sid", None, "unknown sids not in the sources pool: 99"),
    ("image-refused", 13, "HTML input, line 13: image 'javascript:alert(1)' not loaded (its "
                          "alt text is shown): javascript: URLs are never loaded; accepted: a "
                          "path relative to the input (an image file under the base directory) "
                          "or a data:image/… URI"),
]
