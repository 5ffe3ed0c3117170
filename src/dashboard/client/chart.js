/**
 * Client-side JS (a string, inlined into the page): draws the concurrency limit over time as a
 * step line into the page's <svg id="chart">, one point per change coloured by its reason (the
 * classes r-<reason> come from the stylesheet), with the in-flight peaks of the sample ring drawn
 * against it. The SVG namespace is taken from that element, so the page carries no URL at all.
 * Data is only ever set as text, never parsed as markup.
 */
/** An SVG element in svg's namespace, attributes and text set as plain strings. */
function svgEl(svg, tag, attrs, text) {
  var e = document.createElementNS(svg.namespaceURI, tag);
  for (var k in attrs) e.setAttribute(k, String(attrs[k]));
  if (text != null) e.textContent = String(text);
  return e;
}

function drawChart(svg, history, limit, now, samples) {
  function s(tag, attrs, text) { return svgEl(svg, tag, attrs, text); }
  while (svg.firstChild) svg.removeChild(svg.firstChild);
  var W = 720, H = 240, L = 44, R = 16, T = 12, B = 28;
  svg.setAttribute("viewBox", "0 0 " + W + " " + H);
  var pts = (history || []).map(function (h) {
    return { t: Date.parse(h.at), from: h.from, to: h.to, reason: String(h.reason) };
  }).filter(function (p) { return isFinite(p.t); });
  var t1 = now;
  var t0 = pts.length ? pts[0].t : now - 60000;
  if (pts.length && pts[pts.length - 1].t > t1) t1 = pts[pts.length - 1].t;
  // A little room before the first change, so the level it started from shows left of its point.
  if (pts.length) t0 -= Math.max(500, (t1 - t0) * 0.04);
  if (t1 - t0 < 1000) t0 = t1 - 1000;
  var step = (samples && samples.stepMs) || 5000;
  var seen = ((samples && samples.points) || []).filter(function (p) { return p.t + step > t0 && p.t <= t1; });
  var top = Math.max(1, limit);
  pts.forEach(function (p) { top = Math.max(top, p.from, p.to); });
  seen.forEach(function (p) { top = Math.max(top, p.inFlightMax); });
  top = niceCeil(top * 1.1);
  function x(t) { return L + ((t - t0) / (t1 - t0)) * (W - L - R); }
  function y(v) { return T + (1 - v / top) * (H - T - B); }

  [0, top / 2, top].forEach(function (v) {
    svg.appendChild(s("line", { x1: L, x2: W - R, y1: y(v), y2: y(v), "class": v === 0 ? "axis" : "grid" }));
    svg.appendChild(s("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end" }, fmtNum(v)));
  });
  svg.appendChild(s("line", { x1: L, x2: L, y1: T, y2: H - B, "class": "axis" }));
  svg.appendChild(s("text", { x: L, y: H - 8, "text-anchor": "start" }, clock(t0)));
  svg.appendChild(s("text", { x: W - R, y: H - 8, "text-anchor": "end" }, "now " + clock(t1)));

  var d = "M" + x(t0).toFixed(1) + " " + y(pts.length ? pts[0].from : limit).toFixed(1);
  pts.forEach(function (p) { d += " H" + x(p.t).toFixed(1) + " V" + y(p.to).toFixed(1); });
  d += " H" + x(t1).toFixed(1);
  svg.appendChild(s("path", { d: d, "class": "step" }));
  // In flight against the limit: each sample bucket's peak, as a step of its own.
  if (seen.length) {
    var f = "";
    seen.forEach(function (p) {
      var a = x(Math.max(t0, p.t)).toFixed(1), b = x(Math.min(t1, p.t + step)).toFixed(1), v = y(p.inFlightMax).toFixed(1);
      f += (f ? " L" : "M") + a + " " + v + " L" + b + " " + v;
    });
    svg.appendChild(s("path", { d: f, "class": "line s-inflight", "data-points": seen.length }));
  }

  pts.forEach(function (p) {
    var c = s("circle", { cx: x(p.t).toFixed(1), cy: y(p.to).toFixed(1), r: 4, "class": "pt r-" + p.reason.replace(/[^a-z_]/g, "") });
    c.appendChild(s("title", {}, clock(p.t) + "  " + p.from + " \u2192 " + p.to + "  (" + p.reason + ")"));
    svg.appendChild(c);
  });
  if (!pts.length)
    svg.appendChild(s("text", { x: (L + W - R) / 2, y: T + 16, "text-anchor": "middle" }, "no limit changes yet"));
}

function niceCeil(v) {
  if (v <= 4) return Math.max(1, Math.ceil(v));
  var p = Math.pow(10, Math.floor(Math.log10(v)));
  var steps = [1, 2, 2.5, 5, 10];
  for (var i = 0; i < steps.length; i++) if (steps[i] * p >= v) return steps[i] * p;
  return 10 * p;
}
