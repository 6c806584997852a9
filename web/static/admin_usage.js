// Admin page, usage (GET /v1/usage, whose "all_users" an admin gets): tokens
// per UTC day over the last 31 days for all users together (prompt and
// completion stacked), tokens per user, and a table per user of tokens,
// requests, successful answers and tokens per successful answer (failed or
// cancelled requests cost tokens too, so they raise that figure).
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var el = Ragd.el;
  var admin = Ragd.admin;
  var DAYS = 31;
  var REFRESH_MS = 30000;

  function utcDay(d) {
    return d.toISOString().slice(0, 10);
  }

  // The last DAYS UTC days, oldest first, as "YYYY-MM-DD".
  function lastDays(now) {
    var out = [];
    var today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    for (var i = DAYS - 1; i >= 0; i--) out.push(utcDay(new Date(today - i * 86400000)));
    return out;
  }

  function perAnswer(v) {
    return typeof v === "number" ? Ragd.formatNumber(Math.round(v)) : "–";
  }

  function dayChart(users) {
    var sums = {};
    users.forEach(function (u) {
      (u.days || []).forEach(function (d) {
        var s = sums[d.day] || (sums[d.day] = { prompt: 0, completion: 0, requests: 0, answers: 0 });
        s.prompt += d.prompt_tokens || 0;
        s.completion += d.completion_tokens || 0;
        s.requests += d.requests || 0;
        s.answers += d.successful_answers || 0;
      });
    });
    var days = lastDays(new Date());
    var withData = 0;
    var bars = days.map(function (day, i) {
      var s = sums[day] || { prompt: 0, completion: 0, requests: 0, answers: 0 };
      if (s.prompt + s.completion > 0) withData++;
      return {
        label: day,
        axisLabel: i === 0 || i === days.length - 1 || i === Math.floor(days.length / 2) ? day.slice(5) : null,
        parts: [{ value: s.prompt, cls: "prompt" }, { value: s.completion, cls: "completion" }],
        title: day + ": " + Ragd.formatNumber(s.prompt + s.completion) + " tokens (" +
          Ragd.formatNumber(s.prompt) + " prompt, " + Ragd.formatNumber(s.completion) + " completion), " +
          Ragd.formatNumber(s.requests) + " requests, " + Ragd.formatNumber(s.answers) + " successful answers",
      };
    });
    return Ragd.chart.columns({
      bars: bars, testid: "usage-chart", barTestid: "usage-bar",
      label: "Tokens per day over the last " + DAYS + " days, all users: " + withData + " days with use",
      description: "Stacked bars: prompt tokens at the bottom, completion tokens on top.",
    });
  }

  function userChart(users) {
    var bars = users.filter(function (u) { return u.total_tokens > 0; }).map(function (u) {
      return {
        label: u.username, value: u.total_tokens, cls: "completion",
        title: u.username + ": " + Ragd.formatNumber(u.total_tokens) + " tokens, " +
          Ragd.formatNumber(u.successful_answers) + " successful answers",
      };
    });
    if (!bars.length) return el("p", { class: "muted small", "data-testid": "user-usage-chart-empty",
      text: "No tokens used in the last " + DAYS + " days." });
    return Ragd.chart.rows({
      bars: bars, testid: "user-usage-chart", barTestid: "user-usage-bar",
      label: "Tokens per user over the last " + DAYS + " days",
    });
  }

  function tableRow(u) {
    return el("tr", { "data-testid": "usage-user-row", "data-username": u.username, "data-id": u.user_id }, [
      el("td", { "data-testid": "usage-user", text: u.username }),
      el("td", { class: "num", "data-testid": "usage-tokens", "data-value": u.total_tokens,
        text: Ragd.formatNumber(u.total_tokens) }),
      el("td", { class: "num", "data-testid": "usage-requests", text: Ragd.formatNumber(u.requests) }),
      el("td", { class: "num", "data-testid": "usage-answers", text: Ragd.formatNumber(u.successful_answers) }),
      el("td", { class: "num", "data-testid": "usage-per-answer", text: perAnswer(u.tokens_per_successful_answer) }),
    ]);
  }

  async function load() {
    var body;
    try {
      body = await Ragd.api("GET", "/v1/usage");
    } catch (err) {
      admin.showError($("usage-error"), "Cannot read the usage: " + Ragd.describeError(err));
      return;
    }
    admin.showError($("usage-error"), "");
    var all = body.all_users || { users: [] };
    var users = (all.users || []).slice().sort(function (a, b) {
      return (b.total_tokens - a.total_tokens) || a.username.localeCompare(b.username);
    });
    var chartBox = $("usage-chart-box");
    Ragd.clear(chartBox);
    chartBox.appendChild(dayChart(users));
    var userBox = $("user-chart-box");
    Ragd.clear(userBox);
    userBox.appendChild(userChart(users));
    var rows = $("usage-rows");
    Ragd.clear(rows);
    users.forEach(function (u) { rows.appendChild(tableRow(u)); });
    $("usage-summary").textContent = Ragd.formatNumber(all.total_tokens) + " tokens, " +
      Ragd.formatNumber(all.successful_answers) + (all.successful_answers === 1 ? " successful answer, "
      : " successful answers, ") +
      perAnswer(all.tokens_per_successful_answer) + " tokens per successful answer.";
  }

  $("usage-refresh").addEventListener("click", load);

  admin.usage = { reload: load };
  admin.onStart(function () {
    load();
    setInterval(function () {
      if (document.visibilityState === "visible") load();
    }, REFRESH_MS);
  });
})();
