// Admin actions: every change is a JSON POST with the session's CSRF token (same origin).
(function () {
  "use strict";
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var msg = document.getElementById("admin-message");

  function show(text, ok) {
    msg.hidden = false; msg.textContent = text;
    msg.className = "banner " + (ok ? "banner-ok" : "banner-fault");
  }

  function send(command, payload) {
    return fetch("/api/admin/" + command, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
      body: JSON.stringify(payload || {})
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (body) {
        if (!resp.ok) { show(body.error || ("refused (HTTP " + resp.status + ")"), false); return null; }
        show(body.message || (command.replace(/_/g, " ") + ": done"), true);
        if (window.looLive) window.looLive.refresh();
        return body;
      });
    }).catch(function (err) { show("network error: " + err.message, false); return null; });
  }

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[data-command]");
    if (!btn) return;
    ev.preventDefault();
    if (btn.dataset.confirm && !window.confirm(btn.dataset.confirm)) return;
    send(btn.dataset.command, btn.dataset.payload ? JSON.parse(btn.dataset.payload) : {});
  });

  document.addEventListener("submit", function (ev) {
    var f = ev.target;
    if (f.classList.contains("correct-form")) {
      ev.preventDefault();
      send("correct_card", { alert_id: parseInt(f.dataset.alertId, 10), card: f.card.value.trim() });
    } else if (f.classList.contains("fix-form")) {
      ev.preventDefault();
      send("correct_card", { trick: parseInt(f.dataset.trick, 10), player: f.dataset.player, card: f.card.value.trim() });
    } else if (f.id === "fix-any-form") {
      ev.preventDefault();
      send("correct_card", { trick: parseInt(f.trick.value, 10), player: f.player.value, card: f.card.value.trim() });
    } else if (f.id === "flush-form") {
      ev.preventDefault();
      var cards = Array.prototype.map.call(f.querySelectorAll('input[name="card"]'), function (el) { return el.value.trim(); });
      send("claim_flush", { player: f.player.value, cards: cards });
    } else if (f.id === "pam-form") {
      ev.preventDefault();
      send("show_pam", { player: f.player.value });
    } else if (f.id === "missed-form") {
      ev.preventDefault();
      send("correct_card", { zone: f.zone.value, card: f.card.value.trim() });
    } else if (f.id === "adjust-form") {
      ev.preventDefault();
      send("adjust_chips", { player: f.player.value, delta: parseInt(f.delta.value, 10), reason: f.reason.value });
    } else if (f.id === "game-form") {
      ev.preventDefault();
      var payload = {
        players: f.players.value.split("\n").map(function (s) { return s.trim(); }).filter(Boolean),
        starting_chips: parseInt(f.starting_chips.value, 10), chip_value: f.chip_value.value.trim()
      };
      var rules = document.getElementById("rules-form");
      if (f.variant.value !== rules.dataset.variant) { payload.variant = f.variant.value; payload.options = {}; }
      send("update_settings", payload).then(function (ok) { if (ok && payload.variant) location.reload(); });
    } else if (f.id === "rules-form") {
      ev.preventDefault();
      var options = {};
      Array.prototype.forEach.call(f.querySelectorAll("[data-kind]"), function (el) {
        if (el.disabled) return;
        var def = JSON.parse(el.dataset.default), value;
        if (el.dataset.kind === "bool") value = el.checked;
        else if (el.dataset.kind === "choice") value = el.value;
        else if (el.value === "") value = null;
        else value = Number(el.value);
        if (value !== def) options[el.name] = value;
      });
      send("update_settings", { variant: f.dataset.variant, options: options });
    } else if (f.id === "zones-form") {
      ev.preventDefault();
      var zones;
      try { zones = JSON.parse(f.zones.value); } catch (e) { show("zones: not valid JSON (" + e.message + ")", false); return; }
      send("set_zones", { zones: zones });
    }
  });
})();
