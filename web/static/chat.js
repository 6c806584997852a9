// Chat page: asks POST /v1/ask with "stream": true inside a conversation
// stored on the server (the URL's #c=ID reopens it after a reload) and
// renders the streamed answer as Markdown with numbered citation chips; a
// chip opens the cited passage inside its document (chat_sources.js). Each
// answer can be copied, rated, and regenerated (the last one); each question
// can be edited and asked again (that turn and the later ones are replaced
// on the server too). The Stop button aborts the request (the server then
// cancels the generation). The quota display comes from GET /v1/me and is
// refreshed after every answer; the question's size limit comes from
// GET /v1/chat/limits.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;
  var Chat = Ragd.Chat;

  var form = $("ask-form");
  var question = $("question");
  var sendButton = $("send");
  var stopButton = $("stop");
  var turns = $("turns");
  var conversation = $("conversation");
  var quotaBox = $("quota");
  var lastUsage = $("last-usage");
  var banner = $("banner");
  var limitLine = $("question-limit");

  var controller = null;       // AbortController of the answer in progress
  var conversationId = null;   // the open conversation; null until the first question
  var allTurns = [];           // Turn objects in order
  var maxQuestionBytes = 8192; // replaced by the server's figure
  var encoder = new TextEncoder();

  function showBanner(text) {
    banner.textContent = text || "";
    banner.classList.toggle("hidden", !text);
    banner.classList.toggle("error", !!text);
  }
  Chat.showBanner = showBanner;

  async function refreshMe() {
    try {
      var me = await Ragd.api("GET", "/v1/me");
      $("whoami").textContent = me.username || "";
      $("admin-link").classList.toggle("hidden", me.role !== "admin");
      Ragd.renderQuota(quotaBox, me.quota);
    } catch (err) {
      if (!(err instanceof Ragd.ApiError && err.status === 401)) showBanner(Ragd.describeError(err));
    }
  }

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
    chip.addEventListener("click", function () { Chat.openCitation(citation, chip); });
    return chip;
  }

  // The UTF-8 byte span [start, end) of `text` as a string.
  function byteSlice(text, start, end) {
    var bytes = encoder.encode(text);
    return new TextDecoder().decode(bytes.subarray(start, end));
  }

  // ---------------------------------------------------------- one answer

  // The DOM and state of one question and its answer.
  function Turn(text) {
    this.question = text;
    this.questionId = null;  // message ids once stored on the server
    this.messageId = null;
    this.citations = {};  // n -> citation object
    this.text = "";
    this.renderPending = false;
    this.asked = el("div", { class: "question", "data-testid": "asked", text: text });
    this.answer = el("div", { class: "answer md", "data-testid": "answer", "data-state": "waiting" });
    this.sources = el("div", { class: "sources hidden", "data-testid": "sources" });
    this.meta = el("div", { class: "answer-meta", "data-testid": "answer-meta" });
    this.actions = el("div", { class: "answer-actions hidden", "data-testid": "answer-actions" });
    this.questionActions = el("div", { class: "question-actions" });
    this.node = el("section", { class: "turn", "data-testid": "turn" }, [
      el("div", { class: "question-row" }, [this.questionActions, this.asked]),
      el("div", { class: "answer-box" }, [this.answer, this.sources, this.meta, this.actions]),
    ]);
    var self = this;
    var edit = el("button", { type: "button", class: "icon", "data-testid": "edit-question", title: "Edit and ask again",
      "aria-label": "Edit and ask again", text: "✎" });
    edit.addEventListener("click", function () { self.startEdit(); });
    this.questionActions.appendChild(edit);
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
    var citedSet = {};
    list.forEach(function (c) { citedSet[c.n] = true; });
    var others = Object.keys(this.citations).map(Number).sort(function (a, b) { return a - b; })
      .filter(function (n) { return !citedSet[n]; }).map(function (n) { return self.citations[n]; });
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
      var where = Chat.location(full);
      var item = el("button", {
        type: "button",
        class: "source-item",
        "data-testid": "source-item",
        "data-n": full.n,
        "data-document-id": full.document_id,
        title: (full.title || "") + (where ? " — " + where : ""),
        text: "[" + full.n + "] " + (full.title || "(untitled)"),
      });
      if (where) item.appendChild(el("span", { class: "source-where", "data-testid": "source-where", text: where }));
      item.addEventListener("click", function () { Chat.openCitation(full, null); });
      self.sources.appendChild(item);
    }
  };

  // The server found the answer not supported by the documents as a whole.
  Turn.prototype.showUngrounded = function () {
    this.meta.appendChild(el("div", { class: "notice", "data-testid": "answer-ungrounded", role: "note",
      text: "The documents do not support this answer: check it against the sources." }));
  };

  // A follow-up the server rewrote into a question that stands alone before
  // searching: the user sees what was searched and answered, and can ask
  // again in other words when the rewrite missed the point.
  Turn.prototype.showRewritten = function (question) {
    this.meta.appendChild(el("div", { class: "rewritten", "data-testid": "answer-rewritten", role: "note",
      text: "Searched as: " + question }));
  };

  // Sentences the sources do not support: marked in the answer where the
  // sentence sits in one piece of text, and listed under it.
  Turn.prototype.markUnsupported = function (sentences) {
    var self = this;
    var unsupported = (sentences || []).filter(function (s) {
      return s && s.factual !== false && s.supported === false && typeof s.start === "number";
    }).map(function (s) { return byteSlice(self.text, s.start, s.end).trim(); }).filter(Boolean);
    if (!unsupported.length) return;
    unsupported.forEach(function (sentence) {
      var plain = sentence.replace(/\s*\[\d{1,3}(?:\s*,\s*\d{1,3})*\]/g, "").replace(/[*_`#>]/g, "").trim();
      var needle = plain.slice(0, 40);
      if (!needle) return;
      var walker = document.createTreeWalker(self.answer, NodeFilter.SHOW_TEXT);
      for (var node = walker.nextNode(); node; node = walker.nextNode()) {
        var at = node.nodeValue.indexOf(needle);
        if (at < 0) continue;
        var len = Math.min(node.nodeValue.length - at, plain.length);
        var range = document.createRange();
        range.setStart(node, at);
        range.setEnd(node, at + len);
        var mark = el("span", { class: "unsupported", "data-testid": "unsupported-mark",
          title: "Not supported by the cited sources" });
        range.surroundContents(mark);
        break;
      }
    });
    var box = el("div", { class: "unsupported-list", "data-testid": "unsupported-list", role: "note" },
      [el("span", { text: "Not supported by the sources: " })]);
    unsupported.forEach(function (s) {
      box.appendChild(el("q", { "data-testid": "unsupported-sentence", text: s }));
      box.appendChild(document.createTextNode(" "));
    });
    this.meta.appendChild(box);
  };

  Turn.prototype.showError = function (text) {
    this.meta.appendChild(el("div", { class: "error", "data-testid": "answer-error", role: "alert", text: text }));
  };

  function usageText(usage) {
    if (!usage) return "";
    return Ragd.formatNumber(usage.prompt_tokens) + " prompt + " +
      Ragd.formatNumber(usage.completion_tokens) + " completion tokens";
  }

  Turn.prototype.finish = function (usage, finishReason, documents) {
    var parts = [];
    if (usage) {
      parts.push(usageText(usage));
      lastUsage.textContent = "Last answer: " + usageText(usage);
      lastUsage.dataset.promptTokens = String(usage.prompt_tokens);
      lastUsage.dataset.completionTokens = String(usage.completion_tokens);
    }
    if (finishReason === "length") parts.push("cut off at the answer length limit");
    if (finishReason === "cancelled") parts.push("stopped");
    if (documents && documents.length) parts.push("from " + documents.length + " chosen document" +
      (documents.length > 1 ? "s" : ""));
    this.meta.insertBefore(el("span", { "data-testid": "answer-usage", text: parts.join(" · ") }),
      this.meta.firstChild);
  };

  // Copy, rate, regenerate: once the answer is stored (its message id known).
  Turn.prototype.showActions = function (feedback) {
    var self = this;
    Ragd.clear(this.actions);
    var copy = el("button", { type: "button", class: "small", "data-testid": "answer-copy", text: "Copy" });
    copy.addEventListener("click", function () {
      copyText(self.text).then(function () {
        copy.textContent = "Copied";
        copy.dataset.copied = "1";
        setTimeout(function () { copy.textContent = "Copy"; }, 2000);
      }, function () { copy.textContent = "Copy failed"; });
    });
    this.actions.appendChild(copy);
    if (this.messageId !== null) {
      var regenerate = el("button", { type: "button", class: "small", "data-testid": "answer-regenerate",
        text: "Regenerate" });
      regenerate.addEventListener("click", function () {
        if (controller) return;
        ask(self.question, self);
      });
      this.actions.appendChild(regenerate);
      this.actions.appendChild(feedbackControls(this, feedback));
    }
    this.actions.classList.remove("hidden");
    this.refreshRegenerate();
  };

  // Only the last answer may be regenerated (an earlier one would drop the later turns).
  Turn.prototype.refreshRegenerate = function () {
    var button = this.actions.querySelector('[data-testid="answer-regenerate"]');
    if (button) button.classList.toggle("hidden", allTurns[allTurns.length - 1] !== this);
  };

  Turn.prototype.startEdit = function () {
    if (controller || this.node.querySelector(".edit-box")) return;
    var self = this;
    var box = el("textarea", { class: "edit-input", "data-testid": "edit-input", rows: 3,
      "aria-label": "Edited question" });
    box.value = this.question;
    var later = allTurns.indexOf(this) < allTurns.length - 1;
    var send = el("button", { type: "button", class: "primary small", "data-testid": "edit-send",
      text: "Ask again" });
    var cancel = el("button", { type: "button", class: "small", "data-testid": "edit-cancel", text: "Cancel" });
    var wrap = el("div", { class: "edit-box" }, [box,
      later ? el("div", { class: "muted small", text: "This question and the turns after it will be replaced." })
        : null,
      el("div", { class: "row" }, [send, cancel])]);
    this.asked.classList.add("hidden");
    this.asked.parentNode.appendChild(wrap);
    box.focus();
    function close() {
      wrap.remove();
      self.asked.classList.remove("hidden");
    }
    cancel.addEventListener("click", close);
    send.addEventListener("click", function () {
      var text = box.value.trim();
      if (!text || controller) return;
      if (!checkLength(text)) return;
      close();
      ask(text, self);
    });
    box.addEventListener("keydown", function (e) {
      if (e.key === "Escape") close();
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        send.click();
      }
    });
  };

  // The clipboard API where the page may use it, else a selected textarea
  // and execCommand (older browsers, pages without the permission).
  function copyText(text) {
    function fallback() {
      var area = el("textarea", { class: "offscreen", "aria-hidden": "true" });
      area.value = text;
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand("copy");
      } finally {
        area.remove();
      }
      if (!ok) throw new Error("copy refused");
    }
    if (navigator.clipboard && window.isSecureContext)
      return navigator.clipboard.writeText(text).catch(fallback);
    return new Promise(function (resolve) {
      fallback();
      resolve();
    });
  }

  function feedbackControls(turn, feedback) {
    var rating = feedback ? feedback.rating : 0;
    var up = el("button", { type: "button", class: "small", "data-testid": "feedback-up",
      title: "This answer helped", text: "▲ Helpful" });
    var down = el("button", { type: "button", class: "small", "data-testid": "feedback-down",
      title: "This answer did not help", text: "▼ Not helpful" });
    var comment = el("input", { type: "text", class: "feedback-comment hidden", "data-testid": "feedback-comment",
      placeholder: "What was right or wrong? (optional)", maxlength: 4000, "aria-label": "Comment" });
    var sendComment = el("button", { type: "button", class: "small hidden", "data-testid": "feedback-send",
      text: "Send" });
    var status = el("span", { class: "muted small", "data-testid": "feedback-status" });
    if (feedback && feedback.comment) comment.value = feedback.comment;
    function show() {
      up.setAttribute("aria-pressed", rating === 1 ? "true" : "false");
      down.setAttribute("aria-pressed", rating === -1 ? "true" : "false");
    }
    async function send(withComment) {
      try {
        await Ragd.api("POST", "/v1/feedback", { json: { message_id: turn.messageId,
          rating: rating === 1 ? "up" : "down", comment: withComment ? comment.value.trim() : undefined } });
        status.textContent = withComment ? "Thanks, comment saved." : "Thanks.";
        status.dataset.saved = withComment ? "comment" : "rating";
      } catch (err) {
        status.textContent = Ragd.describeError(err);
      }
    }
    function rate(value) {
      rating = value;
      show();
      comment.classList.remove("hidden");
      sendComment.classList.remove("hidden");
      send(!!comment.value.trim());
    }
    up.addEventListener("click", function () { rate(1); });
    down.addEventListener("click", function () { rate(-1); });
    sendComment.addEventListener("click", function () { if (rating) send(true); });
    comment.addEventListener("keydown", function (e) {
      if (e.key === "Enter") { e.preventDefault(); sendComment.click(); }
    });
    show();
    return el("span", { class: "feedback", "data-testid": "feedback" }, [up, down, comment, sendComment, status]);
  }

  // ---------------------------------------------------------- conversations

  function nearBottom() {
    return conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight < 80;
  }

  function scrollToBottom() {
    conversation.scrollTop = conversation.scrollHeight;
  }

  function showEmptyHint(show) {
    var hint = $("empty-hint");
    if (hint) hint.classList.toggle("hidden", !show);
  }

  function clearTurns() {
    allTurns.forEach(function (t) { t.node.remove(); });
    allTurns = [];
    showEmptyHint(true);
    Chat.closeCitation();
  }

  function setConversation(id) {
    conversationId = id;
    var hash = id ? "#c=" + id : "";
    if (window.location.hash !== hash)
      history.replaceState(null, "", window.location.pathname + window.location.search + hash);
    Chat.sidebar.setActive(id);
  }

  function conversationFromHash() {
    var m = /^#c=(\d+)$/.exec(window.location.hash || "");
    return m ? Number(m[1]) : null;
  }

  // A stored question and answer, shown as they were when answered.
  function addStoredTurn(q, a) {
    var turn = new Turn(q.content);
    turn.questionId = q.id;
    turns.appendChild(turn.node);
    allTurns.push(turn);
    if (!a) {
      turn.setState("error");
      turn.showError("This question has no stored answer.");
      return;
    }
    turn.messageId = a.id;
    turn.setCitations(a.citations);
    turn.text = a.content || "";
    turn.render();
    var cited = (a.cited || []).map(function (n) { return turn.citations[n]; }).filter(Boolean);
    turn.setState(a.finish_reason === "cancelled" ? "stopped" : "done");
    turn.showSources(cited);
    turn.finish(null, a.finish_reason, a.documents);
    if (a.grounded === false) turn.showUngrounded();
    turn.markUnsupported(a.sentences);
    turn.showActions(a.feedback);
  }

  async function openConversation(id) {
    if (controller) return;
    try {
      var c = await Ragd.api("GET", "/v1/conversations/" + id);
      clearTurns();
      setConversation(c.id);
      var messages = c.messages || [];
      for (var i = 0; i < messages.length; i++) {
        if (messages[i].role !== "user") continue;
        var next = messages[i + 1] && messages[i + 1].role === "assistant" ? messages[i + 1] : null;
        addStoredTurn(messages[i], next);
      }
      showEmptyHint(allTurns.length === 0);
      allTurns.forEach(function (t) { t.refreshRegenerate(); });
      scrollToBottom();
      showBanner("");
    } catch (err) {
      if (err instanceof Ragd.ApiError && err.status === 404) {
        setConversation(null);
        clearTurns();
        showBanner("That conversation does not exist (or is not yours).");
      } else {
        showBanner(Ragd.describeError(err));
      }
    }
  }

  // After a stop the server stores the partial answer a moment later: fetch
  // the ids so that the turn can be rated, regenerated or edited.
  async function syncIds() {
    if (!conversationId || controller) return;
    try {
      var c = await Ragd.api("GET", "/v1/conversations/" + conversationId);
      var messages = c.messages || [];
      if (messages.length !== allTurns.length * 2) return;
      allTurns.forEach(function (t, i) {
        if (t.messageId !== null) return;
        t.questionId = messages[2 * i].id;
        t.messageId = messages[2 * i + 1].id;
        t.showActions(null);
      });
    } catch (e) {
      // The ids stay unknown; a reload shows the stored turns.
    }
  }

  Chat.sidebar.onOpen = function (id) { openConversation(id); };
  Chat.sidebar.onNew = function () {
    if (controller) return;
    setConversation(null);
    clearTurns();
    question.focus();
  };
  Chat.sidebar.onDeleted = function (id) {
    if (id === conversationId) {
      setConversation(null);
      clearTurns();
    }
  };

  // ---------------------------------------------------------- asking

  function setBusy(busy) {
    sendButton.classList.toggle("hidden", busy);
    stopButton.classList.toggle("hidden", !busy);
    sendButton.disabled = busy || overLimit();
    stopButton.disabled = !busy;
    if (!busy) question.focus({ preventScroll: true });
  }

  function bytesOf(text) { return encoder.encode(text).length; }
  function overLimit() { return bytesOf(question.value) > maxQuestionBytes; }

  function showLimit() {
    var n = bytesOf(question.value);
    var over = n > maxQuestionBytes;
    limitLine.textContent = over
      ? "The question is " + Ragd.formatNumber(n) + " bytes; at most " + Ragd.formatNumber(maxQuestionBytes) +
        " are allowed."
      : Ragd.formatNumber(n) + " / " + Ragd.formatNumber(maxQuestionBytes) + " bytes";
    limitLine.classList.toggle("hidden", n < maxQuestionBytes * 0.8);
    limitLine.classList.toggle("error-text", over);
    limitLine.dataset.over = over ? "1" : "0";
    if (!controller) sendButton.disabled = over;
  }

  function checkLength(text) {
    if (bytesOf(text) <= maxQuestionBytes) return true;
    showBanner("The question is longer than the " + Ragd.formatNumber(maxQuestionBytes) + " bytes allowed.");
    return false;
  }

  async function loadLimits() {
    try {
      var limits = await Ragd.api("GET", "/v1/chat/limits");
      if (typeof limits.max_question_bytes === "number") maxQuestionBytes = limits.max_question_bytes;
      question.dataset.maxBytes = String(maxQuestionBytes);
      showLimit();
    } catch (err) {
      // The default stands; the server refuses a longer question anyway.
    }
  }

  async function ensureConversation() {
    if (conversationId) return conversationId;
    var c = await Ragd.api("POST", "/v1/conversations", { json: {} });
    setConversation(c.id);
    return c.id;
  }

  // Asks `text`; `replacing` (a Turn) is regenerated or edited: it and the
  // later turns are replaced, on the page and on the server.
  async function ask(text, replacing) {
    var replaceFrom = null;
    if (replacing) {
      replaceFrom = replacing.questionId;
      var at = allTurns.indexOf(replacing);
      allTurns.splice(at).forEach(function (t) { t.node.remove(); });
      Chat.closeCitation();
    }
    var turn = new Turn(text);
    showEmptyHint(false);
    turns.appendChild(turn.node);
    allTurns.push(turn);
    allTurns.forEach(function (t) { t.refreshRegenerate(); });
    scrollToBottom();
    controller = new AbortController();
    setBusy(true);

    var documents = Chat.chosenDocuments();
    var outcome = null;  // the done event, or {error}
    try {
      var id = await ensureConversation();
      var body = { question: text, stream: true, conversation_id: id };
      if (replaceFrom !== null) body.replace_from = replaceFrom;
      if (documents.length) body.documents = documents;
      var response = await fetch("/v1/ask", {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify(body),
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
        var plain = await response.json();
        turn.setCitations(plain.citations);
        turn.text = plain.answer || "";
        outcome = plain;
      }
      turn.render();
      if (!outcome) {
        turn.setState("error");
        turn.showError("The connection closed before the answer was complete.");
      } else if (outcome.error) {
        turn.setState("error");
        turn.showError(Ragd.describeError(new Ragd.ApiError(outcome.error.code || 500, outcome.error, null)));
      } else {
        turn.questionId = outcome.question_id || null;
        turn.messageId = outcome.message_id || null;
        turn.setState("done");
        turn.showSources(outcome.citations);
        turn.finish(outcome.usage, outcome.finish_reason, documents);
        if (outcome.rewritten_question) turn.showRewritten(outcome.rewritten_question);
        if (outcome.grounded === false) turn.showUngrounded();
        turn.markUnsupported(outcome.sentences);
        if (outcome.conversation_error) turn.showError("Not saved: " + outcome.conversation_error);
        turn.showActions(null);
      }
    } catch (err) {
      turn.render();
      if (err && err.name === "AbortError") {
        turn.setState("stopped");
        turn.meta.appendChild(el("span", { "data-testid": "answer-stopped", text: "Stopped." }));
        turn.showSources(null);
        turn.showActions(null);
        setTimeout(syncIds, 1000);
      } else {
        turn.setState("error");
        turn.showError(Ragd.describeError(err));
      }
    } finally {
      controller = null;
      setBusy(false);
      if (nearBottom()) scrollToBottom();
      refreshMe();
      Chat.sidebar.refresh();
    }
  }

  form.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = question.value.trim();
    if (!text || controller) return;
    if (!checkLength(text)) return;
    showBanner("");
    question.value = "";
    autoGrow();
    showLimit();
    ask(text, null);
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
  question.addEventListener("input", function () {
    autoGrow();
    showLimit();
  });

  stopButton.addEventListener("click", function () {
    if (controller) controller.abort();
  });

  $("signout").addEventListener("click", function (e) {
    e.preventDefault();
    Ragd.signOut();
  });

  window.addEventListener("hashchange", function () {
    var id = conversationFromHash();
    if (id && id !== conversationId) openConversation(id);
  });

  refreshMe();
  loadLimits();
  Chat.sidebar.refresh();
  var initial = conversationFromHash();
  if (initial) openConversation(initial);
  question.focus();
})();
