// The camera view: the picture is fetched again about once a second while the page is visible
// (a JPEG each time, no video stream: a phone's screen needs no more, and no thread is held).
// The next picture is asked for only once the last one has loaded or failed, so a slow Wi-Fi
// link never piles up requests; a failure is said in a sentence under the picture.
(function () {
  "use strict";
  var img = document.getElementById("camera-view");
  if (!img || img.closest("[hidden]")) return;  // a set-up step without the camera
  var note = document.getElementById("camera-note"), plain = note ? note.textContent : "";
  var every = parseInt(img.dataset.everyMs || "1000", 10), timer = null, n = 0;

  function next() {
    if (timer) clearTimeout(timer);
    timer = setTimeout(load, every);
  }
  function load() {
    timer = null;
    if (document.hidden) return;  // picked up again on visibilitychange
    n += 1;
    img.src = img.dataset.src + "?n=" + n;
  }
  img.addEventListener("load", function () {
    img.classList.remove("stale");
    if (note) note.textContent = plain;
    next();
  });
  img.addEventListener("error", function () {
    img.classList.add("stale");
    if (note) note.textContent = "No picture from the camera just now (it may be starting, or its cable is loose); trying again.";
    timer = setTimeout(load, every * 3);
  });
  document.addEventListener("visibilitychange", function () { if (!document.hidden && !timer) load(); });
  next();
})();
