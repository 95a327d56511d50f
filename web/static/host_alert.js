// The table waits for the host (a hold: a card the camera is unsure of, a card out of turn): the
// tab's title says so, the phone buzzes once per new hold and, if the host turned it on, a short
// sound plays (made here with Web Audio: no sound file, nothing fetched). The live fragment marks
// each hold with data-needs-host; live.js fires loo:updated after every swap.
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root) return;
  var MARK = "\u26A0 Your answer \u00B7 ", KEY = "loo-hold-sound";
  var base = document.title.replace(MARK, ""), seen = {}, audio = null;
  var toggle = document.getElementById("hold-sound");

  function beep() {
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      if (audio.state === "suspended") audio.resume();
      [0, 0.25].forEach(function (at) {
        var osc = audio.createOscillator(), gain = audio.createGain(), t = audio.currentTime + at;
        osc.frequency.value = 880;
        gain.gain.setValueAtTime(0.2, t);
        gain.gain.exponentialRampToValueAtTime(0.001, t + 0.18);
        osc.connect(gain).connect(audio.destination);
        osc.start(t);
        osc.stop(t + 0.2);
      });
    } catch (e) { /* no audio on this phone: the title and the buzz remain */ }
  }

  function check() {
    var holds = root.querySelectorAll("[data-needs-host]"), fresh = false;
    Array.prototype.forEach.call(holds, function (h) {
      if (!seen[h.dataset.needsHost]) { seen[h.dataset.needsHost] = true; fresh = true; }
    });
    document.title = holds.length ? MARK + base : base;
    document.documentElement.dataset.hostNeeded = holds.length ? "1" : "0";
    if (!fresh) return;
    if (navigator.vibrate) navigator.vibrate([300, 120, 300]);
    if (toggle && toggle.checked) beep();
  }

  if (toggle) {
    try { toggle.checked = localStorage.getItem(KEY) === "1"; } catch (e) { /* not remembered */ }
    toggle.addEventListener("change", function () {
      try { localStorage.setItem(KEY, toggle.checked ? "1" : "0"); } catch (e) { /* not remembered */ }
      if (toggle.checked) beep();  // a tap is what lets a phone play sound: say how it sounds now
    });
  }
  document.addEventListener("loo:updated", check);
  check();
})();
