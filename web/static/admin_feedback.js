// Admin page, answer ratings: GET /v1/feedback as a table (rating,
// question with the answer and cited documents on hover, comment, user,
// date) and the link to the JSON Lines export for `ragd eval`.
"use strict";

(function () {
  var el = Ragd.el;
  var rows = document.getElementById("feedback-rows");
  var count = document.getElementById("feedback-count");
  var none = document.getElementById("no-feedback");

  async function load() {
    var list;
    try {
      list = (await Ragd.api("GET", "/v1/feedback", { noLoginRedirect: true })).feedback || [];
    } catch (err) {
      return;  // signed out meanwhile: admin.js reports it
    }
    Ragd.clear(rows);
    list.forEach(function (f) {
      var details = "Answer: " + (f.answer || "") +
        (f.documents && f.documents.length ? "\nCited: " + f.documents.join(", ") : "");
      rows.appendChild(el("tr", { "data-testid": "feedback-row", "data-id": f.id, "data-rating": f.rating }, [
        el("td", { "data-testid": "feedback-rating", text: f.rating > 0 ? "▲" : "▼",
          "aria-label": f.rating > 0 ? "helpful" : "not helpful" }),
        el("td", { class: "title", "data-testid": "feedback-question", title: details, text: f.question }),
        el("td", { class: "title", "data-testid": "feedback-comment", text: f.comment || "" }),
        el("td", { class: "wide", "data-testid": "feedback-user", text: f.username }),
        el("td", { class: "wide", text: Ragd.formatDate(f.created_at) }),
      ]));
    });
    count.textContent = "(" + list.length + ")";
    none.classList.toggle("hidden", list.length > 0);
  }

  Ragd.admin.onStart(load);
})();
