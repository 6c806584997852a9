// Chat page, sidebar: the signed-in user's conversations (GET
// /v1/conversations, newest first), searched by title, renamed in place
// (PATCH) and deleted after a second click (DELETE). Opening one and
// starting a new one are handed to chat.js through Ragd.Chat.sidebar.
"use strict";

(function () {
  var Chat = Ragd.Chat || (Ragd.Chat = {});
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;

  var listBox = $("conversation-list");
  var search = $("conversation-search");
  var empty = $("no-conversations");
  var sidebar = $("sidebar");
  var toggle = $("sidebar-toggle");
  var activeId = null;
  var searchTimer = null;
  var loadToken = 0;
  var renaming = false;  // a title is being edited: the list is not redrawn under it

  var sidebarApi = {
    onOpen: function () {},    // (id) set by chat.js
    onNew: function () {},     // () set by chat.js
    onDeleted: function () {}, // (id) set by chat.js
  };
  Chat.sidebar = sidebarApi;

  function titleOf(c) {
    return c.title || "New conversation";
  }

  function startRename(item, c) {
    var input = el("input", { type: "text", class: "rename-input", "data-testid": "conversation-rename-input",
      maxlength: 200, "aria-label": "New title" });
    input.value = c.title || "";
    var titleButton = item.querySelector('[data-testid="conversation-title"]');
    titleButton.classList.add("hidden");
    item.insertBefore(input, titleButton);
    input.focus();
    input.select();
    renaming = true;
    var done = false;
    async function finish(save) {
      if (done) return;
      done = true;
      renaming = false;
      var title = input.value.trim();
      if (save && title && title !== c.title) {
        try {
          await Ragd.api("PATCH", "/v1/conversations/" + c.id, { json: { title: title } });
        } catch (err) {
          Chat.showBanner && Chat.showBanner(Ragd.describeError(err));
        }
      }
      sidebarApi.refresh();
    }
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); finish(true); }
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); finish(false); }
    });
    input.addEventListener("blur", function () { finish(true); });
  }

  function armDelete(button, c) {
    if (button.dataset.armed === "1") {
      button.disabled = true;
      Ragd.api("DELETE", "/v1/conversations/" + c.id).then(function () {
        sidebarApi.onDeleted(c.id);
        sidebarApi.refresh();
      }, function (err) {
        Chat.showBanner && Chat.showBanner(Ragd.describeError(err));
        sidebarApi.refresh();
      });
      return;
    }
    button.dataset.armed = "1";
    button.textContent = "Delete?";
    button.classList.add("armed");
    setTimeout(function () {
      if (!button.isConnected || button.disabled) return;
      button.dataset.armed = "0";
      button.textContent = "✕";
      button.classList.remove("armed");
    }, 4000);
  }

  function render(conversations) {
    Ragd.clear(listBox);
    conversations.forEach(function (c) {
      var item = el("li", { class: "conversation-item" + (c.id === activeId ? " active" : ""),
        "data-testid": "conversation-item", "data-id": c.id });
      var open = el("button", { type: "button", class: "conversation-title", "data-testid": "conversation-title",
        title: titleOf(c), text: titleOf(c) });
      open.addEventListener("click", function () {
        closeOnNarrow();
        sidebarApi.onOpen(c.id);
      });
      var rename = el("button", { type: "button", class: "icon", "data-testid": "conversation-rename",
        "aria-label": "Rename", title: "Rename", text: "✎" });
      rename.addEventListener("click", function () { startRename(item, c); });
      var del = el("button", { type: "button", class: "icon danger", "data-testid": "conversation-delete",
        "aria-label": "Delete", title: "Delete", text: "✕" });
      del.addEventListener("click", function () { armDelete(del, c); });
      item.appendChild(open);
      item.appendChild(rename);
      item.appendChild(del);
      listBox.appendChild(item);
    });
    empty.classList.toggle("hidden", conversations.length > 0);
    empty.textContent = search.value.trim() ? "No conversation title matches." : "No conversations yet.";
  }

  sidebarApi.refresh = async function () {
    var token = ++loadToken;
    var q = search.value.trim();
    try {
      var body = await Ragd.api("GET", "/v1/conversations" + (q ? "?q=" + encodeURIComponent(q) : ""));
      if (token === loadToken && !renaming) render(body.conversations || []);
    } catch (err) {
      if (token === loadToken) Chat.showBanner && Chat.showBanner(Ragd.describeError(err));
    }
  };

  sidebarApi.setActive = function (id) {
    activeId = id;
    Array.prototype.forEach.call(listBox.children, function (item) {
      item.classList.toggle("active", String(item.dataset.id) === String(id));
    });
  };

  search.addEventListener("input", function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(sidebarApi.refresh, 200);
  });

  $("new-conversation").addEventListener("click", function () {
    closeOnNarrow();
    sidebarApi.onNew();
  });

  // Phones: the sidebar slides over the page and the ☰ button opens it.
  function closeOnNarrow() {
    sidebar.classList.remove("open");
    toggle.setAttribute("aria-expanded", "false");
  }
  toggle.addEventListener("click", function () {
    var open = !sidebar.classList.contains("open");
    sidebar.classList.toggle("open", open);
    toggle.setAttribute("aria-expanded", open ? "true" : "false");
  });
  // It covers the ☰ button: a tap beside it, or Escape, closes it.
  document.addEventListener("click", function (e) {
    if (sidebar.classList.contains("open") && !sidebar.contains(e.target) && !toggle.contains(e.target))
      closeOnNarrow();
  });
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && sidebar.classList.contains("open")) closeOnNarrow();
  });
})();
