// Admin page core: checks that the signed-in user is an admin, then starts
// the panels (admin_*.js register themselves with Ragd.admin.onStart); page
// errors, the two-click confirmation of irreversible buttons, sign-out.
"use strict";

(function () {
  var $ = function (id) { return document.getElementById(id); };
  var starters = [];

  var admin = {
    me: null,
    // fn(me) runs once the user is known to be an admin.
    onStart: function (fn) { starters.push(fn); },
    showError: function (box, text) {
      box.textContent = text || "";
      box.classList.toggle("hidden", !text);
    },
    pageError: function (text) { admin.showError($("admin-error"), text); },
    // A button that acts only when clicked twice within 4 s: the first click
    // changes its label to `confirmText` (data-armed="1").
    confirmTwice: function (button, confirmText, action) {
      var label = button.textContent;
      var timer = null;
      button.addEventListener("click", function () {
        if (button.dataset.armed === "1") {
          clearTimeout(timer);
          button.dataset.armed = "0";
          button.classList.remove("armed");
          button.textContent = label;
          action();
          return;
        }
        button.dataset.armed = "1";
        button.classList.add("armed");
        button.textContent = confirmText;
        timer = setTimeout(function () {
          button.dataset.armed = "0";
          button.classList.remove("armed");
          button.textContent = label;
        }, 4000);
      });
    },
  };
  Ragd.admin = admin;

  $("signout").addEventListener("click", function (e) {
    e.preventDefault();
    Ragd.signOut();
  });

  async function start() {
    try {
      var me = await Ragd.api("GET", "/v1/me");
      $("whoami").textContent = me.username || "";
      if (me.role !== "admin") {
        admin.pageError("This page is for administrators. You are signed in as " + me.username +
          " (role " + me.role + ").");
        return;
      }
      admin.me = me;
      $("admin-content").classList.remove("hidden");
      starters.forEach(function (fn) {
        try {
          fn(me);
        } catch (err) {
          admin.pageError("Cannot start the page: " + err.message);
        }
      });
    } catch (err) {
      if (!(err instanceof Ragd.ApiError && err.status === 401)) admin.pageError(Ragd.describeError(err));
    }
  }

  // Deferred scripts all run before DOMContentLoaded: by then every
  // admin_*.js has registered. (readyState is already "interactive" while
  // they run, so it cannot tell.)
  document.addEventListener("DOMContentLoaded", start);
})();
