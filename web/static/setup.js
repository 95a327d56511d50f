// The first run: Start opens the window in which seat 1's button claims the table; the page asks
// the table about once a second and shows the PIN form as soon as the button was pressed. Later
// the same PIN form (with the current PIN) changes the PIN.
(function () {
  "use strict";
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var claim = document.getElementById("claim"), pinSection = document.getElementById("pin");
  var pinForm = document.getElementById("pin-form"), timer = null;
  var status = document.getElementById("claim-status") || document.getElementById("pin-status");
  if (!pinForm) return;
  var changing = pinForm.dataset.change === "1";

  function say(text, fault) {
    status.hidden = !text;
    status.textContent = text;
    status.className = "result " + (fault ? "result-fault" : "result-ok");
  }
  function current(name) {  // the step indicator follows: the PIN once the table is claimed
    document.querySelectorAll(".wizard-steps .step").forEach(function (li) {
      var a = li.querySelector("a"), here = li.dataset.step === name;
      li.classList.toggle("current", here);
      if (here) a.setAttribute("aria-current", "step"); else a.removeAttribute("aria-current");
      if (li.dataset.step === "claim") li.classList.toggle("done", name === "pin");
    });
  }
  function show(s) {
    claim.dataset.status = s.status;
    current(s.status === "claimed" ? "pin" : "claim");
    say(s.message, s.status === "expired" || s.status === "busy");
    pinSection.hidden = s.status !== "claimed";
    if (s.status === "claimed") pinSection.querySelector('input[name="pin"]').focus();
    if (s.status === "used") location.href = "/admin";
    if (timer) { clearTimeout(timer); timer = null; }
    if (s.status === "waiting" || s.status === "busy") timer = setTimeout(poll, 1000);
  }
  function poll() {
    fetch("/setup/state", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); }).then(show)
      .catch(function () { say("The table did not answer: is it on? Trying again…", true); timer = setTimeout(poll, 2000); });
  }
  function post(url, body) {
    return fetch(url, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); });
  }
  if (claim) {
    document.getElementById("claim-form").addEventListener("submit", function (ev) {
      ev.preventDefault();
      post("/setup/claim", {}).then(function (r) { show(r.body.status ? r.body : { status: "expired", message: r.body.error }); });
    });
  }
  pinForm.addEventListener("submit", function (ev) {
    ev.preventDefault();
    var f = ev.target, body = { pin: f.pin.value, again: f.again.value };
    if (changing) body.current = f.current.value;
    post("/setup/pin", body).then(function (r) {
      if (r.ok && changing) {
        token = r.body.csrf_token;
        document.querySelector('meta[name="csrf-token"]').content = token;
        f.reset();
        say(r.body.message, false);
        return;
      }
      if (r.ok) { location.href = r.body.next; return; }
      say(r.body.error || "Refused.", true);
      if (/start again/.test(r.body.error || "") && claim) pinSection.hidden = true;
    });
  });
  if (claim && claim.dataset.status === "waiting") timer = setTimeout(poll, 1000);
})();
