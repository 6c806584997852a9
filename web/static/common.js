// Shared helpers for the ragd pages: JSON calls to the API with the session
// cookie, error text, DOM building without HTML strings, and number/date
// formatting. Nothing here ever assigns untrusted text to innerHTML.
"use strict";

var Ragd = window.Ragd || {};
window.Ragd = Ragd;

(function () {
  // An API failure: HTTP status, the error object of the body (if any) and
  // the Retry-After header in seconds (or null).
  function ApiError(status, error, retryAfter) {
    this.status = status;
    this.error = error || {};
    this.retryAfter = retryAfter;
    this.message = (error && error.message) || ("HTTP " + status);
  }
  ApiError.prototype = Object.create(Error.prototype);
  ApiError.prototype.name = "ApiError";
  Ragd.ApiError = ApiError;

  // The page a 401 sends the browser to, remembering where it came from.
  Ragd.loginUrl = function () {
    var here = window.location.pathname;
    return here === "/admin" ? "/login?next=%2Fadmin" : "/login";
  };

  Ragd.goToLogin = function () {
    window.location.assign(Ragd.loginUrl());
  };

  function retryAfterOf(response) {
    var v = response.headers.get("Retry-After");
    if (v === null) return null;
    var n = parseInt(v, 10);
    return isNaN(n) ? null : n;
  }
  Ragd.retryAfterOf = retryAfterOf;

  // Reads the error body of a failed response (JSON error shape or text).
  Ragd.errorFromResponse = async function (response) {
    var error = null;
    try {
      var text = await response.text();
      try {
        var body = JSON.parse(text);
        error = body && body.error ? body.error : null;
      } catch (e) {
        error = text ? { message: text.slice(0, 300) } : null;
      }
    } catch (e) {
      error = null;
    }
    return new ApiError(response.status, error, retryAfterOf(response));
  };

  // fetch() against the API. `options.json` is sent as a JSON body;
  // `options.noLoginRedirect` keeps a 401 from leaving the page.
  // Resolves to the parsed JSON body; rejects with ApiError (or a TypeError
  // for network failures).
  Ragd.api = async function (method, path, options) {
    options = options || {};
    var init = { method: method, credentials: "same-origin", headers: { Accept: "application/json" } };
    if (options.json !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(options.json);
    }
    if (options.signal) init.signal = options.signal;
    var response = await fetch(path, init);
    if (!response.ok) {
      var err = await Ragd.errorFromResponse(response);
      if (response.status === 401 && !options.noLoginRedirect) Ragd.goToLogin();
      throw err;
    }
    var text = await response.text();
    return text ? JSON.parse(text) : {};
  };

  // A sentence a person can act on, for any failure.
  Ragd.describeError = function (err) {
    if (!(err instanceof ApiError)) {
      if (err && err.name === "AbortError") return "Stopped.";
      return "Cannot reach the server (" + (err && err.message ? err.message : "network error") + ").";
    }
    var e = err.error || {};
    var msg = err.message;
    if (!/[.!?]$/.test(msg)) msg += ".";
    var wait = err.retryAfter !== null && err.retryAfter !== undefined
      ? " Try again in " + Ragd.formatDuration(err.retryAfter) + "." : "";
    switch (e.type) {
      case "quota_exceeded":
        var left = typeof e.remaining_tokens === "number"
          ? " (" + Ragd.formatNumber(e.remaining_tokens) + " tokens left)" : "";
        return "Token quota used up" + left + ": " + msg + wait;
      case "rate_limit_error":
        return "Too many requests: " + msg + wait;
      case "unavailable_error":
        return "The server is busy or still starting: " + msg + wait;
      case "exceed_context_size_error":
        var sizes = typeof e.n_prompt_tokens === "number" && typeof e.n_ctx === "number"
          ? " (" + e.n_prompt_tokens + " prompt tokens, context holds " + e.n_ctx + ")" : "";
        return "The question is too long for the model" + sizes + ": " + msg;
      case "permission_error":
        return "Not allowed: " + msg;
      case "authentication_error":
        return "Please sign in again: " + msg;
      case "server_error":
        return "Server error: " + msg;
    }
    if (err.status === 429) return "Too many requests: " + msg + wait;
    if (err.status === 503) return "The server is busy: " + msg + wait;
    if (err.status === 413) return "Too large: " + msg;
    return "Error " + err.status + ": " + msg;
  };

  // el("div", {class: "x", "data-testid": "y", onclick: fn}, [children...])
  // Children are nodes or strings (strings become text nodes).
  Ragd.el = function (tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        var v = attrs[k];
        if (v === null || v === undefined || v === false) return;
        if (k === "text") node.textContent = String(v);
        else if (k.slice(0, 2) === "on" && typeof v === "function") node.addEventListener(k.slice(2), v);
        else node.setAttribute(k, v === true ? "" : String(v));
      });
    }
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  };

  Ragd.clear = function (node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  };

  Ragd.formatNumber = function (n) {
    if (typeof n !== "number" || !isFinite(n)) return "–";
    return n.toLocaleString("en-US");
  };

  Ragd.formatBytes = function (n) {
    if (typeof n !== "number" || !isFinite(n)) return "–";
    if (n < 1024) return n + " B";
    if (n < 1024 * 1024) return (n / 1024).toFixed(1) + " KiB";
    return (n / (1024 * 1024)).toFixed(1) + " MiB";
  };

  Ragd.formatDuration = function (seconds) {
    if (seconds < 90) return seconds + " s";
    if (seconds < 5400) return Math.round(seconds / 60) + " min";
    return Math.round(seconds / 3600) + " h";
  };

  // Accepts Unix seconds, Unix milliseconds or an ISO 8601 / SQLite date string.
  Ragd.parseDate = function (v) {
    if (v === null || v === undefined || v === "") return null;
    if (typeof v === "number") return new Date(v < 1e12 ? v * 1000 : v);
    var s = String(v);
    if (/^\d+$/.test(s)) return Ragd.parseDate(Number(s));
    // SQLite "YYYY-MM-DD HH:MM:SS" is UTC.
    if (/^\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?$/.test(s)) s = s.replace(" ", "T") + "Z";
    var d = new Date(s);
    return isNaN(d.getTime()) ? null : d;
  };

  Ragd.formatDate = function (v) {
    var d = Ragd.parseDate(v);
    if (!d) return v === null || v === undefined ? "–" : String(v);
    var pad = function (x) { return (x < 10 ? "0" : "") + x; };
    return d.getFullYear() + "-" + pad(d.getMonth() + 1) + "-" + pad(d.getDate()) + " " +
      pad(d.getHours()) + ":" + pad(d.getMinutes());
  };

  // Sign out: clear the session on the server, then go to the sign-in page.
  Ragd.signOut = async function () {
    try {
      await Ragd.api("POST", "/v1/auth/logout", { noLoginRedirect: true });
    } catch (e) {
      // Signed out already, or the server is gone: the sign-in page follows anyway.
    }
    window.location.assign("/login");
  };

  // Fills the quota display (element with .quota-text and .quota-bar span)
  // from the `quota` object of GET /v1/me.
  Ragd.renderQuota = function (box, quota) {
    var text = box.querySelector(".quota-text");
    var bar = box.querySelector(".quota-bar span");
    if (!quota) {
      text.textContent = "";
      return;
    }
    var limit = quota.limit;
    var remaining = quota.remaining;
    box.dataset.remaining = String(remaining);
    if (limit === null || limit === undefined || limit < 0) {
      text.textContent = "No token limit";
      bar.style.width = "0";
      box.classList.remove("low");
      box.title = "";
      return;
    }
    var period = quota.period === "day" ? " today" : quota.period ? " this " + quota.period : "";
    text.textContent = Ragd.formatNumber(remaining) + " of " + Ragd.formatNumber(limit) + " tokens left" + period;
    var frac = limit > 0 ? Math.max(0, Math.min(1, remaining / limit)) : 0;
    bar.style.width = (frac * 100).toFixed(1) + "%";
    box.classList.toggle("low", frac < 0.1);
    var resets = Ragd.parseDate(quota.resets_at);
    box.title = "used " + Ragd.formatNumber(quota.used) +
      (quota.reserved ? ", reserved " + Ragd.formatNumber(quota.reserved) : "") +
      (resets ? "; resets " + Ragd.formatDate(quota.resets_at) : "");
  };
})();
