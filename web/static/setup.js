// The first run: Start opens the window in which seat 1's button claims the table; the page asks
// the table about once a second and shows the PIN form as soon as the button was pressed.
(function () {
  "use strict";
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var claim = document.getElementById("claim"), status = document.getElementById("claim-status");
  var pinSection = document.getElementById("pin"), timer = null;
  if (!claim) return;

  function show(s) {
    claim.dataset.status = s.status;
    status.hidden = !s.message;
    status.textContent = s.message;
    status.className = "result " + (s.status === "expired" || s.status === "busy" ? "result-fault" : "result-ok");
    pinSection.hidden = s.status !== "claimed";
    if (s.status === "claimed") pinSection.querySelector('input[name="pin"]').focus();
    if (s.status === "used") location.href = "/admin";
    if (timer) { clearTimeout(timer); timer = null; }
    if (s.status === "waiting" || s.status === "busy") timer = setTimeout(poll, 1000);
  }
  function poll() {
    fetch("/setup/state", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) { return r.json(); }).then(show)
      .catch(function () { status.hidden = false; status.textContent = "The table did not answer: is it on? Trying again…"; timer = setTimeout(poll, 2000); });
  }
  function post(url, body) {
    return fetch(url, { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (b) { return { ok: r.ok, body: b }; }); });
  }
  document.getElementById("claim-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    post("/setup/claim", {}).then(function (r) { show(r.body.status ? r.body : { status: "expired", message: r.body.error }); });
  });
  document.getElementById("pin-form").addEventListener("submit", function (ev) {
    ev.preventDefault();
    var f = ev.target;
    post("/setup/pin", { pin: f.pin.value, again: f.again.value }).then(function (r) {
      if (r.ok) { location.href = r.body.next; return; }
      status.hidden = false;
      status.textContent = r.body.error || "Refused.";
      status.className = "result result-fault";
      if (/start again/.test(r.body.error || "")) pinSection.hidden = true;
    });
  });
  if (claim.dataset.status === "waiting") timer = setTimeout(poll, 1000);
})();
