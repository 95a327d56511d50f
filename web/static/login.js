// The PIN lockout counts down on the page and gives the Log in button back when the wait is over
// (the server still refuses an early try: this only saves the host a guess).
(function () {
  "use strict";
  var box = document.getElementById("login-error");
  if (!box || !box.dataset.retry) return;
  var left = parseInt(box.dataset.retry, 10), button = document.querySelector("form.login button");
  var shown = document.getElementById("retry-left");
  if (button) button.disabled = true;
  var timer = setInterval(function () {
    left -= 1;
    if (left > 0) { shown.textContent = String(left); return; }
    clearInterval(timer);
    box.textContent = "You can try your PIN again now.";
    box.className = "banner banner-ok";
    box.setAttribute("role", "status");
    if (button) button.disabled = false;
  }, 1000);
})();
