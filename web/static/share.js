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
// ...or as a picture: drawn here on a <canvas> (no library, no font download), then handed to the
// phone's share sheet where it takes files, else downloaded as loo-night.png. The lines drawn are
// kept on the canvas (data-lines), so what the picture says can be read back and checked.
(function () {
  "use strict";
  var button = document.getElementById("share-picture");
  if (!button) return;
  var canvas = document.getElementById("share-canvas");
  var said = document.getElementById("share-result");
  function say(msg, ok) { said.hidden = false; said.className = "result " + (ok ? "result-ok" : "result-fault"); said.textContent = msg; }

  var W = 720, PAD = 36, ROW = 48, FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif";
  var INK = "#1b1b1b", MUTED = "#555555", WIN = "#0a6b2d", LOSS = "#b3261e", PAPER = "#ffffff", FELT = "#e3f1e7";

  function draw(data) {
    var rows = data.rows || [], transfers = data.transfers || [];
    var height = PAD * 2 + 64 + ROW * (rows.length + 1) + (transfers.length ? 64 + ROW * transfers.length : 0)
      + (data.note ? ROW : 0);
    canvas.width = W;
    canvas.height = height;
    var g = canvas.getContext("2d"), lines = [], y = PAD;
    g.fillStyle = PAPER; g.fillRect(0, 0, W, height);
    g.fillStyle = FELT; g.fillRect(0, 0, W, PAD + 52);
    g.textBaseline = "middle";
    function text(s, x, yy, opts) {
      g.font = (opts.bold ? "bold " : "") + (opts.size || 26) + "px " + FONT;
      g.fillStyle = opts.colour || INK;
      g.textAlign = opts.align || "left";
      g.fillText(s, x, yy);
    }
    text(data.title, PAD, y + 16, { bold: true, size: 32 }); lines.push(data.title);
    y += 64;
    text("Player", PAD, y + ROW / 2, { colour: MUTED, size: 22 });
    text("Chips", data.money ? 470 : W - PAD, y + ROW / 2, { colour: MUTED, size: 22, align: "right" });
    if (data.money) text("Money", W - PAD, y + ROW / 2, { colour: MUTED, size: 22, align: "right" });
    y += ROW;
    rows.forEach(function (r, i) {
      if (i % 2 === 0) { g.fillStyle = "#f3f3f3"; g.fillRect(PAD / 2, y, W - PAD, ROW); }
      var colour = r.sign > 0 ? WIN : (r.sign < 0 ? LOSS : INK);
      text(r.player, PAD, y + ROW / 2, { bold: true });
      text(r.chips.replace("-", "\u2212"), data.money ? 470 : W - PAD, y + ROW / 2, { colour: colour, bold: true, align: "right" });
      if (data.money) text(r.money.replace("-", "\u2212"), W - PAD, y + ROW / 2, { colour: colour, align: "right" });
      lines.push(r.player + ": " + r.chips + " chips" + (data.money ? " (" + r.money + ")" : ""));
      y += ROW;
    });
    if (transfers.length) {
      y += 16;
      text("Who pays whom", PAD, y + 24, { bold: true, size: 28 }); lines.push("Who pays whom:");
      y += 48;
      transfers.forEach(function (t) { text(t, PAD, y + ROW / 2, {}); lines.push(t); y += ROW; });
    }
    if (data.note) { text(data.note, PAD, y + ROW / 2, { colour: MUTED }); lines.push(data.note); }
    canvas.dataset.lines = JSON.stringify(lines);
  }

  function download(blob) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "loo-night.png";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
    say("Saved the picture (loo-night.png): send it from your photos or downloads.", true);
  }

  button.addEventListener("click", function () {
    draw(JSON.parse(button.dataset.result));
    canvas.toBlob(function (blob) {
      if (!blob) { say("This browser cannot make the picture; copy the text instead.", false); return; }
      var file = window.File ? new File([blob], "loo-night.png", { type: "image/png" }) : null;
      if (file && navigator.canShare && navigator.canShare({ files: [file] })) {
        navigator.share({ files: [file], title: "Loo night" }).then(function () { say("Shared the picture.", true); },
          function () { /* the share sheet was closed: nothing to say */ });
      } else {
        download(blob);
      }
    }, "image/png");
  });
})();
