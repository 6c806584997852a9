// Admin page: upload documents (multipart POST /v1/documents through
// XMLHttpRequest for upload progress), list and delete documents, create
// users (the new API key is shown once) and list users with their usage.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;

  function showError(box, text) {
    box.textContent = text || "";
    box.classList.toggle("hidden", !text);
  }

  // ---------------------------------------------------------- documents

  async function loadDocuments() {
    var rows = $("document-rows");
    try {
      var body = await Ragd.api("GET", "/v1/documents");
      var docs = body.documents || [];
      Ragd.clear(rows);
      docs.forEach(function (d) { rows.appendChild(documentRow(d)); });
      $("doc-count").textContent = "(" + docs.length + ")";
      $("no-documents").classList.toggle("hidden", docs.length > 0);
    } catch (err) {
      showError($("admin-error"), "Cannot list documents: " + Ragd.describeError(err));
    }
  }

  function documentRow(d) {
    var title = d.title || d.source || "(untitled)";
    var view = el("button", { type: "button", "data-testid": "view-document", text: "View" });
    var del = el("button", { type: "button", class: "danger", "data-testid": "delete-document", text: "Delete" });
    var row = el("tr", { "data-testid": "document-row", "data-id": d.id }, [
      el("td", { class: "title", "data-testid": "document-title", title: d.source || "", text: title }),
      el("td", { class: "wide", "data-testid": "document-type", text: d.media_type || "" }),
      el("td", { class: "num", "data-testid": "document-size", "data-bytes": d.bytes, text: Ragd.formatBytes(d.bytes) }),
      el("td", { class: "num", "data-testid": "document-chunks", text: Ragd.formatNumber(d.chunks) }),
      el("td", { class: "wide", "data-testid": "document-date", text: Ragd.formatDate(d.created_at) }),
      el("td", { class: "actions" }, [view, " ", del]),
    ]);
    view.addEventListener("click", function () { viewDocument(d.id, title); });
    del.addEventListener("click", async function () {
      if (!window.confirm("Delete \u201c" + title + "\u201d? Its passages leave the index and can no longer be cited.")) {
        return;
      }
      del.disabled = true;
      try {
        await Ragd.api("DELETE", "/v1/documents/" + encodeURIComponent(d.id));
        row.remove();
        if (String($("doc-view").dataset.id) === String(d.id)) $("doc-view").classList.add("hidden");
        loadDocuments();
      } catch (err) {
        del.disabled = false;
        window.alert("Cannot delete: " + Ragd.describeError(err));
      }
    });
    return row;
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

  // ---------------------------------------------------------- upload

  // Uploads one file; resolves when the server has answered (never rejects).
  function uploadOne(file, title) {
    var progress = el("progress", { max: "1", value: "0", "data-testid": "upload-progress" });
    var status = el("div", { class: "muted", "data-testid": "upload-status", text: "uploading…" });
    var item = el("div", { class: "upload-item", "data-testid": "upload-item", "data-state": "uploading" }, [
      el("div", { class: "name", text: file.name + " (" + Ragd.formatBytes(file.size) + ")" }),
      progress,
      status,
    ]);
    $("uploads").prepend(item);

    function finish(state, text) {
      item.setAttribute("data-state", state);
      status.textContent = text;
      status.className = state === "error" ? "error" : state === "done" ? "notice" : "muted";
      progress.remove();
    }

    return new Promise(function (resolve) {
      var data = new FormData();
      data.append("file", file, file.name);
      if (title) data.append("title", title);
      var xhr = new XMLHttpRequest();
      xhr.open("POST", "/v1/documents");
      xhr.withCredentials = false;  // same origin: the session cookie is sent anyway
      xhr.setRequestHeader("Accept", "application/json");
      xhr.upload.addEventListener("progress", function (e) {
        if (e.lengthComputable && e.total > 0) progress.value = e.loaded / e.total;
      });
      xhr.upload.addEventListener("load", function () {
        progress.removeAttribute("value");  // indeterminate while the server indexes
        status.textContent = "indexing…";
      });
      xhr.addEventListener("load", function () {
        var body = null;
        try {
          body = JSON.parse(xhr.responseText);
        } catch (e) {
          body = null;
        }
        if (xhr.status === 200 || xhr.status === 201) {
          var doc = (body && body.document) || {};
          if (body && body.duplicate) {
            finish("duplicate", "Already in the library as \u201c" + (doc.title || file.name) + "\u201d.");
          } else {
            finish("done", "Added: " + Ragd.formatNumber(doc.chunks) + (doc.chunks === 1 ? " passage." : " passages."));
          }
        } else {
          if (xhr.status === 401) Ragd.goToLogin();
          var retry = parseInt(xhr.getResponseHeader("Retry-After") || "", 10);
          var err = new Ragd.ApiError(xhr.status, body && body.error ? body.error
            : { message: (xhr.responseText || xhr.statusText || "").slice(0, 300) }, isNaN(retry) ? null : retry);
          finish("error", Ragd.describeError(err));
        }
        resolve();
      });
      xhr.addEventListener("error", function () {
        finish("error", "Upload failed: the connection to the server was lost.");
        resolve();
      });
      xhr.addEventListener("abort", function () {
        finish("error", "Upload cancelled.");
        resolve();
      });
      xhr.send(data);
    });
  }

  $("upload-form").addEventListener("submit", async function (e) {
    e.preventDefault();
    var input = $("file-input");
    var files = Array.prototype.slice.call(input.files || []);
    if (!files.length) {
      input.focus();
      return;
    }
    var title = files.length === 1 ? $("upload-title").value.trim() : "";
    var button = $("upload-button");
    button.disabled = true;
    for (var i = 0; i < files.length; i++) await uploadOne(files[i], title);
    button.disabled = false;
    input.value = "";
    $("upload-title").value = "";
    loadDocuments();
  });

  // ---------------------------------------------------------- users

  async function loadUsers() {
    var rows = $("user-rows");
    try {
      var body = await Ragd.api("GET", "/v1/users");
      Ragd.clear(rows);
      (body.users || []).forEach(function (u) { rows.appendChild(userRow(u)); });
    } catch (err) {
      showError($("admin-error"), "Cannot list users: " + Ragd.describeError(err));
    }
  }

  function userRow(u) {
    var hasQuota = typeof u.token_quota === "number";
    var left = hasQuota && typeof u.used === "number" ? Math.max(0, u.token_quota - u.used) : null;
    var usageButton = el("button", { type: "button", "data-testid": "user-usage-button", text: "Usage" });
    var row = el("tr", { "data-testid": "user-row", "data-id": u.id, "data-username": u.username }, [
      el("td", { "data-testid": "user-name", text: u.username }),
      el("td", { "data-testid": "user-role", text: u.role }),
      el("td", { class: "num", "data-testid": "user-quota", text: hasQuota ? Ragd.formatNumber(u.token_quota) : "default" }),
      el("td", { class: "num", "data-testid": "user-used", text: Ragd.formatNumber(u.used) }),
      el("td", { class: "num wide", "data-testid": "user-left", text: left === null ? "–" : Ragd.formatNumber(left) }),
      el("td", { class: "actions" }, [usageButton]),
    ]);
    usageButton.addEventListener("click", function () { toggleUsage(row, u); });
    return row;
  }

  async function toggleUsage(row, u) {
    var next = row.nextElementSibling;
    if (next && next.classList.contains("usage-row")) {
      next.remove();
      return;
    }
    var cell = el("td", { colspan: "6", "data-testid": "user-usage", text: "Loading…" });
    row.after(el("tr", { class: "usage-row" }, [cell]));
    try {
      var usage = await Ragd.api("GET", "/v1/users/" + encodeURIComponent(u.id) + "/usage");
      Ragd.clear(cell);
      var period = usage.period === "day" ? "today" : usage.period ? "this " + usage.period : "this period";
      cell.appendChild(el("div", {
        class: "small",
        text: Ragd.formatNumber(usage.used) + " of " + Ragd.formatNumber(usage.limit) + " tokens used " + period +
          ", " + Ragd.formatNumber(usage.remaining) + " left.",
      }));
      var days = usage.days || [];
      if (!days.length) {
        cell.appendChild(el("div", { class: "muted small", text: "No requests yet." }));
        return;
      }
      var tbody = el("tbody", {}, days.map(function (d) {
        return el("tr", {}, [
          el("td", { text: d.day }),
          el("td", { class: "num", text: Ragd.formatNumber(d.requests) }),
          el("td", { class: "num", text: Ragd.formatNumber(d.prompt_tokens) }),
          el("td", { class: "num", text: Ragd.formatNumber(d.completion_tokens) }),
        ]);
      }));
      cell.appendChild(el("table", { class: "list small" }, [
        el("thead", {}, [el("tr", {}, [
          el("th", { text: "Day" }), el("th", { class: "num", text: "Requests" }),
          el("th", { class: "num", text: "Prompt tokens" }), el("th", { class: "num", text: "Completion tokens" }),
        ])]),
        tbody,
      ]));
    } catch (err) {
      cell.textContent = Ragd.describeError(err);
    }
  }

  $("user-form").addEventListener("submit", async function (e) {
    e.preventDefault();
    showError($("user-error"), "");
    var username = $("new-username").value.trim();
    if (!username) {
      showError($("user-error"), "Enter a username.");
      $("new-username").focus();
      return;
    }
    var req = { username: username, role: $("new-role").value };
    if ($("new-password").value) req.password = $("new-password").value;
    var quota = $("new-quota").value.trim();
    if (quota !== "") {
      var n = Number(quota);
      if (!Number.isInteger(n) || n < 0) {
        showError($("user-error"), "The token quota must be a whole number of tokens.");
        return;
      }
      req.token_quota = n;
    }
    var button = $("create-user");
    button.disabled = true;
    try {
      var body = await Ragd.api("POST", "/v1/users", { json: req });
      $("key-user").textContent = body.user ? body.user.username : username;
      $("new-api-key").textContent = body.api_key || "";
      $("copy-status").textContent = "";
      $("key-box").classList.remove("hidden");
      $("user-form").reset();
      loadUsers();
    } catch (err) {
      showError($("user-error"), Ragd.describeError(err));
    }
    button.disabled = false;
  });

  $("copy-key").addEventListener("click", async function () {
    var key = $("new-api-key").textContent;
    try {
      await navigator.clipboard.writeText(key);
      $("copy-status").textContent = "Copied.";
    } catch (e) {
      var range = document.createRange();
      range.selectNodeContents($("new-api-key"));
      var sel = window.getSelection();
      sel.removeAllRanges();
      sel.addRange(range);
      $("copy-status").textContent = "Selected: press Ctrl+C to copy.";
    }
  });

  $("hide-key").addEventListener("click", function () {
    $("new-api-key").textContent = "";
    $("key-box").classList.add("hidden");
  });

  $("signout").addEventListener("click", function (e) {
    e.preventDefault();
    Ragd.signOut();
  });

  // ---------------------------------------------------------- start

  (async function start() {
    try {
      var me = await Ragd.api("GET", "/v1/me");
      $("whoami").textContent = me.username || "";
      if (me.role !== "admin") {
        showError($("admin-error"), "This page is for administrators. You are signed in as " + me.username +
          " (role " + me.role + ").");
        return;
      }
      $("admin-content").classList.remove("hidden");
      loadDocuments();
      loadUsers();
    } catch (err) {
      if (!(err instanceof Ragd.ApiError && err.status === 401)) showError($("admin-error"), Ragd.describeError(err));
    }
  })();
})();
