// Admin page: follows ingestion jobs (asynchronous uploads and re-indexing)
// by polling GET /v1/documents/jobs/{id} every 500 ms; several jobs at once
// are read through one GET /v1/documents/jobs per tick instead.
//
//   var w = Ragd.admin.watchJob(job, function (job) { ...progress... });
//   w.done.then(function (body) { body.job.state, body.document });
//   w.cancel();   // DELETE /v1/documents/jobs/{id}
"use strict";

(function () {
  var POLL_MS = 500;
  var MANY = 3;  // more active jobs than this: one list request per tick
  var FINAL = { done: true, failed: true, cancelled: true };
  var watches = {};  // job id -> {onUpdate, resolve, failures}
  var timer = null;

  function active() { return Object.keys(watches); }

  function settle(id, body) {
    var w = watches[id];
    if (!w) return;
    delete watches[id];
    w.onUpdate(body.job);
    w.resolve(body);
  }

  // A finished job: read it once more on its own for the document it made.
  async function finish(id, job) {
    var body = { job: job };
    if (job.state === "done") {
      try {
        body = await Ragd.api("GET", "/v1/documents/jobs/" + encodeURIComponent(id));
      } catch (err) {
        body = { job: job };
      }
    }
    settle(id, body);
  }

  function failed(id, err) {
    var w = watches[id];
    if (!w) return;
    // A job the server no longer knows (restarted, or forgotten) ends the watch.
    if (err instanceof Ragd.ApiError && err.status === 404) {
      settle(id, { job: { id: Number(id), state: "failed", error: "the server no longer knows this job" } });
      return;
    }
    // Anything else (a network hiccup) is retried; give up after a minute.
    if (++w.failures > 120) settle(id, { job: { id: Number(id), state: "failed", error: Ragd.describeError(err) } });
  }

  async function pollOne(id) {
    try {
      var body = await Ragd.api("GET", "/v1/documents/jobs/" + encodeURIComponent(id));
      var w = watches[id];
      if (!w) return;
      w.failures = 0;
      if (FINAL[body.job.state]) settle(id, body);
      else w.onUpdate(body.job);
    } catch (err) {
      failed(id, err);
    }
  }

  async function pollMany(ids) {
    var body;
    try {
      body = await Ragd.api("GET", "/v1/documents/jobs");
    } catch (err) {
      ids.forEach(function (id) { failed(id, err); });
      return;
    }
    var byId = {};
    (body.jobs || []).forEach(function (j) { byId[String(j.id)] = j; });
    await Promise.all(ids.map(function (id) {
      var job = byId[id];
      var w = watches[id];
      if (!w) return null;
      if (!job) return pollOne(id);  // dropped from the list: ask for it alone
      w.failures = 0;
      if (FINAL[job.state]) return finish(id, job);
      w.onUpdate(job);
      return null;
    }));
  }

  async function tick() {
    timer = null;
    var ids = active();
    if (!ids.length) return;
    if (ids.length > MANY) await pollMany(ids);
    else await Promise.all(ids.map(pollOne));
    if (active().length && timer === null) timer = setTimeout(tick, POLL_MS);
  }

  Ragd.admin.watchJob = function (job, onUpdate) {
    var id = String(job.id);
    var done = new Promise(function (resolve) {
      watches[id] = { onUpdate: onUpdate || function () {}, resolve: resolve, failures: 0 };
    });
    watches[id].onUpdate(job);
    if (FINAL[job.state]) finish(id, job);
    else if (timer === null) timer = setTimeout(tick, POLL_MS);
    return {
      done: done,
      // Resolves once the server has taken the request; the watch then
      // reports the job as cancelled.
      cancel: function () {
        return Ragd.api("DELETE", "/v1/documents/jobs/" + encodeURIComponent(id)).then(function () {
          return pollOne(id);
        });
      },
    };
  };
})();
