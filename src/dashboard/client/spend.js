/**
 * Client-side JS: the last hour's spend from the usage ledger (`GET /admin/usage?by=`), one
 * cumulative line per caller, virtual key or model (the six that spent most; the rest as
 * "other"), each with its whole total (the answer's `groups`). Fetched at most every 5 s; each key
 * writes to the ledger every USAGE_FLUSH_MS (the answer's `writtenEveryMs`), and the page says both,
 * so a figure is never older than it claims. Uses svgEl, niceCeil, clock and el from the other
 * scripts. Values are set as text only.
 */
var SPEND_MS = 5000, spendAt = 0, SPEND_COLOURS = ["#0969da", "#d97706", "#16a34a", "#7c3aed", "#dc2626", "#0891b2", "#656d76"];
function money(v) { return "$" + (v < 1 ? v.toFixed(4) : v.toFixed(2)); }
function refreshSpend(force) {
  if (!force && Date.now() - spendAt < SPEND_MS) return;
  spendAt = Date.now();
  var by = $("spend-by").value;
  api("/admin/usage?by=" + by).then(function (u) { drawSpend(u, by); freshness(u, Date.now()); }).catch(function () { $("spend").hidden = true; });
}
/** How old the figures may be: fetched at `at`; an answer reaches the ledger within writtenEveryMs of its end. */
function freshness(u, at) {
  var every = typeof u.writtenEveryMs === "number" ? u.writtenEveryMs : null;
  $("spend-fresh").textContent = "as of " + clock(at) + (every === null ? "" : "; answers reach the ledger within " + fmtMs(every) + " of their end");
}
function drawSpend(u, by) {
  var svg = $("spend-chart"), legend = $("spend-legend");
  function s(tag, attrs, text) { return svgEl(svg, tag, attrs, text); }
  $("spend").hidden = false;
  var t = u.totals;
  $("spend-total").textContent = money(t.costUsd) + " in " + t.requests + " answers, " + (t.inputTokens + t.outputTokens) + " tokens" + (t.unknownUsage ? ", " + t.unknownUsage + " without usage" : "");
  var per = {};
  u.rows.forEach(function (r) { var k = r[by] == null ? "(none)" : String(r[by]); per[k] = (per[k] || 0) + r.costUsd; });
  var names = Object.keys(per).sort(function (a, b) { return per[b] - per[a]; });
  var shown = names.slice(0, 6), lines = {}, top = 0, whole = {};
  (u.groups || []).forEach(function (g) { var k = g[by] == null ? "(none)" : String(g[by]); if (shown.indexOf(k) < 0) k = "other"; whole[k] = (whole[k] || 0) + g.costUsd; });
  var t0 = Date.parse(u.since), t1 = Date.parse(u.until), W = 720, H = 200, L = 56, R = 16, T = 12, B = 28;
  u.rows.forEach(function (r) {
    var k = r[by] == null ? "(none)" : String(r[by]);
    if (shown.indexOf(k) < 0) k = "other";
    (lines[k] = lines[k] || []).push([Date.parse(r.minute) + 60000, r.costUsd]);
  });
  var keys = Object.keys(lines);
  keys.forEach(function (k) { var run = 0; lines[k].forEach(function (p) { run += p[1]; p[1] = run; }); top = Math.max(top, run); });
  top = top > 0 ? niceCeil(top * 1e4 * 1.1) / 1e4 : 0.01;
  function x(v) { return L + ((Math.min(v, t1) - t0) / (t1 - t0)) * (W - L - R); }
  function y(v) { return T + (1 - v / top) * (H - T - B); }
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  while (legend.firstChild) legend.removeChild(legend.firstChild);
  [0, top / 2, top].forEach(function (v) {
    svg.appendChild(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), "class": v === 0 ? "axis" : "grid" }));
    svg.appendChild(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, money(v)));
  });
  svg.appendChild(s("text", { x: L, y: H - 8 }, clock(t0)));
  svg.appendChild(s("text", { x: W - R, y: H - 8, "text-anchor": "end" }, "now " + clock(t1)));
  keys.forEach(function (k, i) {
    var c = SPEND_COLOURS[k === "other" ? 6 : shown.indexOf(k)] || SPEND_COLOURS[i % 7], d = "M" + x(t0) + " " + y(0);
    lines[k].forEach(function (p) { d += " H" + x(p[0]).toFixed(1) + " V" + y(p[1]).toFixed(1); });
    svg.appendChild(s("path", { d: d + " H" + x(t1), "class": "line", stroke: c, "data-name": k }));
    var item = el("span", "", k + " " + money(k in whole ? whole[k] : lines[k][lines[k].length - 1][1]));
    item.dataset.name = k;
    var sw = el("span", "sw line-sw");
    sw.style.background = c;
    item.insertBefore(sw, item.firstChild);
    legend.appendChild(item);
  });
  if (!keys.length) svg.appendChild(s("text", { x: (L + W - R) / 2, y: T + 16, "text-anchor": "middle" }, "no spend in the last hour"));
}
