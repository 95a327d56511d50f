// End of night: copy the result as text, or hand it to the phone's share sheet where there is one.
(function () {
  "use strict";
  var text = document.getElementById("share-text");
  if (!text) return;
  var said = document.getElementById("share-result");
  function say(msg) { said.hidden = false; said.className = "result result-ok"; said.textContent = msg; }
  document.getElementById("copy-share").addEventListener("click", function () {
    var done = function () { say("Copied: paste it into the chat."); };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text.value).then(done, function () { text.select(); document.execCommand("copy"); done(); });
    } else { text.select(); document.execCommand("copy"); done(); }  // a LAN page is not a secure context
  });
  var send = document.getElementById("send-share");
  if (navigator.share) {
    send.hidden = false;
    send.addEventListener("click", function () { navigator.share({ text: text.value }).catch(function () {}); });
  }
})();
