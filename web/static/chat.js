// Chat page: asks POST /v1/ask with "stream": true and renders the streamed
// answer as Markdown with numbered citation chips; a chip opens the cited
// passage. The Stop button aborts the request (the server then cancels the
// generation). The quota display comes from GET /v1/me and is refreshed
// after every answer.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;

  var form = $("ask-form");
  var question = $("question");
  var sendButton = $("send");
  var stopButton = $("stop");
  var turns = $("turns");
  var conversation = $("conversation");
  var emptyHint = $("empty-hint");
  var quotaBox = $("quota");
  var lastUsage = $("last-usage");
  var banner = $("banner");
  var panel = $("citation-panel");

  var controller = null;  // AbortController of the answer in progress
  var activeChip = null;

  function showBanner(text) {
    banner.textContent = text || "";
    banner.classList.toggle("hidden", !text);
    banner.classList.toggle("error", !!text);
  }

  async function refreshMe() {
    try {
      var me = await Ragd.api("GET", "/v1/me");
      $("whoami").textContent = me.username || "";
      $("admin-link").classList.toggle("hidden", me.role !== "admin");
      Ragd.renderQuota(quotaBox, me.quota);
      showBanner("");
    } catch (err) {
      if (!(err instanceof Ragd.ApiError && err.status === 401)) showBanner(Ragd.describeError(err));
    }
  }

  // ---------------------------------------------------------- citations

  function openCitation(citation, chip) {
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
    $("citation-text").textContent = citation.text || "";
    panel.dataset.n = String(citation.n);
    panel.classList.remove("hidden");
    $("citation-close").focus({ preventScroll: true });
  }

  function closeCitation() {
    panel.classList.add("hidden");
    if (activeChip) {
      activeChip.classList.remove("active");
      activeChip.focus({ preventScroll: true });
    }
    activeChip = null;
  }

  $("citation-close").addEventListener("click", closeCitation);
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && !panel.classList.contains("hidden")) closeCitation();
  });

  function makeChip(citation) {
    var chip = el("button", {
      type: "button",
      class: "chip",
      "data-testid": "citation-chip",
      "data-n": citation.n,
      title: citation.title || "",
      "aria-label": "Source " + citation.n + (citation.title ? ": " + citation.title : ""),
      text: String(citation.n),
    });
    chip.addEventListener("click", function () { openCitation(citation, chip); });
    return chip;
  }

  // ---------------------------------------------------------- one answer

  // The DOM and state of one question and its answer.
  function Turn(text) {
    this.citations = {};  // n -> citation object
    this.text = "";
    this.renderPending = false;
    this.answer = el("div", { class: "answer md", "data-testid": "answer", "data-state": "waiting" });
    this.sources = el("div", { class: "sources hidden", "data-testid": "sources" });
    this.meta = el("div", { class: "answer-meta", "data-testid": "answer-meta" });
    this.node = el("section", { class: "turn", "data-testid": "turn" }, [
      el("div", { class: "question", "data-testid": "asked", text: text }),
      el("div", { class: "answer-box" }, [this.answer, this.sources, this.meta]),
    ]);
  }

  Turn.prototype.setState = function (state) {
    this.answer.setAttribute("data-state", state);
  };

  Turn.prototype.setCitations = function (list) {
    var self = this;
    (list || []).forEach(function (c) {
      if (c && typeof c.n === "number") self.citations[c.n] = c;
    });
  };

  Turn.prototype.render = function () {
    var self = this;
    this.renderPending = false;
    var stick = nearBottom();
    Ragd.clear(this.answer);
    this.answer.appendChild(Ragd.renderMarkdown(this.text, {
      citation: function (n) {
        var c = self.citations[n];
        return c ? makeChip(c) : null;
      },
    }));
    if (stick) scrollToBottom();
  };

  Turn.prototype.scheduleRender = function () {
    if (this.renderPending) return;
    this.renderPending = true;
    var self = this;
    window.requestAnimationFrame(function () {
      if (self.renderPending) self.render();
    });
  };

  // Lists the cited sources under the answer (the `done` event's list, or
  // those whose markers appear in the text, or all of them).
  Turn.prototype.showSources = function (cited) {
    var self = this;
    var list = cited && cited.length ? cited : null;
    if (!list) {
      var used = {};
      (this.text.match(/\[\d{1,3}(?:[ \t]*,[ \t]*\d{1,3})*\]/g) || []).forEach(function (m) {
        m.slice(1, -1).split(",").forEach(function (x) { used[parseInt(x, 10)] = true; });
      });
      list = Object.keys(this.citations).map(Number).filter(function (n) { return used[n]; })
        .map(function (n) { return self.citations[n]; });
    }
    // The cited sources first, then the other passages the answer was drawn
    // from (all of them, when nothing is cited): every one can be opened.
    var cited = {};
    list.forEach(function (c) { cited[c.n] = true; });
    var others = Object.keys(this.citations).map(Number).sort(function (a, b) { return a - b; })
      .filter(function (n) { return !cited[n]; }).map(function (n) { return self.citations[n]; });
    Ragd.clear(this.sources);
    if (!list.length && !others.length) return;
    if (list.length) {
      this.sources.appendChild(el("span", { class: "muted", text: "Sources:" }));
      list.forEach(addItem);
    }
    if (others.length) {
      this.sources.appendChild(el("span", { class: "muted",
        text: list.length ? "Also retrieved:" : "Retrieved sources (none cited):" }));
      others.forEach(addItem);
    }
    this.sources.classList.remove("hidden");

    function addItem(c) {
      var full = self.citations[c.n] || c;
      var item = el("button", {
        type: "button",
        class: "source-item",
        "data-testid": "source-item",
        "data-n": full.n,
        title: full.title || "",
        text: "[" + full.n + "] " + (full.title || "(untitled)"),
      });
      item.addEventListener("click", function () { openCitation(full, null); });
      self.sources.appendChild(item);
    }
  };

  // The server found the answer not supported by the documents as a whole.
  Turn.prototype.showUngrounded = function () {
    this.meta.appendChild(el("div", { class: "notice", "data-testid": "answer-ungrounded", role: "note",
      text: "The documents do not support this answer: check it against the sources." }));
  };

  Turn.prototype.showError = function (text) {
    this.meta.appendChild(el("div", { class: "error", "data-testid": "answer-error", role: "alert", text: text }));
  };

  function usageText(usage) {
    if (!usage) return "";
    return Ragd.formatNumber(usage.prompt_tokens) + " prompt + " +
      Ragd.formatNumber(usage.completion_tokens) + " completion tokens";
  }

  Turn.prototype.finish = function (usage, finishReason) {
    var parts = [];
    if (usage) {
      parts.push(usageText(usage));
      lastUsage.textContent = "Last answer: " + usageText(usage);
      lastUsage.dataset.promptTokens = String(usage.prompt_tokens);
      lastUsage.dataset.completionTokens = String(usage.completion_tokens);
    }
    if (finishReason === "length") parts.push("cut off at the answer length limit");
    this.meta.insertBefore(el("span", { "data-testid": "answer-usage", text: parts.join(" · ") }),
      this.meta.firstChild);
  };

  // ---------------------------------------------------------- asking

  function nearBottom() {
    return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 80;
  }

  function scrollToBottom() {
    conversation.scrollTop = conversation.scrollHeight;
  }

  function setBusy(busy) {
    sendButton.classList.toggle("hidden", busy);
    stopButton.classList.toggle("hidden", !busy);
    sendButton.disabled = busy;
    stopButton.disabled = !busy;
    if (!busy) question.focus({ preventScroll: true });
  }

  async function ask(text) {
    var turn = new Turn(text);
    if (emptyHint) emptyHint.remove();
    emptyHint = null;
    turns.appendChild(turn.node);
    scrollToBottom();
    controller = new AbortController();
    setBusy(true);

    var outcome = null;  // {usage, finish_reason, citations} or {error}
    try {
      var response = await fetch("/v1/ask", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ question: text, stream: true }),
        signal: controller.signal,
      });
      if (!response.ok) {
        var err = await Ragd.errorFromResponse(response);
        if (response.status === 401) Ragd.goToLogin();
        throw err;
      }
      var type = response.headers.get("Content-Type") || "";
      if (type.indexOf("text/event-stream") >= 0) {
        turn.setState("streaming");
        await Ragd.readSse(response, function (data) {
          if (data === "[DONE]" || outcome) return;
          var ev;
          try {
            ev = JSON.parse(data);
          } catch (e) {
            return;  // not JSON: not an event of ours
          }
          if (ev.type === "citations") {
            turn.setCitations(ev.citations);
          } else if (ev.type === "delta") {
            turn.text += ev.content || "";
            turn.scheduleRender();
          } else if (ev.type === "done") {
            outcome = ev;
          } else if (ev.type === "error" || ev.error) {
            outcome = { error: ev.error || {} };
          }
        });
      } else {
        // A plain JSON answer (server chose not to stream).
        var body = await response.json();
        turn.setCitations(body.citations);
        turn.text = body.answer || "";
        outcome = { usage: body.usage, citations: body.citations, finish_reason: body.finish_reason,
                    grounded: body.grounded };
      }
      turn.render();
      if (!outcome) {
        turn.setState("error");
        turn.showError("The connection closed before the answer was complete.");
      } else if (outcome.error) {
        turn.setState("error");
        turn.showError(Ragd.describeError(new Ragd.ApiError(outcome.error.code || 500, outcome.error, null)));
      } else {
        turn.setState("done");
        turn.showSources(outcome.citations);
        turn.finish(outcome.usage, outcome.finish_reason);
        if (outcome.grounded === false) turn.showUngrounded();
      }
    } catch (err) {
      turn.render();
      if (err && err.name === "AbortError") {
        turn.setState("stopped");
        turn.meta.appendChild(el("span", { "data-testid": "answer-stopped", text: "Stopped." }));
        turn.showSources(null);
      } else {
        turn.setState("error");
        turn.showError(Ragd.describeError(err));
      }
    } finally {
      controller = null;
      setBusy(false);
      if (nearBottom()) scrollToBottom();
      refreshMe();
    }
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = question.value.trim();
    if (!text || controller) return;
    question.value = "";
    autoGrow();
    ask(text);
  });

  question.addEventListener("keydown", function (e) {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      form.requestSubmit ? form.requestSubmit() : form.dispatchEvent(new Event("submit", { cancelable: true }));
    }
  });

  function autoGrow() {
    question.style.height = "auto";
    question.style.height = Math.min(question.scrollHeight + 2, 200) + "px";
  }
  question.addEventListener("input", autoGrow);

  stopButton.addEventListener("click", function () {
    if (controller) controller.abort();
  });

  $("signout").addEventListener("click", function (e) {
    e.preventDefault();
    Ragd.signOut();
  });

  refreshMe();
  question.focus();
})();
