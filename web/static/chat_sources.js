// Chat page, sources: the citation panel (the cited passage, its section and
// page, then the passage highlighted inside its whole document, from
// GET /v1/library/{id}) and the document filter (the documents a question
// is answered from, from GET /v1/library).
//
// Passage offsets from the server count UTF-8 bytes; they are turned into
// string positions here. PDF text separates pages with a form feed.
"use strict";

(function () {
  var Chat = Ragd.Chat || (Ragd.Chat = {});
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;

  // ---------------------------------------------------------- the panel

  var panel = $("citation-panel");
  var docView = $("document-view");
  var activeChip = null;
  var documentCache = {};  // id -> promise of GET /v1/library/{id}
  var openToken = 0;       // the latest open(); older document loads are dropped

  // "Guide > Install · page 3" for a citation (or a passage of the library).
  function location(c) {
    var parts = [];
    if (c.section) parts.push("Section: " + c.section);
    if (typeof c.page === "number" && c.page > 0) parts.push("Page " + c.page);
    return parts.join(" · ");
  }
  Chat.location = location;

  function loadDocument(id) {
    if (!documentCache[id]) {
      documentCache[id] = Ragd.api("GET", "/v1/library/" + encodeURIComponent(id));
      documentCache[id].catch(function () { delete documentCache[id]; });
    }
    return documentCache[id];
  }

  // Text nodes for `text`, with a page marker at each form feed; `page` is
  // the page the text starts on. Returns the page after it.
  function appendPaged(parent, text, page) {
    var pieces = text.split("\f");
    pieces.forEach(function (piece, i) {
      if (i > 0) {
        page += 1;
        parent.appendChild(el("span", { class: "page-break", "data-testid": "page-break", text: "Page " + page }));
      }
      if (piece) parent.appendChild(document.createTextNode(piece));
    });
    return page;
  }

  // The document's text with [start, end) (UTF-8 byte offsets) in a <mark>.
  function renderDocument(doc, citation) {
    Ragd.clear(docView);
    var bytes = new TextEncoder().encode(doc.text || "");
    var decoder = new TextDecoder();
    var start = Math.max(0, Math.min(bytes.length, citation.start || 0));
    var end = Math.max(start, Math.min(bytes.length, citation.end || 0));
    var paged = doc.media_type === "application/pdf";
    var page = 1;
    var body = el("div", { class: "document-text", "data-testid": "document-text" });
    page = appendPaged(body, decoder.decode(bytes.subarray(0, start)), page);
    var mark = el("mark", { "data-testid": "citation-highlight", "data-page": paged ? page : null });
    appendPaged(mark, decoder.decode(bytes.subarray(start, end)), page);
    body.appendChild(mark);
    appendPaged(body, decoder.decode(bytes.subarray(end)), page);
    docView.appendChild(body);
    docView.dataset.documentId = String(doc.id);
    // Scroll the passage into the middle of the document view only.
    var offset = mark.getBoundingClientRect().top - docView.getBoundingClientRect().top;
    docView.scrollTop = Math.max(0, docView.scrollTop + offset - docView.clientHeight / 3);
  }

  Chat.openCitation = function (citation, chip) {
    if (activeChip) activeChip.classList.remove("active");
    activeChip = chip || null;
    if (activeChip) activeChip.classList.add("active");
    $("citation-number").textContent = String(citation.n);
    $("citation-title").textContent = citation.title || "(untitled document)";
    var meta = [];
    if (citation.document_id !== undefined) meta.push("document " + citation.document_id);
    if (citation.chunk_id !== undefined) meta.push("passage " + citation.chunk_id);
    if (typeof citation.score === "number") meta.push("score " + citation.score.toFixed(3));
    $("citation-meta").textContent = meta.join(" · ");
    $("citation-location").textContent = location(citation);
    $("citation-text").textContent = citation.text || "";
    panel.dataset.n = String(citation.n);
    panel.classList.remove("hidden");
    $("citation-close").focus({ preventScroll: true });

    var token = ++openToken;
    Ragd.clear(docView);
    docView.removeAttribute("data-document-id");
    docView.appendChild(el("p", { class: "muted small", text: "Loading the document…" }));
    if (citation.document_id === undefined) return;
    loadDocument(citation.document_id).then(function (doc) {
      if (token !== openToken) return;
      renderDocument(doc, citation);
    }, function (err) {
      if (token !== openToken) return;
      Ragd.clear(docView);
      docView.appendChild(el("p", { class: "error", "data-testid": "document-error",
        text: err instanceof Ragd.ApiError && err.status === 404
          ? "This document is no longer in the library." : Ragd.describeError(err) }));
    });
  };

  Chat.closeCitation = function () {
    panel.classList.add("hidden");
    if (activeChip) {
      activeChip.classList.remove("active");
      activeChip.focus({ preventScroll: true });
    }
    activeChip = null;
  };

  $("citation-close").addEventListener("click", Chat.closeCitation);
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && !panel.classList.contains("hidden")) Chat.closeCitation();
  });

  // ---------------------------------------------------------- document filter

  var filterButton = $("doc-filter-button");
  var menu = $("doc-filter-menu");
  var list = $("doc-filter-list");
  var search = $("doc-filter-search");
  var chosenBox = $("doc-filter-chosen");
  var library = [];   // [{id, title, ...}]
  var chosen = {};    // id -> title

  Chat.chosenDocuments = function () {
    return Object.keys(chosen).map(Number).sort(function (a, b) { return a - b; });
  };

  function showChosen() {
    var ids = Chat.chosenDocuments();
    filterButton.textContent = ids.length ? "Documents: " + ids.length + " chosen" : "Documents: all";
    Ragd.clear(chosenBox);
    ids.forEach(function (id) {
      chosenBox.appendChild(el("span", { class: "doc-chip", "data-testid": "doc-filter-chip", "data-id": id,
        text: chosen[id] }));
    });
  }

  function renderMenu() {
    Ragd.clear(list);
    var needle = search.value.trim().toLowerCase();
    library.filter(function (d) { return !needle || d.title.toLowerCase().indexOf(needle) >= 0; })
      .forEach(function (d) {
        var box = el("input", { type: "checkbox", "data-testid": "doc-filter-checkbox", "data-id": d.id });
        box.checked = chosen[d.id] !== undefined;
        box.addEventListener("change", function () {
          if (box.checked) chosen[d.id] = d.title; else delete chosen[d.id];
          showChosen();
        });
        list.appendChild(el("li", { "data-testid": "doc-filter-option", "data-id": d.id }, [
          el("label", null, [box, " ", el("span", { text: d.title })]),
        ]));
      });
    if (!list.firstChild)
      list.appendChild(el("li", { class: "muted small", text: library.length ? "No match." : "No documents." }));
  }

  async function openMenu() {
    menu.classList.remove("hidden");
    filterButton.setAttribute("aria-expanded", "true");
    try {
      var body = await Ragd.api("GET", "/v1/library");
      library = (body.documents || []).map(function (d) { return { id: d.id, title: d.title || "(untitled)" }; });
      // A chosen document deleted meanwhile is dropped from the filter.
      Object.keys(chosen).forEach(function (id) {
        if (!library.some(function (d) { return String(d.id) === id; })) delete chosen[id];
      });
      showChosen();
      renderMenu();
    } catch (err) {
      Ragd.clear(list);
      list.appendChild(el("li", { class: "error", text: Ragd.describeError(err) }));
    }
    search.focus();
  }

  function closeMenu() {
    menu.classList.add("hidden");
    filterButton.setAttribute("aria-expanded", "false");
  }

  filterButton.addEventListener("click", function () {
    if (menu.classList.contains("hidden")) openMenu(); else closeMenu();
  });
  $("doc-filter-done").addEventListener("click", closeMenu);
  $("doc-filter-clear").addEventListener("click", function () {
    chosen = {};
    showChosen();
    renderMenu();
  });
  search.addEventListener("input", renderMenu);
  menu.addEventListener("keydown", function (e) {
    if (e.key === "Escape") {
      e.stopPropagation();
      closeMenu();
      filterButton.focus();
    }
  });
})();
