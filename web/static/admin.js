// Admin actions: every change is a JSON POST with the session's CSRF token (same origin).
// The answer is shown next to the control that was used (not at the top of a long page), the
// control is disabled while its request is out (a second tap cannot apply it twice), and a form
// that worked is cleared. Without this script the same forms post to /admin/do/<command>.
(function () {
  "use strict";
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var SUITS = { C: "\u2663", D: "\u2666", H: "\u2665", S: "\u2660" };

  function cards(text) {
    return String(text).replace(/\b(10|[2-9JQKA])([CDHS])\b/g, function (m, r, s) { return r + SUITS[s]; });
  }

  function resultFor(origin) {
    // the live fragment is replaced on every change: its answers go just below it
    if (origin && origin.closest && origin.closest("#live")) return document.getElementById("now-result");
    var el = origin && (origin.querySelector ? origin.querySelector(".result") : null);
    if (!el && origin) {
      var box = origin.closest(".controls, .end-zone, .actions, .deal-actions, section");
      el = box && box.querySelector(".result");
    }
    return el;
  }

  function show(origin, text, ok) {
    var el = origin && origin.nodeType === 1 && origin.classList.contains("result") ? origin : resultFor(origin);
    if (!el) return;
    el.hidden = false;
    el.textContent = text;
    el.className = "result " + (ok ? "result-ok" : "result-fault");
    el.setAttribute("role", ok ? "status" : "alert");
  }

  function send(command, payload, origin, button) {
    if (button) { if (button.disabled) return Promise.resolve(null); button.disabled = true; }
    origin = resultFor(origin) || origin;  // found now: a live update may detach the form meanwhile
    return fetch("/api/admin/" + command, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token },
      body: JSON.stringify(payload || {})
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (body) {
        if (!resp.ok) {
          show(origin, "Refused: " + cards(body.error || ("HTTP " + resp.status)) + ". Nothing was changed.", false);
          return null;
        }
        show(origin, cards(body.message || "Done."), true);
        if (window.looLive) window.looLive.refresh();
        return body;
      });
    }).catch(function () {
      show(origin, "The table did not answer: it may be off or out of Wi-Fi range. Check the page before trying again.", false);
      return null;
    }).finally(function () { if (button && button.isConnected) button.disabled = false; });
  }

  function chipStep(f) {
    var n = parseInt(f.delta.value, 10), note = f.reason.value.trim();
    var step = (f.querySelector('input[name="step"]:checked') || {}).value || "fix";
    if (step === "rebuy") return { player: f.player.value, delta: Math.abs(n), reason: note || ("bought " + Math.abs(n) + " more chips") };
    if (step === "cash_out") return { player: f.player.value, delta: -Math.abs(n), reason: note || ("cashed out " + Math.abs(n) + " chips") };
    return { player: f.player.value, delta: n, reason: note || "chip count corrected" };
  }

  // a large amount is asked again before it is recorded (a slip of the thumb adds a zero)
  function largeConfirmed(f, payload) {
    var large = parseInt(f.dataset.large, 10), n = Math.abs(payload.delta);
    if (!(n > large)) return true;
    var held = document.querySelector('[data-chips-of="' + CSS.escape(payload.player) + '"]');
    if (payload.delta < 0 && held && n > parseInt(held.textContent, 10)) return true;  // refused with the reason
    var what = payload.delta > 0 ? " buys " + n + " chips" : " cashes out " + n + " chips";
    return window.confirm(payload.player + what + ": more than the " + large + " starting chips. Record it?");
  }

  function changedSettings(f) {
    var payload = {};
    if (!f.players.disabled && f.players.value.trim() !== f.players.dataset.initial.trim()) {
      payload.players = f.players.value.split("\n").map(function (s) { return s.trim(); }).filter(Boolean);
    }
    if (!f.starting_chips.disabled && f.starting_chips.value !== f.starting_chips.dataset.initial) {
      payload.starting_chips = parseInt(f.starting_chips.value, 10);
    }
    if (f.chip_value.value.trim() !== f.chip_value.dataset.initial) payload.chip_value = f.chip_value.value.trim();
    if (f.currency && f.currency.value.trim() !== f.currency.dataset.initial) payload.currency = f.currency.value.trim();
    if (!f.variant.disabled && f.variant.value !== f.variant.dataset.initial) { payload.variant = f.variant.value; payload.options = {}; }
    return payload;
  }

  function rulesPayload(f) {
    var options = {};
    Array.prototype.forEach.call(f.querySelectorAll("[data-kind]"), function (el) {
      if (el.disabled) return;
      var def = JSON.parse(el.dataset["default"]), value;
      if (el.dataset.kind === "bool") value = el.checked;
      else if (el.dataset.kind === "choice") value = el.value;
      else if (el.value === "") value = null;
      else value = Number(el.value);
      if (value !== def) options[el.name] = value;
    });
    return { variant: f.dataset.variant, options: options };
  }

  function newNightPayload(f) {
    var keep = f.keep_rules.checked && f.variant.value === f.variant.dataset.current;
    var payload = {
      players: f.players.value.split("\n").map(function (s) { return s.trim(); }).filter(Boolean),
      variant: f.variant.value, options: keep ? JSON.parse(f.dataset.options || "{}") : {}
    };
    if (f.starting_chips.value !== "") payload.starting_chips = parseInt(f.starting_chips.value, 10);
    if (f.chip_value.value.trim() !== "") payload.chip_value = f.chip_value.value.trim();
    return payload;
  }

  function zonesPayload(f) {
    var zones = {};
    Array.prototype.forEach.call(f.querySelectorAll("fieldset[data-zone]"), function (fs) {
      var rect = {}, filled = 0;
      Array.prototype.forEach.call(fs.querySelectorAll("input"), function (el) {
        if (el.value !== "") { rect[el.name.split(".")[1]] = Number(el.value); filled += 1; }
      });
      if (filled) zones[fs.dataset.zone] = rect;
    });
    return { zones: zones };
  }

  // rules that matter only when another is on ("Which jack is Pam" needs Pam)
  function showNeeded() {
    Array.prototype.forEach.call(document.querySelectorAll("[data-needs]"), function (row) {
      var box = document.getElementById("opt-" + row.dataset.needs);
      row.hidden = !!(box && !box.checked);
    });
  }
  document.addEventListener("change", function (ev) { if (ev.target.dataset && ev.target.dataset.kind === "bool") showNeeded(); });
  showNeeded();

  document.addEventListener("click", function (ev) {
    var btn = ev.target.closest("button[data-command]");
    if (!btn) return;
    ev.preventDefault();
    if (btn.dataset.confirm && !window.confirm(btn.dataset.confirm)) return;
    send(btn.dataset.command, btn.dataset.payload ? JSON.parse(btn.dataset.payload) : {}, btn.parentNode, btn);
  });

  // The card picker: wherever the host names a card, a Pick button opens a suit-then-rank chooser
  // (no typing "10H" on a phone keyboard); the field stays, for a host who prefers to type.
  document.documentElement.classList.add("js");
  var picker = document.getElementById("card-picker"), picking = null, suit = null;

  function formSelector(form) {  // found again after a live update replaced the form
    var sel = "form" + (form.id ? "#" + CSS.escape(form.id) : "");
    form.classList.forEach(function (c) { sel += "." + CSS.escape(c); });
    Array.prototype.forEach.call(form.attributes, function (a) {
      if (a.name.indexOf("data-") === 0) sel += "[" + a.name + '="' + CSS.escape(a.value) + '"]';
    });
    return sel;
  }
  function pickTarget() {
    var form = picking && document.querySelector(picking);
    var fields = form ? form.querySelectorAll('input[name="card"]') : [];
    if (fields.length <= 1) return fields[0] || null;
    return Array.prototype.find.call(fields, function (el) { return !el.value; }) || fields[fields.length - 1];
  }
  function setSuit(code) {
    suit = code;
    Array.prototype.forEach.call(picker.querySelectorAll("[data-suit]"), function (b) {
      b.setAttribute("aria-pressed", String(b.dataset.suit === code));
    });
    document.getElementById("picker-now").textContent = code ? "Now the rank." : "Tap the suit, then the rank.";
  }
  if (picker) {
    document.addEventListener("click", function (ev) {
      var open = ev.target.closest("button.pick-card");
      if (!open) return;
      ev.preventDefault();
      picking = formSelector(open.closest("form"));
      setSuit(null);
      picker.showModal();
    });
    picker.addEventListener("click", function (ev) {
      var b = ev.target.closest("button");
      if (!b) return;
      if (b.hasAttribute("data-picker-close")) { picker.close(); return; }
      if (b.dataset.suit) { setSuit(b.dataset.suit); return; }
      if (b.dataset.rank && !suit) { document.getElementById("picker-now").textContent = "First the suit."; return; }
      if (b.dataset.rank) {
        var field = pickTarget();
        picker.close();
        if (!field) return;
        field.value = b.dataset.rank + suit;
        field.focus({ preventScroll: true });
      }
    });
  }

  // what a join said, shown again once the page has reloaded with the new seat
  var JOINED = "loo-joined";
  try {
    var said = sessionStorage.getItem(JOINED);
    if (said) { sessionStorage.removeItem(JOINED); show(document.querySelector("#join-form .result"), said, true); }
  } catch (e) { /* no storage: the live part shows the seat all the same */ }

  var FORMS = {
    "fix-any-form": function (f) { return ["correct_card", { trick: parseInt(f.trick.value, 10), player: f.player.value, card: f.card.value.trim() }, true]; },
    "missed-form": function (f) { return ["correct_card", { zone: f.zone.value, card: f.card.value.trim() }, true]; },
    "adjust-form": function (f) { return ["adjust_chips", chipStep(f), true]; },
    "leave-form": function (f) { return ["remove_player", { player: f.player.value }, false]; },
    "join-form": function (f) { return ["add_player", { player: f.player.value.trim(), chips: parseInt(f.chips.value, 10) }, true]; },
    "flush-form": function (f) {
      var cs = Array.prototype.map.call(f.querySelectorAll('input[name="card"]'), function (el) { return el.value.trim(); });
      return ["claim_flush", { player: f.player.value, cards: cs }, true];
    },
    "pam-form": function (f) { return ["show_pam", { player: f.player.value }, false]; },
    "game-form": function (f) { return ["update_settings", changedSettings(f), false]; },
    "rules-form": function (f) { return ["update_settings", rulesPayload(f), false]; },
    "zones-form": function (f) { return ["set_zones", zonesPayload(f), false]; },
    "new-night-form": function (f) { return ["new_night", newNightPayload(f), false]; }
  };

  document.addEventListener("submit", function (ev) {
    var f = ev.target, spec = null;
    if (f.classList.contains("correct-form")) spec = ["correct_card", { alert_id: parseInt(f.dataset.alertId, 10), card: f.card.value.trim() }, true];
    else if (f.classList.contains("amend-form")) spec = ["amend_chips", { target: parseInt(f.dataset.entry, 10), delta: parseInt(f.delta.value, 10) }, true];
    else if (f.classList.contains("fix-form")) spec = ["correct_card", { trick: parseInt(f.dataset.trick, 10), player: f.dataset.player, card: f.card.value.trim() }, true];
    else if (FORMS[f.id]) spec = FORMS[f.id](f);
    else {  // login, logout, the live part's plain forms: plain posts; from a set-up step, back to it
      var step = document.querySelector('.wizard-steps [aria-current="step"]');
      if (step && /\/admin\/do\//.test(f.getAttribute("action") || "") && !f.querySelector('input[name="back"]')) {
        var back = document.createElement("input");
        back.type = "hidden"; back.name = "back"; back.value = step.closest("li").dataset.step;
        f.appendChild(back);
      }
      return;
    }
    ev.preventDefault();
    if (f.dataset.confirm && !window.confirm(f.dataset.confirm)) return;
    if (f.id === "adjust-form" && !largeConfirmed(f, spec[1])) return;
    if (f.id === "leave-form" && !window.confirm(spec[1].player + " leaves the table with their chips?")) return;
    if (f.id === "game-form" && !Object.keys(spec[1]).length) { show(f, "Nothing to save: no field was changed.", true); return; }
    var button = f.querySelector("button:not([type=button])");
    send(spec[0], spec[1], f, button).then(function (body) {
      if (!body) return;
      if (spec[2]) f.reset();  // a one-off entry: cleared, so a second tap cannot repeat it
      if ((spec[0] === "add_player" || spec[0] === "remove_player") && !body.queued) {  // the new seat belongs in every list of the page: reload it
        try { sessionStorage.setItem(JOINED, cards(body.message || "Done.")); } catch (e) { /* said already */ }
        location.hash = "#join";
        location.reload();
        return;
      }
      if (spec[1].variant && f.id === "game-form") { setTimeout(function () { location.reload(); }, 1200); return; }
      if (spec[0] === "new_night") { setTimeout(function () { location.reload(); }, 1500); return; }  // a new table
      Array.prototype.forEach.call(f.querySelectorAll("[data-initial]"), function (el) { el.dataset.initial = el.value; });
      Array.prototype.forEach.call(f.querySelectorAll(".rule"), function (row) {
        var el = row.querySelector("[data-kind]");
        row.classList.toggle("changed", !!(el && spec[1].options && el.name in spec[1].options));
      });
    });
  });
})();
