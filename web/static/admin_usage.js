// Admin page, usage (GET /v1/usage, whose "all_users" an admin gets): per UTC
// day over the last 31 days for all users together, and per user, the
// tokens (prompt and completion stacked), requests, successful answers or
// tokens per successful answer (a chosen metric); and a table per user of tokens,
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

  // What the charts show: per day (from the day sums) and per user.
  var METRICS = {
    tokens: {
      name: "Tokens",
      day: function (s) {
        return [{ value: s.prompt, cls: "prompt" }, { value: s.completion, cls: "completion" }];
      },
      user: function (u) { return u.total_tokens; },
    },
    requests: {
      name: "Requests",
      day: function (s) { return [{ value: s.requests, cls: "completion" }]; },
      user: function (u) { return u.requests; },
    },
    answers: {
      name: "Successful answers",
      day: function (s) { return [{ value: s.answers, cls: "completion" }]; },
      user: function (u) { return u.successful_answers; },
    },
    per_answer: {
      name: "Tokens per successful answer",
      day: function (s) {
        return [{ value: s.answers > 0 ? Math.round((s.prompt + s.completion) / s.answers) : 0, cls: "completion" }];
      },
      user: function (u) {
        return typeof u.tokens_per_successful_answer === "number" ? Math.round(u.tokens_per_successful_answer) : 0;
      },
    },
  };

  function plural(n, one, many) {
    return Ragd.formatNumber(n) + " " + (n === 1 ? one : many);
  }

  function dayChart(users, metric) {
    var m = METRICS[metric];
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
      var parts = m.day(s);
      if (parts.some(function (p) { return p.value > 0; })) withData++;
      return {
        label: day,
        axisLabel: i === 0 || i === days.length - 1 || i === Math.floor(days.length / 2) ? day.slice(5) : null,
        parts: parts,
        title: day + ": " + plural(s.prompt + s.completion, "token", "tokens") + " (" +
          Ragd.formatNumber(s.prompt) + " prompt, " + Ragd.formatNumber(s.completion) + " completion), " +
          plural(s.requests, "request", "requests") + ", " +
          plural(s.answers, "successful answer", "successful answers") +
          (s.answers > 0 ? ", " + perAnswer((s.prompt + s.completion) / s.answers) + " tokens per successful answer"
            : ""),
      };
    });
    return Ragd.chart.columns({
      bars: bars, testid: "usage-chart", barTestid: "usage-bar",
      label: m.name + " per day over the last " + DAYS + " days, all users: " + withData + " days with use",
      description: metric === "tokens" ? "Stacked bars: prompt tokens at the bottom, completion tokens on top." : null,
    });
  }

  function userChart(users, metric) {
    var m = METRICS[metric];
    var bars = users.filter(function (u) { return m.user(u) > 0; }).map(function (u) {
      return {
        label: u.username, value: m.user(u), cls: "completion",
        title: u.username + ": " + plural(u.total_tokens, "token", "tokens") + ", " +
          plural(u.requests, "request", "requests") + ", " +
          plural(u.successful_answers, "successful answer", "successful answers"),
      };
    });
    if (!bars.length) return el("p", { class: "muted small", "data-testid": "user-usage-chart-empty",
      text: "Nothing in the last " + DAYS + " days." });
    return Ragd.chart.rows({
      bars: bars, testid: "user-usage-chart", barTestid: "user-usage-bar",
      label: m.name + " per user over the last " + DAYS + " days",
    });
  }

  var lastUsers = [];

  function drawCharts() {
    var metric = $("usage-metric").value;
    if (!METRICS[metric]) metric = "tokens";
    $("usage-legend").classList.toggle("hidden", metric !== "tokens");
    $("usage-chart-caption").textContent = METRICS[metric].name + " per day, all users";
    $("user-chart-caption").textContent = METRICS[metric].name + " per user";
    var chartBox = $("usage-chart-box");
    Ragd.clear(chartBox);
    chartBox.appendChild(dayChart(lastUsers, metric));
    var userBox = $("user-chart-box");
    Ragd.clear(userBox);
    userBox.appendChild(userChart(lastUsers, metric));
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
    lastUsers = users;
    drawCharts();
    var rows = $("usage-rows");
    Ragd.clear(rows);
    users.forEach(function (u) { rows.appendChild(tableRow(u)); });
    $("usage-summary").textContent = Ragd.formatNumber(all.total_tokens) + " tokens, " +
      Ragd.formatNumber(all.successful_answers) + (all.successful_answers === 1 ? " successful answer, "
      : " successful answers, ") +
      perAnswer(all.tokens_per_successful_answer) + " tokens per successful answer.";
  }

  $("usage-refresh").addEventListener("click", load);
  $("usage-metric").addEventListener("change", drawCharts);

  admin.usage = { reload: load };
  admin.onStart(function () {
    load();
    setInterval(function () {
      if (document.visibilityState === "visible") load();
    }, REFRESH_MS);
  });
})();
