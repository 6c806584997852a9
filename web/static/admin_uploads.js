// Admin page, uploads: the file input (with an optional title), a folder
// picker and a drop zone for files and folders. Each file is sent on its own
// with "Prefer: respond-async" through XMLHttpRequest (upload progress); the
// server answers 202 with an ingestion job at once, so a proxy's time limit
// never cuts a large PDF, and the job's progress (passages embedded) is
// then followed with Ragd.admin.watchJob. Files go one after another; a full
// ingestion queue (503) is retried after its Retry-After.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;
  var admin = Ragd.admin;
  // What the server extracts; other files in a folder are left out.
  var SUPPORTED = /\.(txt|text|md|markdown|html?|pdf|csv|tsv|docx|odt|pptx|epub)$/i;

  // One upload row: file name, <progress>, status text, Cancel.
  function UploadItem(file, label) {
    this.progress = el("progress", { max: "1", value: "0", "data-testid": "upload-progress" });
    this.status = el("div", { class: "muted", "data-testid": "upload-status", role: "status", text: "uploading…" });
    this.cancelButton = el("button", { type: "button", class: "small", "data-testid": "upload-cancel",
      text: "Cancel" });
    this.node = el("div", { class: "upload-item", "data-testid": "upload-item", "data-state": "uploading",
      "data-phase": "upload" }, [
      el("div", { class: "upload-head" }, [
        el("span", { class: "name", "data-testid": "upload-item-name", text: label + " (" + Ragd.formatBytes(file.size) + ")" }),
        this.cancelButton,
      ]),
      this.progress,
      this.status,
    ]);
    $("uploads").prepend(this.node);
  }

  UploadItem.prototype.phase = function (phase, text) {
    this.node.setAttribute("data-phase", phase);
    this.status.textContent = text;
  };

  // done / duplicate / error / cancelled: the bar and the button go.
  UploadItem.prototype.finish = function (state, text) {
    this.node.setAttribute("data-state", state);
    this.node.setAttribute("data-phase", "finished");
    this.status.textContent = text;
    this.status.className = state === "error" ? "error" : state === "done" ? "notice" : "muted";
    this.progress.remove();
    this.cancelButton.remove();
  };

  // The job's progress: passages embedded of all, or indeterminate before
  // the text is split.
  UploadItem.prototype.showJob = function (job) {
    this.node.setAttribute("data-job", String(job.id));
    this.node.setAttribute("data-job-state", job.state);
    if (job.state === "queued") {
      this.progress.removeAttribute("value");
      this.phase("queued", "waiting for ingestion…");
    } else if (job.state === "running" && job.chunks_total > 0) {
      this.progress.max = job.chunks_total;
      this.progress.value = job.chunks_done;
      this.phase("running", "indexing: " + Ragd.formatNumber(job.chunks_done) + " of " +
        Ragd.formatNumber(job.chunks_total) + " passages");
    } else if (job.state === "running") {
      this.progress.removeAttribute("value");
      this.phase("running", "extracting text…");
    }
  };

  function passages(n) {
    return Ragd.formatNumber(n) + (n === 1 ? " passage" : " passages");
  }

  // The outcome of a finished job, as the upload row shows it.
  UploadItem.prototype.showOutcome = function (body, fileName) {
    var job = body.job || {};
    var doc = body.document || null;
    if (job.state === "done") {
      var duplicate = job.duplicate === true;
      if (duplicate) {
        this.finish("duplicate", "Already in the library as \u201c" + ((doc && doc.title) || fileName) + "\u201d.");
      } else {
        this.finish("done", "Added: " + passages(doc ? doc.chunks : job.chunks_total) + ".");
      }
      if (doc) this.node.setAttribute("data-document", String(doc.id));
    } else if (job.state === "cancelled") {
      this.finish("cancelled", "Upload cancelled.");
    } else {
      this.finish("error", "Refused: " + (job.error || "ingestion failed") + ".");
    }
  };

  function sleep(ms) {
    return new Promise(function (resolve) { setTimeout(resolve, ms); });
  }

  // Sends the bytes; resolves to {status, body, retryAfter} (never rejects;
  // status 0 for a lost connection, -1 for a cancelled send).
  function send(file, title, item) {
    return new Promise(function (resolve) {
      var data = new FormData();
      data.append("file", file, file.name);
      if (title) data.append("title", title);
      var xhr = new XMLHttpRequest();
      item.abort = function () { xhr.abort(); };
      xhr.open("POST", "/v1/documents");
      xhr.setRequestHeader("Accept", "application/json");
      xhr.setRequestHeader("Prefer", "respond-async");
      xhr.upload.addEventListener("progress", function (e) {
        if (!e.lengthComputable || e.total <= 0) return;
        item.progress.max = 1;
        item.progress.value = e.loaded / e.total;
        item.phase("upload", "uploading: " + Math.round(100 * e.loaded / e.total) + "%");
      });
      xhr.upload.addEventListener("load", function () {
        item.progress.removeAttribute("value");
        item.phase("upload", "uploaded; waiting for the server…");
      });
      xhr.addEventListener("load", function () {
        var body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch (e) {
          body = null;
        }
        var retry = parseInt(xhr.getResponseHeader("Retry-After") || "", 10);
        resolve({ status: xhr.status, body: body, retryAfter: isNaN(retry) ? null : retry, text: xhr.responseText });
      });
      xhr.addEventListener("error", function () { resolve({ status: 0 }); });
      xhr.addEventListener("abort", function () { resolve({ status: -1 }); });
      xhr.send(data);
    });
  }

  // Uploads one file. Resolves once the server has taken it (or refused it);
  // `item.finished` resolves when its ingestion is over.
  async function uploadOne(file, title, label) {
    var item = new UploadItem(file, label || file.name);
    var cancelled = false;
    var watch = null;
    item.cancelButton.addEventListener("click", function () {
      cancelled = true;
      item.cancelButton.disabled = true;
      if (watch) {
        watch.cancel().catch(function (err) {
          item.cancelButton.disabled = false;
          item.phase(item.node.getAttribute("data-phase"), "Cannot cancel: " + Ragd.describeError(err));
        });
      } else if (item.abort) {
        item.abort();
      }
    });
    for (;;) {
      var r = await send(file, title, item);
      if (r.status === -1 || cancelled) {
        item.finish("cancelled", "Upload cancelled.");
        return null;
      }
      if (r.status === 202 && r.body && r.body.job) {
        watch = admin.watchJob(r.body.job, function (job) { item.showJob(job); });
        return watch.done.then(function (body) {
          item.showOutcome(body, file.name);
          if (body.job && body.job.state === "done" && admin.documents) admin.documents.reloadSoon();
          return body;
        });
      }
      if (r.status === 503 && r.retryAfter !== null) {
        // The ingestion queue is full: try again when the server says.
        item.progress.removeAttribute("value");
        item.phase("upload", "the server's ingestion queue is full; trying again in " +
          Ragd.formatDuration(r.retryAfter) + "…");
        await sleep(r.retryAfter * 1000);
        if (cancelled) {
          item.finish("cancelled", "Upload cancelled.");
          return null;
        }
        continue;
      }
      if (r.status === 401) Ragd.goToLogin();
      if (r.status === 0) {
        item.finish("error", "Upload failed: the connection to the server was lost.");
        return null;
      }
      var err = new Ragd.ApiError(r.status, r.body && r.body.error ? r.body.error
        : { message: (r.text || "").slice(0, 300) }, r.retryAfter);
      item.finish("error", Ragd.describeError(err));
      return null;
    }
  }

  // Uploads the files one after another; ingestion runs meanwhile.
  async function uploadAll(entries, title) {
    var jobs = [];
    for (var i = 0; i < entries.length; i++) {
      var e = entries[i];
      var outcome = uploadOne(e.file, title, e.path);
      // The next file starts once the server has this one (or refused it).
      jobs.push(outcome);
      await Promise.race([outcome, waitAccepted()]);
    }
    return Promise.all(jobs);
  }

  // Resolves once no upload is sending bytes (the newest row left "upload").
  function waitAccepted() {
    return new Promise(function (resolve) {
      var check = function () {
        var sending = document.querySelector('[data-testid="upload-item"][data-phase="upload"]');
        if (!sending) resolve();
        else setTimeout(check, 100);
      };
      check();
    });
  }

  function note(text) {
    $("upload-note").textContent = text || "";
    $("upload-note").classList.toggle("hidden", !text);
  }

  // Files picked from a folder or dropped: the supported ones, with their
  // paths inside the folder; a note says what was left out.
  function keepSupported(entries) {
    var kept = entries.filter(function (e) {
      var base = e.file.name;
      return SUPPORTED.test(base) && base.charAt(0) !== ".";
    });
    var skipped = entries.length - kept.length;
    note(skipped ? "Left out " + skipped + (skipped === 1 ? " file" : " files") +
      " of a type ragd does not read (or hidden)." : "");
    return kept;
  }

  $("upload-form").addEventListener("submit", async function (e) {
    e.preventDefault();
    var input = $("file-input");
    var files = Array.prototype.slice.call(input.files || []);
    if (!files.length) {
      input.focus();
      return;
    }
    note("");
    var title = files.length === 1 ? $("upload-title").value.trim() : "";
    var button = $("upload-button");
    button.disabled = true;
    var all = uploadAll(files.map(function (f) { return { file: f, path: f.name }; }), title);
    input.value = "";
    $("upload-title").value = "";
    await all;
    button.disabled = false;
  });

  $("folder-input").addEventListener("change", function () {
    var input = $("folder-input");
    var entries = Array.prototype.slice.call(input.files || []).map(function (f) {
      return { file: f, path: f.webkitRelativePath || f.name };
    });
    input.value = "";
    var kept = keepSupported(entries);
    if (kept.length) uploadAll(kept, "");
  });

  // ------------------------------------------------------------ drop zone

  // All files under a dropped entry (a folder is read to the bottom).
  function readEntry(entry, prefix) {
    if (entry.isFile) {
      return new Promise(function (resolve) {
        entry.file(function (f) { resolve([{ file: f, path: prefix + f.name }]); },
          function () { resolve([]); });
      });
    }
    if (!entry.isDirectory) return Promise.resolve([]);
    var reader = entry.createReader();
    var children = [];
    return new Promise(function (resolve) {
      // readEntries answers in batches until an empty one.
      var more = function () {
        reader.readEntries(function (batch) {
          if (!batch.length) {
            Promise.all(children.map(function (c) { return readEntry(c, prefix + entry.name + "/"); }))
              .then(function (lists) { resolve([].concat.apply([], lists)); });
            return;
          }
          children = children.concat(Array.prototype.slice.call(batch));
          more();
        }, function () { resolve([]); });
      };
      more();
    });
  }

  var zone = $("drop-zone");
  ["dragenter", "dragover"].forEach(function (type) {
    zone.addEventListener(type, function (e) {
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = "copy";
      zone.classList.add("over");
    });
  });
  zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  zone.addEventListener("drop", async function (e) {
    e.preventDefault();
    zone.classList.remove("over");
    var dt = e.dataTransfer;
    if (!dt) return;
    var entries = [];
    var items = Array.prototype.slice.call(dt.items || []);
    var fsEntries = items.map(function (i) { return i.webkitGetAsEntry ? i.webkitGetAsEntry() : null; })
      .filter(function (x) { return x; });
    if (fsEntries.length) {
      var lists = await Promise.all(fsEntries.map(function (x) { return readEntry(x, ""); }));
      entries = [].concat.apply([], lists);
    } else {
      entries = Array.prototype.slice.call(dt.files || []).map(function (f) { return { file: f, path: f.name }; });
    }
    var kept = keepSupported(entries);
    if (kept.length) uploadAll(kept, "");
  });
  // Elsewhere on the page a dropped file must not replace the page.
  window.addEventListener("dragover", function (e) { e.preventDefault(); });
  window.addEventListener("drop", function (e) { e.preventDefault(); });

  // A click (or Enter) on the zone picks files that go at once, as a drop does.
  var picker = el("input", { type: "file", multiple: true, class: "hidden", "data-testid": "drop-input",
    tabindex: "-1", "aria-hidden": "true" });
  zone.appendChild(picker);
  picker.addEventListener("click", function (e) { e.stopPropagation(); });
  picker.addEventListener("change", function () {
    var entries = Array.prototype.slice.call(picker.files || []).map(function (f) { return { file: f, path: f.name }; });
    picker.value = "";
    note("");
    if (entries.length) uploadAll(entries, "");
  });
  function pick() { picker.click(); }
  zone.addEventListener("click", pick);
  zone.addEventListener("keydown", function (e) {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      pick();
    }
  });
})();
