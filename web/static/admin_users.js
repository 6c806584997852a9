// Admin page, users: create a user (its first API key is shown once), and
// per user in the table: the token quota edited in place (empty = the
// default), the role, disable/enable, a new password, ending every session,
// the API keys (list, revoke, create: a new key is shown once) and the usage
// by day. Each change is a PATCH/POST/DELETE under /v1/users/{id}.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;
  var admin = Ragd.admin;
  var COLUMNS = 6;

  function path(u, rest) {
    return "/v1/users/" + encodeURIComponent(u.id) + (rest || "");
  }

  async function reload() {
    var rows = $("user-rows");
    try {
      var body = await Ragd.api("GET", "/v1/users");
      Ragd.clear(rows);
      (body.users || []).forEach(function (u) { rows.appendChild(userRow(u)); });
    } catch (err) {
      admin.pageError("Cannot list users: " + Ragd.describeError(err));
    }
  }

  // A message next to a user's buttons; errors in red.
  function say(row, text, isError) {
    var box = row.querySelector('[data-testid="user-status"]');
    box.textContent = text || "";
    box.className = "user-status small " + (isError ? "error-text" : "muted");
    box.setAttribute("data-error", isError ? "1" : "0");
  }

  async function patch(row, u, change) {
    say(row, "saving…");
    try {
      var body = await Ragd.api("PATCH", path(u), { json: change });
      var fresh = userRow(body.user);
      row.replaceWith(fresh);
      say(fresh, "Saved.");
      return true;
    } catch (err) {
      say(row, Ragd.describeError(err), true);
      return false;
    }
  }

  function quotaText(u) {
    return typeof u.token_quota === "number" ? Ragd.formatNumber(u.token_quota) : "default";
  }

  // The quota cell: the number and an Edit button, or an input with Save/Cancel.
  function quotaCell(row, u) {
    var cell = el("td", { class: "num quota-cell" });
    var show = function () {
      Ragd.clear(cell);
      var edit = el("button", { type: "button", class: "icon", "data-testid": "user-quota-edit",
        "aria-label": "Change the token quota of " + u.username, title: "Change the quota", text: "✎" });
      cell.appendChild(el("span", { "data-testid": "user-quota", text: quotaText(u) }));
      cell.appendChild(edit);
      edit.addEventListener("click", editing);
    };
    var editing = function () {
      Ragd.clear(cell);
      var input = el("input", { type: "number", min: "0", step: "1000", inputmode: "numeric",
        class: "quota-input", "data-testid": "user-quota-input", placeholder: "default",
        "aria-label": "Token quota of " + u.username + " (empty: the default)",
        value: typeof u.token_quota === "number" ? String(u.token_quota) : "" });
      var save = el("button", { type: "button", class: "small primary", "data-testid": "user-quota-save",
        text: "Save" });
      var cancel = el("button", { type: "button", class: "small", "data-testid": "user-quota-cancel",
        text: "Cancel" });
      cell.appendChild(input);
      cell.appendChild(el("span", { class: "quota-buttons" }, [save, cancel]));
      var submit = async function () {
        var raw = input.value.trim();
        var n = raw === "" ? null : Number(raw);
        if (n !== null && (!Number.isInteger(n) || n < 0)) {
          say(row, "The token quota must be a whole number of tokens (empty: the default).", true);
          input.focus();
          return;
        }
        save.disabled = cancel.disabled = true;
        if (!(await patch(row, u, { token_quota: n }))) save.disabled = cancel.disabled = false;
      };
      save.addEventListener("click", submit);
      cancel.addEventListener("click", show);
      input.addEventListener("keydown", function (e) {
        if (e.key === "Enter") {
          e.preventDefault();
          submit();
        } else if (e.key === "Escape") {
          show();
        }
      });
      input.focus();
      input.select();
    };
    show();
    return cell;
  }

  function userRow(u) {
    var hasQuota = typeof u.token_quota === "number";
    var left = hasQuota && typeof u.used === "number" ? Math.max(0, u.token_quota - u.used) : null;
    var role = el("select", { "data-testid": "user-role-select", "aria-label": "Role of " + u.username }, [
      el("option", { value: "user", text: "user", selected: u.role === "user" }),
      el("option", { value: "admin", text: "admin", selected: u.role === "admin" }),
    ]);
    var buttons = {
      usage: el("button", { type: "button", "data-testid": "user-usage-button", text: "Usage" }),
      keys: el("button", { type: "button", "data-testid": "user-keys-button", text: "Keys" }),
      password: el("button", { type: "button", "data-testid": "user-password-button", text: "Password" }),
      sessions: el("button", { type: "button", "data-testid": "user-end-sessions", text: "End sessions",
        title: "Sign this user out everywhere (API keys keep working)" }),
      disable: el("button", { type: "button", class: u.disabled ? "" : "danger", "data-testid": "user-disable",
        "data-disabled": u.disabled ? "1" : "0", text: u.disabled ? "Enable" : "Disable" }),
    };
    var row = el("tr", { "data-testid": "user-row", "data-id": u.id, "data-username": u.username,
      "data-disabled": u.disabled ? "1" : "0", class: u.disabled ? "disabled" : "" });
    row.appendChild(el("td", {}, [
      el("span", { "data-testid": "user-name", text: u.username }),
      u.disabled ? el("span", { class: "badge", "data-testid": "user-disabled", text: "disabled" }) : null,
    ]));
    row.appendChild(el("td", {}, [el("span", { "data-testid": "user-role", class: "offscreen", text: u.role }), role]));
    row.appendChild(quotaCell(row, u));
    row.appendChild(el("td", { class: "num", "data-testid": "user-used", text: Ragd.formatNumber(u.used) }));
    row.appendChild(el("td", { class: "num wide", "data-testid": "user-left",
      text: left === null ? "–" : Ragd.formatNumber(left) }));
    row.appendChild(el("td", { class: "actions" }, [
      buttons.usage, " ", buttons.keys, " ", buttons.password, " ", buttons.sessions, " ", buttons.disable,
      el("div", { class: "user-status small muted", "data-testid": "user-status", role: "status" }),
    ]));

    role.addEventListener("change", async function () {
      role.disabled = true;
      if (!(await patch(row, u, { role: role.value }))) {
        role.value = u.role;
        role.disabled = false;
      }
    });
    buttons.disable.addEventListener("click", function () {
      buttons.disable.disabled = true;
      patch(row, u, { disabled: !u.disabled }).then(function (ok) {
        if (!ok) buttons.disable.disabled = false;
      });
    });
    admin.confirmTwice(buttons.sessions, "Confirm: end sessions", async function () {
      try {
        await Ragd.api("DELETE", path(u, "/sessions"));
        say(row, "Every session of " + u.username + " has ended.");
      } catch (err) {
        say(row, Ragd.describeError(err), true);
      }
    });
    buttons.usage.addEventListener("click", function () { toggleDetail(row, u, "usage", usagePanel); });
    buttons.keys.addEventListener("click", function () { toggleDetail(row, u, "keys", keysPanel); });
    buttons.password.addEventListener("click", function () { toggleDetail(row, u, "password", passwordPanel); });
    return row;
  }

  // One detail row under a user: usage, keys or password; the same button closes it.
  function toggleDetail(row, u, kind, build) {
    var next = row.nextElementSibling;
    var open = next && next.classList.contains("user-detail") ? next : null;
    if (open) open.remove();
    if (open && open.dataset.kind === kind) return;
    var cell = el("td", { colspan: String(COLUMNS), "data-testid": "user-" + kind });
    row.after(el("tr", { class: "user-detail usage-row", "data-kind": kind, "data-testid": "user-detail" }, [cell]));
    build(cell, u, row);
  }

  async function usagePanel(cell, u) {
    cell.textContent = "Loading…";
    try {
      var usage = await Ragd.api("GET", path(u, "/usage"));
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
      cell.appendChild(el("table", { class: "list small" }, [
        el("thead", {}, [el("tr", {}, [
          el("th", { text: "Day" }), el("th", { class: "num", text: "Requests" }),
          el("th", { class: "num", text: "Successful answers" }),
          el("th", { class: "num", text: "Prompt tokens" }), el("th", { class: "num", text: "Completion tokens" }),
        ])]),
        el("tbody", {}, days.map(function (d) {
          return el("tr", {}, [
            el("td", { text: d.day }),
            el("td", { class: "num", text: Ragd.formatNumber(d.requests) }),
            el("td", { class: "num", text: Ragd.formatNumber(d.successful_answers) }),
            el("td", { class: "num", text: Ragd.formatNumber(d.prompt_tokens) }),
            el("td", { class: "num", text: Ragd.formatNumber(d.completion_tokens) }),
          ]);
        })),
      ]));
    } catch (err) {
      cell.textContent = Ragd.describeError(err);
    }
  }

  function passwordPanel(cell, u, row) {
    var input = el("input", { type: "password", autocomplete: "new-password", minlength: "8", maxlength: "1024",
      "data-testid": "user-password-input", id: "password-for-" + u.id });
    var save = el("button", { type: "button", class: "primary", "data-testid": "user-password-save",
      text: "Set password" });
    var form = el("div", { class: "row" }, [
      el("div", { class: "field" }, [
        el("label", { for: "password-for-" + u.id,
          text: "New password for " + u.username + " (at least 8 characters; their sessions end)" }),
        input,
      ]),
      save,
    ]);
    cell.appendChild(form);
    var submit = async function () {
      if (input.value.length < 8) {
        say(row, "The password needs at least 8 characters.", true);
        input.focus();
        return;
      }
      save.disabled = true;
      try {
        await Ragd.api("POST", path(u, "/password"), { json: { password: input.value } });
        input.value = "";
        say(row, "Password changed; " + u.username + " must sign in again.");
        cell.parentNode.remove();
      } catch (err) {
        save.disabled = false;
        say(row, Ragd.describeError(err), true);
      }
    };
    save.addEventListener("click", submit);
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter") {
        e.preventDefault();
        submit();
      }
    });
    input.focus();
  }

  async function keysPanel(cell, u, row) {
    var list = el("tbody", {});
    var none = el("p", { class: "muted small hidden", "data-testid": "no-keys", text: "No API keys." });
    var name = el("input", { type: "text", maxlength: "128", placeholder: "name (optional)",
      "data-testid": "key-name-input", "aria-label": "Name of the new key" });
    var create = el("button", { type: "button", "data-testid": "key-create", text: "New key" });
    var shown = el("div", { class: "key-box hidden", "data-testid": "user-key-box" });
    cell.appendChild(el("table", { class: "list small", "data-testid": "key-table" }, [
      el("thead", {}, [el("tr", {}, [
        el("th", { text: "Key" }), el("th", { text: "Name" }), el("th", { class: "wide", text: "Created" }),
        el("th", {}),
      ])]),
      list,
    ]));
    cell.appendChild(none);
    cell.appendChild(el("div", { class: "row key-create" }, [el("div", { class: "field" }, [name]), create]));
    cell.appendChild(shown);

    var load = async function () {
      try {
        var keys = (await Ragd.api("GET", path(u, "/keys"))).keys || [];
        Ragd.clear(list);
        keys.forEach(function (k) { list.appendChild(keyRow(k)); });
        none.classList.toggle("hidden", keys.length > 0);
      } catch (err) {
        say(row, Ragd.describeError(err), true);
      }
    };
    var keyRow = function (k) {
      var revoke = el("button", { type: "button", class: "danger small", "data-testid": "key-revoke",
        text: "Revoke" });
      var tr = el("tr", { "data-testid": "key-row", "data-id": k.id, "data-prefix": k.prefix }, [
        el("td", { class: "mono", "data-testid": "key-prefix", text: k.prefix + "…" }),
        el("td", { "data-testid": "key-name", text: k.name || "" }),
        el("td", { class: "wide", text: Ragd.formatDate(k.created_at) }),
        el("td", { class: "actions" }, [revoke]),
      ]);
      admin.confirmTwice(revoke, "Confirm revoke", async function () {
        revoke.disabled = true;
        try {
          await Ragd.api("DELETE", path(u, "/keys/" + encodeURIComponent(k.id)));
          say(row, "Key " + k.prefix + "… revoked: it no longer signs in.");
          load();
        } catch (err) {
          revoke.disabled = false;
          say(row, Ragd.describeError(err), true);
        }
      });
      return tr;
    };
    create.addEventListener("click", async function () {
      create.disabled = true;
      try {
        var body = await Ragd.api("POST", path(u, "/keys"), { json: name.value.trim() ? { name: name.value.trim() } : {} });
        name.value = "";
        Ragd.clear(shown);
        var done = el("button", { type: "button", class: "small", "data-testid": "user-key-done", text: "Done" });
        shown.appendChild(el("p", { class: "small", text: "New key for " + u.username +
          ". It is shown only this once: copy it now." }));
        shown.appendChild(el("div", { class: "api-key", "data-testid": "user-new-key", text: body.api_key || "" }));
        shown.appendChild(done);
        shown.classList.remove("hidden");
        done.addEventListener("click", function () {
          Ragd.clear(shown);
          shown.classList.add("hidden");
        });
        load();
      } catch (err) {
        say(row, Ragd.describeError(err), true);
      }
      create.disabled = false;
    });
    await load();
  }

  // ------------------------------------------------------------ create a user

  $("user-form").addEventListener("submit", async function (e) {
    e.preventDefault();
    admin.showError($("user-error"), "");
    var username = $("new-username").value.trim();
    if (!username) {
      admin.showError($("user-error"), "Enter a username.");
      $("new-username").focus();
      return;
    }
    var req = { username: username, role: $("new-role").value };
    if ($("new-password").value) req.password = $("new-password").value;
    var quota = $("new-quota").value.trim();
    if (quota !== "") {
      var n = Number(quota);
      if (!Number.isInteger(n) || n < 0) {
        admin.showError($("user-error"), "The token quota must be a whole number of tokens.");
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
      reload();
    } catch (err) {
      admin.showError($("user-error"), Ragd.describeError(err));
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

  admin.users = { reload: reload };
  admin.onStart(reload);
})();
