(function () {
  "use strict";
  var pop = document.createElement("div");
  pop.id = "cite-popover";
  pop.setAttribute("role", "tooltip");
  pop.hidden = true;
  document.body.appendChild(pop);
  var current = null;

  function citation(node) {
    var link = node && node.closest ? node.closest(".cite a[href^='#']") : null;
    return link && target(link) ? link : null;
  }
  function target(link) {
    return document.getElementById(decodeURIComponent(link.getAttribute("href").slice(1)));
  }
  function line(tag, cls, text) {
    if (!text) return;
    var el = document.createElement(tag);
    el.className = cls;
    el.textContent = text;
    pop.appendChild(el);
  }
  function fill(entry) {
    pop.textContent = "";
    var d = entry.dataset;
    if (d.title) {
      line("strong", "cite-popover-title", d.title);
      line("span", "cite-popover-meta", [d.label, d.date].filter(Boolean).join(" \u00b7 "));
      line("p", "cite-popover-snippet", d.snippet);
    } else {
      var copy = entry.cloneNode(true);
      copy.querySelectorAll(".note-mark, .backlink").forEach(function (n) { n.remove(); });
      line("p", "cite-popover-snippet", copy.textContent.trim());
    }
  }
  function place(link) {
    var small = window.innerWidth < 600;
    pop.classList.toggle("sheet", small);
    var r = link.getBoundingClientRect();
    if (small) {
      pop.style.left = pop.style.top = "";
      var top = window.innerHeight - pop.offsetHeight;
      if (r.bottom > top - 8) window.scrollBy(0, r.bottom - top + 16);
      else if (r.top < 0) window.scrollBy(0, r.top - 16);
      return;
    }
    var width = pop.offsetWidth, height = pop.offsetHeight;
    var left = Math.max(8, Math.min(r.left, window.innerWidth - width - 8));
    var below = r.bottom + 6;
    var y = below + height > window.innerHeight && r.top - height - 6 > 0 ? r.top - height - 6 : below;
    pop.style.left = left + window.scrollX + "px";
    pop.style.top = y + window.scrollY + "px";
  }
  function show(link) {
    if (current === link) return;
    hide();
    fill(target(link));
    pop.hidden = false;
    link.setAttribute("aria-describedby", "cite-popover");
    current = link;
    place(link);
  }
  function hide() {
    if (!current) return;
    pop.hidden = true;
    current.removeAttribute("aria-describedby");
    current = null;
  }
  document.addEventListener("mouseover", function (e) {
    var link = citation(e.target);
    if (link) show(link);
    else if (current && !pop.contains(e.target)) hide();
  });
  document.addEventListener("focusin", function (e) {
    var link = citation(e.target);
    if (link) show(link); else hide();
  });
  document.addEventListener("focusout", function (e) {
    if (current && e.target === current && !citation(e.relatedTarget)) hide();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && current) { hide(); e.preventDefault(); }
  });
  window.addEventListener("resize", function () { if (current) place(current); });
})();
