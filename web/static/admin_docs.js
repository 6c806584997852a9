// Admin page, documents: the list (searched by title or file name and sorted
// by any column in the browser), the extracted-text viewer, delete, and
// re-index (POST /v1/documents/{id}/reindex answers 202 with a job that is
// followed like an asynchronous upload; the document keeps its id).
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;
  var admin = Ragd.admin;

  var docs = [];
  var sort = { key: "added", dir: -1 };  // newest first
  var reindexing = {};  // document id -> the row's progress parts while a job runs

  var KEYS = {
    title: function (d) { return (d.title || d.source || "").toLowerCase(); },
    type: function (d) { return (d.media_type || "").toLowerCase(); },
    size: function (d) { return d.bytes || 0; },
    chunks: function (d) { return d.chunks || 0; },
    added: function (d) {
      var t = Ragd.parseDate(d.created_at);
      return t ? t.getTime() : 0;
    },
  };

  function compare(a, b) {
    var ka = KEYS[sort.key](a), kb = KEYS[sort.key](b);
    if (ka < kb) return -sort.dir;
    if (ka > kb) return sort.dir;
    return (a.id - b.id) * sort.dir;
  }

  function matches(d, q) {
    if (!q) return true;
    return (d.title || "").toLowerCase().indexOf(q) >= 0 || (d.source || "").toLowerCase().indexOf(q) >= 0;
  }

  function render() {
    var rows = $("document-rows");
    var q = $("doc-search").value.trim().toLowerCase();
    var shown = docs.filter(function (d) { return matches(d, q); }).sort(compare);
    Ragd.clear(rows);
    shown.forEach(function (d) { rows.appendChild(documentRow(d)); });
    $("doc-count").textContent = q ? "(" + shown.length + " of " + docs.length + ")" : "(" + docs.length + ")";
    $("no-documents").classList.toggle("hidden", docs.length > 0);
    $("no-matches").classList.toggle("hidden", !(docs.length > 0 && shown.length === 0));
    document.querySelectorAll("#documents th[aria-sort]").forEach(function (th) {
      var key = th.querySelector("button.sort").dataset.sort;
      th.setAttribute("aria-sort", key !== sort.key ? "none" : sort.dir > 0 ? "ascending" : "descending");
    });
  }

  async function reload() {
    try {
      var body = await Ragd.api("GET", "/v1/documents");
      docs = body.documents || [];
      render();
    } catch (err) {
      admin.pageError("Cannot list documents: " + Ragd.describeError(err));
    }
  }

  function documentRow(d) {
    var title = d.title || d.source || "(untitled)";
    var view = el("button", { type: "button", "data-testid": "view-document", text: "View" });
    var reindex = el("button", { type: "button", "data-testid": "reindex-document", text: "Re-index",
      title: "Extract, split and embed this document again (it keeps its id)" });
    var del = el("button", { type: "button", class: "danger", "data-testid": "delete-document", text: "Delete" });
    var state = el("div", { class: "reindex-state small" });
    var row = el("tr", { "data-testid": "document-row", "data-id": d.id }, [
      el("td", { class: "title", "data-testid": "document-title", title: d.source || "", text: title }),
      el("td", { class: "wide", "data-testid": "document-type", text: d.media_type || "" }),
      el("td", { class: "num", "data-testid": "document-size", "data-bytes": d.bytes, text: Ragd.formatBytes(d.bytes) }),
      el("td", { class: "num", "data-testid": "document-chunks", text: Ragd.formatNumber(d.chunks) }),
      el("td", { class: "wide", "data-testid": "document-date", text: Ragd.formatDate(d.created_at) }),
      el("td", { class: "actions" }, [view, " ", reindex, " ", del, state]),
    ]);
    view.addEventListener("click", function () { viewDocument(d.id, title); });
    reindex.addEventListener("click", function () { startReindex(d, reindex); });
    del.addEventListener("click", async function () {
      if (!window.confirm("Delete \u201c" + title + "\u201d? Its passages leave the index and can no longer be cited.")) {
        return;
      }
      del.disabled = true;
      try {
        await Ragd.api("DELETE", "/v1/documents/" + encodeURIComponent(d.id));
        if (String($("doc-view").dataset.id) === String(d.id)) $("doc-view").classList.add("hidden");
        reload();
      } catch (err) {
        del.disabled = false;
        window.alert("Cannot delete: " + Ragd.describeError(err));
      }
    });
    // A re-index in progress survives the list being redrawn.
    var running = reindexing[d.id];
    if (running) {
      reindex.disabled = true;
      state.appendChild(running.box);
    } else if (d.reindexOutcome) {
      state.appendChild(el("span", { "data-testid": "reindex-status", "data-state": d.reindexOutcome.state,
        class: d.reindexOutcome.state === "done" ? "notice" : "error", text: d.reindexOutcome.text }));
    }
    return row;
  }

  async function startReindex(d, button) {
    button.disabled = true;
    var progress = el("progress", { "data-testid": "reindex-progress" });
    var status = el("span", { "data-testid": "reindex-status", "data-state": "running", text: "re-indexing…" });
    var cancel = el("button", { type: "button", class: "small", "data-testid": "reindex-cancel", text: "Cancel" });
    var box = el("div", { class: "reindex-box" }, [progress, status, " ", cancel]);
    reindexing[d.id] = { box: box };
    render();
    var outcome;
    try {
      var body = await Ragd.api("POST", "/v1/documents/" + encodeURIComponent(d.id) + "/reindex");
      var watch = admin.watchJob(body.job, function (job) {
        if (job.chunks_total > 0) {
          progress.max = job.chunks_total;
          progress.value = job.chunks_done;
          status.textContent = "re-indexing: " + Ragd.formatNumber(job.chunks_done) + " of " +
            Ragd.formatNumber(job.chunks_total) + " passages";
        } else {
          status.textContent = job.state === "queued" ? "waiting for ingestion…" : "re-indexing…";
        }
      });
      cancel.addEventListener("click", function () {
        cancel.disabled = true;
        watch.cancel().catch(function () { cancel.disabled = false; });
      });
      var end = await watch.done;
      var job = end.job || {};
      outcome = job.state === "done" ? { state: "done", text: "Re-indexed." }
        : job.state === "cancelled" ? { state: "cancelled", text: "Re-index cancelled." }
        : { state: "error", text: "Re-index failed: " + (job.error || "unknown error") + "." };
    } catch (err) {
      outcome = { state: "error", text: "Cannot re-index: " + Ragd.describeError(err) };
    }
    delete reindexing[d.id];
    await reload();
    docs.forEach(function (x) { if (x.id === d.id) x.reindexOutcome = outcome; });
    render();
  }

  async function viewDocument(id, title) {
    var box = $("doc-view");
    box.dataset.id = String(id);
    $("doc-view-title").textContent = title;
    $("doc-view-text").textContent = "Loading…";
    box.classList.remove("hidden");
    try {
      var body = await Ragd.api("GET", "/v1/documents/" + encodeURIComponent(id));
      $("doc-view-text").textContent = body.text || "(no text)";
    } catch (err) {
      $("doc-view-text").textContent = Ragd.describeError(err);
    }
  }

  $("doc-view-close").addEventListener("click", function () { $("doc-view").classList.add("hidden"); });
  $("doc-search").addEventListener("input", render);
  document.querySelectorAll("#documents button.sort").forEach(function (b) {
    b.addEventListener("click", function () {
      var key = b.dataset.sort;
      // A new column starts in its natural order: names A→Z, numbers and dates largest first.
      if (sort.key === key) sort.dir = -sort.dir;
      else sort = { key: key, dir: key === "title" || key === "type" ? 1 : -1 };
      render();
    });
  });

  // Many uploads finishing together redraw the list once.
  var soon = null;
  function reloadSoon() {
    if (soon !== null) return;
    soon = setTimeout(function () {
      soon = null;
      reload();
    }, 300);
  }

  admin.documents = { reload: reload, reloadSoon: reloadSoon };
  admin.onStart(reload);
})();
