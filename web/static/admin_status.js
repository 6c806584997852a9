// Admin page, system status (GET /v1/admin/status): version, uptime,
// readiness, the models with their queues (running and waiting sequences)
// and KV cache use, and the last hour's generations, tokens, time to first
// token (p50/p95) and decoding speed. Read every 5 s while the page is
// visible, and at once when it becomes visible again.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;
  var admin = Ragd.admin;
  var REFRESH_MS = 5000;
  var timer = null;
  var busy = false;

  function uptime(s) {
    if (typeof s !== "number") return "–";
    var d = Math.floor(s / 86400), h = Math.floor(s % 86400 / 3600), m = Math.floor(s % 3600 / 60);
    if (d) return d + " d " + h + " h";
    if (h) return h + " h " + m + " min";
    if (m) return m + " min " + Math.floor(s % 60) + " s";
    return Math.floor(s) + " s";
  }

  function seconds(v) {
    if (typeof v !== "number") return "–";
    return v < 1 ? Math.round(v * 1000) + " ms" : v.toFixed(2) + " s";
  }

  // A figure, with its raw value in data-value ("" when unknown).
  function put(id, text, value) {
    var node = $(id);
    node.textContent = text;
    node.setAttribute("data-value", value === null || value === undefined ? "" : String(value));
  }

  function kvCell(llm) {
    if (!llm || typeof llm.kv_cache_usage_ratio !== "number") return el("td", { text: "–" });
    var ratio = Math.max(0, Math.min(1, llm.kv_cache_usage_ratio));
    var text = Math.round(ratio * 100) + "%" + (typeof llm.kv_cache_budget_bytes === "number"
      ? " of " + Ragd.formatBytes(llm.kv_cache_budget_bytes) : "");
    return el("td", { class: "kv-cell" }, [
      el("meter", { min: "0", max: "1", low: "0.7", high: "0.9", optimum: "0", value: String(ratio),
        "data-testid": "status-kv", "aria-label": "KV cache use " + text }),
      el("span", { class: "small", text: " " + text }),
    ]);
  }

  function modelRow(m, llm) {
    return el("tr", { "data-testid": "status-model", "data-id": m.id }, [
      el("td", { class: "title", "data-testid": "status-model-id", text: m.id }),
      el("td", { "data-testid": "status-model-role", text: m.role || "–" }),
      el("td", { class: "wide", text: m.backend || "–" }),
      el("td", { class: "num", text: typeof m.context_length === "number" ? Ragd.formatNumber(m.context_length) : "–" }),
      el("td", { class: "num", "data-testid": "status-running", text: llm ? Ragd.formatNumber(llm.running) : "–" }),
      el("td", { class: "num", "data-testid": "status-waiting", text: llm ? Ragd.formatNumber(llm.waiting) : "–" }),
      kvCell(llm),
    ]);
  }

  function render(s) {
    put("status-version", s.version || "–", s.version);
    put("status-uptime", uptime(s.uptime_s), s.uptime_s);
    put("status-ready", s.ready ? "yes" : "no (starting or unavailable)", s.ready);
    var corpus = s.corpus || {};
    put("status-documents", Ragd.formatNumber(corpus.documents), corpus.documents);
    put("status-chunks", Ragd.formatNumber(corpus.chunks), corpus.chunks);
    var ingest = s.ingest || {};
    put("status-ingest", Ragd.formatNumber(ingest.running) + " running, " + Ragd.formatNumber(ingest.queued) +
      " queued", (ingest.running || 0) + (ingest.queued || 0));
    var h = s.last_hour || {};
    put("status-generations", Ragd.formatNumber(h.generations), h.generations);
    put("status-prompt-tokens", Ragd.formatNumber(h.prompt_tokens), h.prompt_tokens);
    put("status-completion-tokens", Ragd.formatNumber(h.completion_tokens), h.completion_tokens);
    put("status-ttft-p50", seconds(h.ttft_p50_s), h.ttft_p50_s);
    put("status-ttft-p95", seconds(h.ttft_p95_s), h.ttft_p95_s);
    put("status-decode", typeof h.decode_tokens_per_s === "number" ? h.decode_tokens_per_s.toFixed(1) + " tokens/s"
      : "–", h.decode_tokens_per_s);

    var llms = {};
    (s.llms || []).forEach(function (l) { llms[l.id] = l; });
    var rows = $("status-model-rows");
    Ragd.clear(rows);
    var seen = {};
    (s.models || []).forEach(function (m) {
      seen[m.id] = true;
      rows.appendChild(modelRow(m, llms[m.id]));
    });
    // A serving slot the model list does not name still shows its queue.
    (s.llms || []).forEach(function (l) {
      if (!seen[l.id]) rows.appendChild(modelRow({ id: l.id, role: "chat" }, l));
    });
    $("status-updated").textContent = "updated " + new Date().toLocaleTimeString("en-GB");
    $("status-body").classList.remove("hidden");
  }

  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      var s = await Ragd.api("GET", "/v1/admin/status");
      admin.showError($("status-error"), s.load_error ? "The server is not ready: " + s.load_error + "." : "");
      render(s);
    } catch (err) {
      admin.showError($("status-error"), err instanceof Ragd.ApiError && err.status === 404
        ? "This server does not report its status (GET /v1/admin/status answered 404)."
        : "Cannot read the status: " + Ragd.describeError(err));
    }
    busy = false;
  }

  function schedule() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    if (document.visibilityState !== "visible") return;
    refresh();
    timer = setInterval(refresh, REFRESH_MS);
  }

  admin.status = { refresh: refresh };
  admin.onStart(function () {
    document.addEventListener("visibilitychange", schedule);
    schedule();
  });
})();
