/**
 * Client-side JS (a string, inlined into the page): the chosen key's callers from its state
 * (`callers` in `GET /admin/keys/:key`), one row each, busiest share of the last minute first.
 * Labels and token hashes only: the API never returns a token. Uses el, fmtNum and the
 * data-seen ticker from the main script. Values are set as text only.
 */
function renderCallers(list) {
  var body = $("d-callers").tBodies[0];
  body.textContent = "";
  $("d-callers-none").hidden = list.length > 0;
  list.forEach(function (c) {
    var tr = el("tr");
    var seen = el("span");
    seen.dataset.seen = c.lastSeen || "";
    var cells = [c.caller, c.lane, c.inFlight, c.queued, c.served, (100 * c.share).toFixed(1) + " %", seen];
    cells.forEach(function (v, i) {
      var td = el("td", i === 0 ? "caller" : "");
      if (v instanceof Node) td.appendChild(v); else td.textContent = typeof v === "number" ? fmtNum(v) : String(v);
      tr.appendChild(td);
    });
    tr.title = c.caller;
    body.appendChild(tr);
  });
  tick();
}
