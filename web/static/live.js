// Live updates for #live: Server-Sent Events when possible, else polling with ETags.
// Hand-written (about 130 lines) because a library would be larger than the job.
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root) return;
  var statusEl = document.getElementById("live-status");
  var partialUrl = root.dataset.partial;
  var shown = parseInt(root.dataset.version || "0", 10);
  var pollMs = parseInt(root.dataset.pollMs || "2000", 10);
  var etag = null, busy = false, again = false, pollTimer = null, source = null;

  function say(text) { if (statusEl) statusEl.textContent = text; }

  // A table that stopped answering must not look live: within a few seconds the page says so
  // (a banner, and the stale "to act" marks are hidden) until the table answers again.
  var OFFLINE_AFTER_MS = 2500, offlineTimer = null, offlineEl = document.getElementById("offline");
  function setOffline(on) {
    if (offlineTimer) { clearTimeout(offlineTimer); offlineTimer = null; }
    document.documentElement.classList.toggle("offline", on);
    if (offlineEl) offlineEl.hidden = !on;
    if (on) say("table offline");
  }
  function suspectOffline() {
    if (!offlineTimer && !document.documentElement.classList.contains("offline")) {
      offlineTimer = setTimeout(function () { offlineTimer = null; setOffline(true); }, OFFLINE_AFTER_MS);
    }
  }

  // Swap in a new fragment, but never under the fingers of someone typing in it (the admin's
  // correction fields): keep the newest one and swap once the typing is over.
  var pending = null;
  function typing() {
    var el = document.activeElement;
    return !!(el && root.contains(el) && /^(INPUT|TEXTAREA)$/.test(el.tagName) && el.value);
  }
  // Where focus sits in the fragment (its form's id, classes and data-* attributes, and which field
  // of that form), so a field just tapped, still empty, keeps the focus and keyboard across a swap.
  function focusedField() {
    var el = document.activeElement, form = el && el.form;
    if (!form || !root.contains(form) || !/^(INPUT|TEXTAREA)$/.test(el.tagName)) return null;
    var sel = "form" + (form.id ? "#" + CSS.escape(form.id) : "");
    form.classList.forEach(function (c) { sel += "." + CSS.escape(c); });
    Array.prototype.forEach.call(form.attributes, function (a) {
      if (a.name.indexOf("data-") === 0) sel += "[" + a.name + '="' + CSS.escape(a.value) + '"]';
    });
    return { sel: sel, index: Array.prototype.indexOf.call(form.querySelectorAll("input, textarea"), el) };
  }
  function refocus(field) {
    var form = field && root.querySelector(field.sel);
    var el = form && form.querySelectorAll("input, textarea")[field.index];
    if (el) el.focus({ preventScroll: true });
  }
  function swap(html, v) {
    if (typing()) { pending = { html: html, v: v }; return; }
    var field = focusedField();
    pending = null; shown = v; root.innerHTML = html; root.dataset.version = String(v);
    refocus(field);
    document.dispatchEvent(new CustomEvent("loo:updated", { detail: { version: v } }));
  }
  root.addEventListener("focusout", function (ev) {
    // focus moving to the field's own button is the submit on its way: the answer will refresh
    if (pending && !(ev.relatedTarget && root.contains(ev.relatedTarget))) {
      setTimeout(function () { if (pending && !typing()) swap(pending.html, pending.v); }, 0);
    }
  });

  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    var headers = etag ? { "If-None-Match": etag } : {};
    fetch(partialUrl, { headers: headers, credentials: "same-origin", cache: "no-store" })
      .then(function (resp) {
        setOffline(false);
        if (resp.status === 304) return null;
        if (!resp.ok) throw new Error("HTTP " + resp.status);
        etag = resp.headers.get("ETag");
        var v = parseInt(resp.headers.get("X-Loo-Version") || "0", 10);
        return resp.text().then(function (html) {
          // fetches never overlap (busy/again), so the latest answer is the newest state; versions
          // are not compared because they start again when the controller restarts
          swap(html, v);
        });
      })
      .catch(function (err) {
        if (err instanceof TypeError) setOffline(true);  // no answer at all: the table is gone
        else say("update failed: " + err.message);
      })
      .finally(function () { busy = false; if (again) { again = false; refresh(); } });
  }

  function startPolling(reason) {
    if (source) { source.close(); source = null; }
    if (pollTimer) return;
    say("polling every " + Math.round(pollMs / 1000) + " s (" + reason + ")");
    pollTimer = setInterval(refresh, pollMs);
    refresh();
  }

  if (!window.EventSource || !root.dataset.stream) { startPolling("no live stream"); return; }
  source = new EventSource(root.dataset.stream);
  var wasOffline = false;
  source.addEventListener("open", function () {
    wasOffline = document.documentElement.classList.contains("offline");
    setOffline(false);
    say("live");
    if (wasOffline) refresh();  // a restarted table: show its state now
  });
  source.addEventListener("html", function (ev) {
    // the server rendered the fragment once for every phone: no request needed
    etag = null;
    swap(ev.data, parseInt(ev.lastEventId || "0", 10));
  });
  source.addEventListener("state", function (ev) {
    // a little random delay spreads a table of phones' fetches instead of one burst per change
    if (parseInt(ev.lastEventId || "-1", 10) !== shown) setTimeout(refresh, Math.random() * 150);
  });
  source.addEventListener("overloaded", function (ev) {
    try { pollMs = JSON.parse(ev.data).poll_interval_ms || pollMs; } catch (e) { /* keep default */ }
    startPolling("server busy");
  });
  source.addEventListener("error", function () {
    if (source && source.readyState === EventSource.CLOSED) { startPolling("stream closed"); return; }
    say(document.documentElement.classList.contains("offline") ? "table offline: trying again…" : "reconnecting…");
    suspectOffline();
  });
  window.looLive = { refresh: refresh };
})();
