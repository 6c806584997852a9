// Sign-in page: POST /v1/auth/login, then on to the chat page, or to the
// admin page for an administrator who was sent here from it (?next=/admin).
"use strict";

(function () {
  var form = document.getElementById("login-form");
  var username = document.getElementById("username");
  var password = document.getElementById("password");
  var submit = document.getElementById("login-submit");
  var errorBox = document.getElementById("login-error");

  // Only known pages are accepted as targets, never a URL from the query.
  function target(role) {
    var next = new URLSearchParams(window.location.search).get("next");
    if (next === "/admin" && role === "admin") return "/admin";
    return "/";
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.classList.toggle("hidden", !text);
  }

  form.addEventListener("submit", async function (event) {
    event.preventDefault();
    showError("");
    if (!username.value.trim() || !password.value) {
      showError("Enter your username and password.");
      (username.value.trim() ? password : username).focus();
      return;
    }
    submit.disabled = true;
    submit.textContent = "Signing in…";
    try {
      var body = await Ragd.api("POST", "/v1/auth/login", {
        json: { username: username.value.trim(), password: password.value },
        noLoginRedirect: true,
      });
      var role = body && body.user ? body.user.role : "user";
      window.location.assign(target(role));
      return;
    } catch (err) {
      if (err instanceof Ragd.ApiError && (err.status === 401 || err.status === 403)) {
        showError("Wrong username or password.");
      } else {
        showError(Ragd.describeError(err));
      }
      password.select();
      password.focus();
    }
    submit.disabled = false;
    submit.textContent = "Sign in";
  });
})();
