// Calibrate the camera from the Admin page while the table runs: find the markers in the camera's
// latest frame, or tap the four corners of the table on the picture (sent as fractions of its
// width and height). The answer (the figures and the warnings) is shown under the form.
(function () {
  "use strict";
  var form = document.getElementById("calibrate-form"), img = document.getElementById("camera-view");
  if (!form || !img) return;
  var token = document.querySelector('meta[name="csrf-token"]').content;
  var result = form.querySelector(".result"), report = document.getElementById("calibration-report");
  var taps = document.getElementById("camera-taps"), help = document.getElementById("tap-help");
  var tapping = null, NAMES = ["top left", "top right", "bottom right", "bottom left"];

  function say(text, ok) {
    result.hidden = false;
    result.textContent = text;
    result.className = "result " + (ok ? "result-ok" : "result-fault");
    result.setAttribute("role", ok ? "status" : "alert");
  }

  function el(tag, text) { var e = document.createElement(tag); if (text !== undefined) e.textContent = text; return e; }

  function show(r) {
    report.hidden = false;
    report.textContent = "";
    var dl = el("dl");
    dl.className = "figures";
    [["Reprojection error", r.residual_px + " px (want at most 2 px)"],
     ["Markers found", r.markers_found.length ? r.markers_found.join(", ") : "none: the corners you tapped"],
     ["The camera's picture", r.camera]].forEach(function (row) { dl.appendChild(el("dt", row[0])); dl.appendChild(el("dd", row[1])); });
    report.appendChild(dl);
    var sizes = el("table");
    sizes.className = "card-sizes";
    var head = el("tr");
    head.appendChild(el("th", "Zone"));
    head.appendChild(el("th", "A card looks (px tall; want 88 or more)"));
    sizes.appendChild(head);
    Object.keys(r.card_px).forEach(function (zone) {
      var tr = el("tr");
      tr.appendChild(el("td", zone));
      tr.appendChild(el("td", String(Math.round(r.card_px[zone]))));
      sizes.appendChild(tr);
    });
    report.appendChild(sizes);
    if (r.warnings.length) {
      var ul = el("ul");
      ul.className = "warnings";
      r.warnings.forEach(function (w) { ul.appendChild(el("li", w)); });
      report.appendChild(ul);
    }
  }

  function send(payload, button) {
    button.disabled = true;
    say("Calibrating…", true);
    return fetch("/api/admin/calibrate", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": token }, body: JSON.stringify(payload)
    }).then(function (resp) {
      return resp.json().catch(function () { return {}; }).then(function (body) {
        if (!resp.ok) { say(body.error || ("The table answered " + resp.status + "."), false); report.hidden = true; return; }
        say(body.message, body.ok);
        show(body);
      });
    }).catch(function () {
      say("The table did not answer: it may be off or out of Wi-Fi range.", false);
    }).finally(function () { button.disabled = false; });
  }

  function base() {
    return { table_mm: [Number(form.width.value), Number(form.height.value)], marker_mm: Number(form.marker.value),
             lock: form.lock.checked };
  }

  form.addEventListener("submit", function (ev) {
    ev.preventDefault();
    send(base(), form.querySelector("button:not([type=button])"));
  });

  function clearTaps() { taps.textContent = ""; }

  document.getElementById("tap-corners").addEventListener("click", function () {
    tapping = [];
    clearTaps();
    help.hidden = false;
    say("Tap the " + NAMES[0] + " corner of the table on the picture.", true);
    img.scrollIntoView({ block: "center" });
  });

  img.addEventListener("click", function (ev) {
    if (!tapping) return;
    var box = img.getBoundingClientRect();
    var x = (ev.clientX - box.left) / box.width, y = (ev.clientY - box.top) / box.height;
    tapping.push([Math.min(1, Math.max(0, x)), Math.min(1, Math.max(0, y))]);
    var dot = el("span", String(tapping.length));
    dot.className = "tap";
    dot.style.left = (x * 100) + "%";
    dot.style.top = (y * 100) + "%";
    taps.appendChild(dot);
    if (tapping.length < 4) { say("Now the " + NAMES[tapping.length] + " corner.", true); return; }
    var payload = base();
    payload.corners = tapping;
    tapping = null;
    help.hidden = true;
    send(payload, document.getElementById("tap-corners")).then(function () { setTimeout(clearTaps, 1500); });
  });
})();
