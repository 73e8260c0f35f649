// citerender export page: export buttons download the rendered file; a debounced HTML render
// feeds the sandboxed preview. No external resources, no inline script (see the page's CSP).
"use strict";

const PREVIEW_DELAY_MS = 500;
const $ = (id) => document.getElementById(id);

/** The request body from the editors; throws an Error naming the field on bad JSON. */
function requestBody(format) {
  let pool;
  const poolText = $("pool").value.trim();
  if (poolText) {
    try {
      pool = JSON.parse(poolText);
    } catch (err) {
      throw new Error(`Sources pool: not valid JSON (${err.message})`);
    }
  }
  const body = { format, content: $("content").value, numbering: $("numbering").value };
  if (pool !== undefined) body.sources_pool = pool;
  const title = $("title").value.trim();
  if (title) body.title = title;
  const lang = $("lang").value.trim();
  if (lang) body.lang = lang;
  const contentFormat = $("content-format").value;
  if (contentFormat) body.content_format = contentFormat;
  const style = $("csl").value;
  if (style) body.csl = style;
  body.citation_format = $("citation-format").value;
  if (format === "pdf" || format === "png") body.pdf_engine = $("pdf-engine").value;
  return body;
}

/** POST /render; resolves to the Response or throws an Error with the service's message. */
async function render(format, signal) {
  let response;
  try {
    response = await fetch("/render", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(requestBody(format)),
      signal,
    });
  } catch (err) {
    // fetch rejects with a bare "Failed to fetch" when the service is stopped or unreachable.
    if (err.name !== "TypeError") throw err;
    throw new Error(`Could not reach the citerender service (${err.message}); check that it `
                    + "is running, then retry.");
  }
  if (!response.ok) {
    let message = `${response.status} ${response.statusText}`;
    try {
      const data = await response.json();
      if (data.error) message = `${response.status}: ${data.error}`;
      if (data.error && data.field && !data.error.includes(data.field)) {
        message += ` (field: ${data.field})`;
      }
    } catch (_) { /* not JSON: keep the status line */ }
    if (response.status === 413) message += ` — ${sizesNote()}`;
    throw new Error(message);
  }
  return response;
}

/** What a too-large request was made of, so the user knows which field to shorten. */
function sizesNote() {
  const size = (id) => {
    const bytes = new TextEncoder().encode($(id).value).length;
    return bytes < 1_048_576 ? `${Math.ceil(bytes / 1024)} KB`
                             : `${(bytes / 1_048_576).toFixed(1)} MB`;
  };
  return `this export sends Content ${size("content")} and Sources pool ${size("pool")}`;
}

/** The file name from Content-Disposition (RFC 5987 filename* first). */
function filenameFrom(response, fallback) {
  const header = response.headers.get("Content-Disposition") || "";
  const star = /filename\*=UTF-8''([^;]+)/i.exec(header);
  if (star) {
    try { return decodeURIComponent(star[1]); } catch (_) { /* fall through */ }
  }
  const plain = /filename="([^"]+)"/i.exec(header);
  return plain ? plain[1] : fallback;
}

/** Shows `message` in the error box `id` (hidden when empty). */
function showError(id, message) {
  const box = $(id);
  box.textContent = message;
  box.hidden = !message;
}

/** The file `blob` saved as `name` through a temporary link. */
function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** The export under way, if any: one at a time, so the one Cancel control names no choice. */
let running = null;

/**
 * Marks every export button busy while `active` renders (idle when null) and shows the Cancel
 * control. aria-disabled rather than disabled: a disabled button drops keyboard focus to the
 * page's body, losing a keyboard user's place; this one keeps focus and ignores presses. The
 * other busy buttons leave the tab order, as disabled ones would, so Tab from the running
 * export lands on Cancel.
 */
function setExporting(active) {
  for (const button of document.querySelectorAll("button[data-format]")) {
    if (active) button.setAttribute("aria-disabled", "true");
    else button.removeAttribute("aria-disabled");
    if (active && button !== active) button.tabIndex = -1;
    else button.removeAttribute("tabindex");
  }
  $("export-cancel").hidden = !active;
}

async function exportAs(button) {
  if (running) return;
  const format = button.dataset.format;
  const label = button.textContent;
  running = { button, controller: new AbortController() };
  const { signal } = running.controller;
  setExporting(button);
  showError("export-error", "");
  $("export-status").textContent = `Rendering ${label}…`;
  try {
    const response = await render(format, signal);
    // Aborting also stops reading the body: a cancel during the download rejects here.
    const blob = await response.blob();
    const name = filenameFrom(response, `report.${format}`);
    download(blob, name);
    const used = response.headers.get("X-Sources-Used") || "none";
    $("export-status").textContent = `Downloaded ${name} — sources cited: ${used}`;
  } catch (err) {
    if (signal.aborted) {
      $("export-status").textContent = `${label} export cancelled`;
    } else {
      $("export-status").textContent = "";
      showError("export-error", err.message);
    }
  } finally {
    running = null;
    setExporting(null);
  }
}

/**
 * Stops the running export's request. Focus goes back to its button first: the Cancel control
 * hides once the export ends, and focus on a hidden control would fall to the page's body.
 */
function cancelExport() {
  if (!running) return;
  if (document.activeElement === $("export-cancel")) running.button.focus();
  running.controller.abort();
}

/**
 * In a srcdoc frame, "#src-1" resolves against the page's URL and would load the page itself
 * into the frame; a base of about:srcdoc keeps citation links inside the previewed document.
 */
function withSrcdocBase(html) {
  const base = '<base href="about:srcdoc">';
  const head = /<head[^>]*>/i;
  return head.test(html) ? html.replace(head, (tag) => tag + base) : base + html;
}

let previewTimer = 0;
let previewAbort = null;

async function refreshPreview() {
  if (previewAbort) previewAbort.abort();
  previewAbort = new AbortController();
  const status = $("preview-status");
  status.textContent = "updating…";
  try {
    const response = await render("html", previewAbort.signal);
    $("preview").srcdoc = withSrcdocBase(await response.text());
    status.textContent = "";
    showError("preview-error", "");
  } catch (err) {
    if (err.name === "AbortError") return;
    status.textContent = "preview failed";
    showError("preview-error", err.message);
  }
}

function schedulePreview() {
  clearTimeout(previewTimer);
  previewTimer = setTimeout(refreshPreview, PREVIEW_DELAY_MS);
}

/**
 * An iframe never matches :focus while its own document has focus, so keyboard focus inside the
 * preview would be invisible; the "focused" class draws the frame's ring instead.
 */
function trackPreviewFocus() {
  const frame = $("preview");
  const mark = () => frame.classList.toggle("focused", document.activeElement === frame);
  window.addEventListener("blur", () => setTimeout(mark));
  window.addEventListener("focus", mark);
}

document.addEventListener("DOMContentLoaded", () => {
  trackPreviewFocus();
  for (const button of document.querySelectorAll("button[data-format]")) {
    button.addEventListener("click", () => exportAs(button));
  }
  $("export-cancel").addEventListener("click", cancelExport);
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && running) cancelExport();
  });
  for (const id of ["content", "pool", "title", "lang", "content-format", "numbering", "csl",
                    "citation-format"]) {
    $(id).addEventListener("input", schedulePreview);
  }
  refreshPreview();
});
