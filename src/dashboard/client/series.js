/**
 * Client-side JS (a string, inlined into the page): the chosen key's last 15 minutes from its
 * sample ring (`GET /admin/keys/:key/samples`), one small chart per question an operator asks of
 * a run. Each line's path carries data-points (how many samples it drew), for the browser test.
 * Uses svgEl, niceCeil, fmtNum and clock from the other scripts. Values are set as text only.
 */
var SERIES_CHARTS = [
  { id: "s-answers", title: "Answers per second", unit: "answers / s", lines: [
    { name: "answers / s", cls: "s-answers", pick: function (p) { return p.answersPerSec; } },
    { name: "provider's rate", cls: "s-rate", pick: function (p) { return p.rate; } }] },
  { id: "s-inflight", title: "In flight against the limit", unit: "slots", lines: [
    { name: "in flight (peak)", cls: "s-inflight", step: true, pick: function (p) { return p.inFlightMax; } },
    { name: "limit", cls: "s-limit", step: true, pick: function (p) { return p.limit; } }] },
  { id: "s-queue", title: "Queue depth", unit: "requests", lines: [
    { name: "queued (peak)", cls: "s-queue", step: true, pick: function (p) { return p.queued; } }] },
  { id: "s-errors", title: "429s and transient faults", unit: "per 5 s", lines: [
    { name: "429s", cls: "s-429", pick: function (p) { return p.rateLimited; } },
    { name: "transient", cls: "s-transient", pick: function (p) { return p.transient; } }] },
  { id: "s-latency", title: "Upstream latency", unit: "ms", lines: [
    { name: "p50", cls: "s-p50", pick: function (p) { return p.p50; } },
    { name: "p99", cls: "s-p99", pick: function (p) { return p.p99; } }] },
];

/** Builds the figures once: a caption, an empty chart and a legend each. */
function seriesFigures(box) {
  if (box.childNodes.length) return;
  SERIES_CHARTS.forEach(function (c) {
    var fig = el("figure", "series");
    fig.appendChild(el("figcaption", "", c.title));
    var svg = document.createElementNS($("chart").namespaceURI, "svg");
    svg.setAttribute("id", c.id);
    svg.setAttribute("class", "chart small");
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", c.title + " over the last 15 minutes");
    fig.appendChild(svg);
    var legend = el("div", "legend");
    c.lines.forEach(function (l) {
      var item = el("span");
      item.appendChild(el("span", "sw line-sw " + l.cls));
      item.appendChild(document.createTextNode(l.name));
      legend.appendChild(item);
    });
    fig.appendChild(legend);
    box.appendChild(fig);
  });
}

function drawSeries(svg, spec, samples, now) {
  function s(tag, attrs, text) { return svgEl(svg, tag, attrs, text); }
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  var W = 480, H = 210, L = 56, R = 12, T = 10, B = 40;
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  var pts = (samples && samples.points) || [];
  var step = (samples && samples.stepMs) || 5000;
  var t1 = Math.max(now, pts.length ? pts[pts.length - 1].t + step : now);
  var t0 = pts.length ? pts[0].t : t1 - 60000;
  if (t1 - t0 < 60000) t0 = t1 - 60000;
  var top = 1;
  spec.lines.forEach(function (l) {
    pts.forEach(function (p) { var v = l.pick(p); if (typeof v === "number" && isFinite(v)) top = Math.max(top, v); });
  });
  top = niceCeil(top * 1.1);
  function x(t) { return L + ((t - t0) / (t1 - t0)) * (W - L - R); }
  function y(v) { return T + (1 - v / top) * (H - T - B); }

  [0, top / 2, top].forEach(function (v) {
    svg.appendChild(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), "class": v === 0 ? "axis" : "grid" }));
    svg.appendChild(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", "class": "tick" }, fmtNum(v)));
  });
  svg.appendChild(s("line", { x1: L, x2: L, y1: T, y2: H - B, "class": "axis" }));
  svg.appendChild(s("text", { x: L, y: H - B + 14, "text-anchor": "start", "class": "tick" }, clock(t0)));
  svg.appendChild(s("text", { x: W - R, y: H - B + 14, "text-anchor": "end", "class": "tick" }, "now " + clock(t1)));
  svg.appendChild(s("text", { x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle", "class": "axis-label x-label" }, "time (" + step / 1000 + " s buckets)"));
  var mid = T + (H - T - B) / 2;
  svg.appendChild(s("text", { x: 12, y: mid, "text-anchor": "middle", transform: "rotate(-90 12 " + mid + ")", "class": "axis-label y-label" }, spec.unit));

  spec.lines.forEach(function (l) {
    var d = "", n = 0, up = true;
    pts.forEach(function (p) {
      var v = l.pick(p);
      if (typeof v !== "number" || !isFinite(v)) { up = true; return; }
      var py = y(v).toFixed(1);
      // Levels (in flight, limit, queue) hold for their bucket: a stair. Rates and latencies: a point mid-bucket.
      if (l.step) d += (up ? " M" : " L") + x(p.t).toFixed(1) + " " + py + " L" + x(p.t + step).toFixed(1) + " " + py;
      else d += (up ? " M" : " L") + x(p.t + step / 2).toFixed(1) + " " + py;
      up = false;
      n++;
    });
    if (n === 0) return;
    var path = s("path", { d: d.trim(), "class": "line " + l.cls, "data-points": n, "data-series": l.name });
    // A lone point has no length to stroke: a dot marks it.
    if (n === 1 && !l.step) svg.appendChild(s("circle", { cx: d.trim().split(" ")[0].slice(1), cy: d.trim().split(" ")[1], r: 2.5, "class": "dot " + l.cls }));
    svg.appendChild(path);
  });
  if (!pts.length) svg.appendChild(s("text", { x: (L + W - R) / 2, y: T + 16, "text-anchor": "middle" }, "no samples yet"));
}

function renderSeries(samples) {
  var box = $("series");
  seriesFigures(box);
  var now = Date.now();
  SERIES_CHARTS.forEach(function (c) { drawSeries($(c.id), c, samples, now); });
}
