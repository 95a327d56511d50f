// "I am Bea": the phone remembers whose it is, marks that seat, and buzzes when the turn comes to it.
(function () {
  "use strict";
  var pick = document.getElementById("me");
  if (!pick) return;
  var KEY = "loo-me", banner = document.getElementById("your-turn"), wasMine = false;
  try { pick.value = localStorage.getItem(KEY) || ""; } catch (e) { /* private mode: not remembered */ }
  if (pick.value === "" && pick.selectedIndex < 0) pick.selectedIndex = 0;

  function mark() {
    var me = pick.value, mine = false;
    Array.prototype.forEach.call(document.querySelectorAll(".seat[data-name]"), function (seat) {
      var isMe = me !== "" && seat.dataset.name === me;
      seat.classList.toggle("mine", isMe);
      if (isMe && seat.classList.contains("to-act")) mine = true;
    });
    if (banner) banner.hidden = !mine;
    document.title = (mine ? "\u25B6 Your turn \u00B7 " : "") + document.title.replace(/^\u25B6 Your turn \u00B7 /, "");
    if (mine && !wasMine && navigator.vibrate) navigator.vibrate([200, 100, 200]);
    wasMine = mine;
    document.documentElement.dataset.myTurn = mine ? "1" : "0";
  }
  pick.addEventListener("change", function () {
    try { localStorage.setItem(KEY, pick.value); } catch (e) { /* not remembered */ }
    wasMine = false;
    mark();
  });
  document.addEventListener("loo:updated", mark);
  mark();
})();
