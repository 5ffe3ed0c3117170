/**
 * The dashboard's client JS, inlined into the page. The admin token is asked for once, kept in
 * sessionStorage (or localStorage with "remember"), and sent only as a Bearer header; it never
 * enters a URL. Every value from the API is set with textContent, never as markup.
 */
var STORE = "slotgate.adminToken";
var REFRESH_MS = 3000;
var token = readToken();
var selected = null;
var detail = null;
var samples = null;
var busy = false;
var again = false;

function $(id) { return document.getElementById(id); }
// An empty icon, so the browser does not ask for /favicon.ico (which the proxy answers 404).
// Set from here: the HTML shell itself carries no link element.
(function () {
  var icon = document.createElement("link");
  icon.rel = "icon";
  icon.href = "data:,";
  document.head.appendChild(icon);
})();
function readToken() {
  try { return sessionStorage.getItem(STORE) || localStorage.getItem(STORE) || ""; } catch (e) { return ""; }
}
function keepToken(t, remember) {
  try { (remember ? localStorage : sessionStorage).setItem(STORE, t); } catch (e) {}
}
function dropToken() {
  try { sessionStorage.removeItem(STORE); localStorage.removeItem(STORE); } catch (e) {}
  token = "";
}
function el(tag, cls, text) {
  var e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text != null) e.textContent = String(text);
  return e;
}

function fmtNum(n) { return typeof n === "number" && isFinite(n) ? n.toLocaleString("en-US", { maximumFractionDigits: 1 }) : "\u2013"; }
/** Quota sizes: 200K, 1.5M (the exact number is in the cell's title); small ones as fmtNum. */
function fmtQty(n) {
  if (typeof n !== "number" || !isFinite(n) || Math.abs(n) < 100000) return fmtNum(n);
  return n.toLocaleString("en-US", { notation: "compact", maximumSignificantDigits: 3 });
}
function fmtMs(ms) {
  if (typeof ms !== "number" || !isFinite(ms)) return "\u2013";
  if (ms < 1000) return Math.round(ms) + " ms";
  if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
  var m = Math.floor(ms / 60000), s = Math.floor((ms % 60000) / 1000);
  return m < 60 ? m + "m " + (s < 10 ? "0" : "") + s + "s" : Math.floor(m / 60) + "h " + (m % 60) + "m";
}
function clock(t) { return new Date(t).toLocaleTimeString("en-GB", { hour12: false }); }
function share(m) {
  if (!m) return "\u2013";
  var attempts = m.totalRequests + m.retriedRequests;
  return attempts > 0 ? ((100 * m.rateLimitHits) / attempts).toFixed(1) + " %" : "0.0 %";
}
/** A live countdown: tick() rewrites every element carrying data-until. */
function countdown(iso) {
  var e = el("span", "countdown");
  e.dataset.until = iso || "";
  paint(e, Date.now());
  return e;
}
function paint(e, now) {
  var at = Date.parse(e.dataset.until || "");
  e.textContent = isFinite(at) && at > now ? fmtMs(at - now) : "\u2013";
  e.classList.toggle("hot", isFinite(at) && at > now && e.classList.contains("gate"));
}
function tick() {
  var now = Date.now();
  document.querySelectorAll("[data-until]").forEach(function (e) { paint(e, now); });
  document.querySelectorAll("[data-seen]").forEach(function (e) {
    var t = Date.parse(e.dataset.seen || "");
    e.textContent = isFinite(t) ? fmtMs(Math.max(0, now - t)) + " ago" : "\u2013";
  });
}
function setStatus(text, bad) {
  var s = $("status");
  s.textContent = text;
  s.className = bad ? "error" : "muted";
}

function api(path) {
  return fetch(path, { headers: { authorization: "Bearer " + token }, cache: "no-store", credentials: "omit" }).then(function (r) {
    if (r.status === 401) { var e = new Error("unauthorized"); e.auth = true; throw e; }
    return r.json().then(function (body) {
      if (!r.ok) { var e = new Error((body && body.error && body.error.message) || "HTTP " + r.status); e.status = r.status; throw e; }
      return body;
    });
  });
}

function showLogin(message) {
  $("login").hidden = false;
  $("app").hidden = true;
  $("forget").hidden = true;
  $("login-error").textContent = message || "";
  setStatus("");
  $("token").focus();
}
function showApp() {
  $("login").hidden = true;
  $("app").hidden = false;
  $("forget").hidden = false;
}

function refresh() {
  if (!token) return showLogin("");
  if (busy) { again = true; return; }
  busy = true;
  var want = selected;
  var one = want
    ? api("/admin/keys/" + encodeURIComponent(want)).catch(function (e) { if (e.status === 404) return null; throw e; })
    : Promise.resolve(null);
  var ring = want
    ? api("/admin/keys/" + encodeURIComponent(want) + "/samples").catch(function (e) { if (e.status === 404) return null; throw e; })
    : Promise.resolve(null);
  // The cache's numbers once the token is known good: a refused token is refused once, not twice.
  Promise.all([api("/admin/keys"), one, ring])
    .then(function (res) {
      var extra = [api("/admin/cache"), api("/admin/pools"), api("/admin/upstream")].map(function (p) { return p.catch(function () { return null; }); });
      return Promise.all(extra).then(function (c) { return res.concat(c); });
    })
    .then(function (res) {
      showApp();
      renderCache(res[3]);
      renderPools(res[4] ? res[4].pools : []);
      renderUpstream(res[5]);
      if (want && want === selected) { detail = res[1]; samples = res[2]; if (!detail) selected = null; }
      renderKeys(res[0].keys || []);
      renderDetail();
      refreshSpend(false);
      setStatus("updated " + clock(Date.now()));
    })
    .catch(function (e) {
      if (e && e.auth) { dropToken(); showLogin("That token was refused."); }
      else setStatus("refresh failed: " + ((e && e.message) || e), true);
    })
    .then(function () {
      busy = false;
      if (again) { again = false; refresh(); }
    });
}

function renderCache(c) {
  var n = c ? c.hits + c.misses + c.collapsed : 0;
  $("cache").hidden = !n;
  if (n) $("cache").textContent = "Response cache: hit ratio " + fmtNum(c.hitRatio * 100) + "% (" + fmtNum(c.hits) + " hits, " +
    fmtNum(c.collapsed) + " collapsed, " + fmtNum(c.misses) + " misses), " + fmtNum(c.entries) + " entries, " + fmtQty(c.bytes) + "B";
}

function renderPools(pools) {
  var body = $("pools").tBodies[0];
  body.textContent = "";
  $("pools").hidden = !pools.length;
  pools.forEach(function (p) {
    p.members.forEach(function (m) {
      var tr = el("tr", m.state === "out" ? "hot" : "");
      var state = el("span", "", m.state);
      if (m.state === "out") { state.append(" (" + m.reason + "), back in "); state.appendChild(countdown(m.until)); }
      [p.name, m.name, state, m.limit, m.inFlight, m.queued, m.ratePerMin == null ? "\u2013" : m.ratePerMin, m.served, fmtNum(m.share * 100) + "%"].forEach(function (c) {
        var td = el("td");
        if (c instanceof Node) td.appendChild(c); else td.textContent = typeof c === "number" ? fmtNum(c) : String(c);
        tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  });
}

/** Every key's upstream attempts by provider: failures of keys that never succeeded show here, and nowhere per key. */
function renderUpstream(u) {
  var list = (u && u.providers) || [];
  var body = $("upstream").tBodies[0];
  body.textContent = "";
  $("upstream").hidden = !list.length;
  $("upstream-since").textContent = u && u.since ? "(attempts since " + new Date(u.since).toLocaleString("en-GB", { hour12: false }) + ")" : "";
  list.forEach(function (p) {
    var tr = el("tr");
    var seen = el("span");
    seen.dataset.seen = p.lastAt || "";
    [p.provider, p.counts["2xx"], p.counts["3xx"], p.counts["4xx"], p.counts["5xx"], p.counts.unreachable, seen].forEach(function (c, i) {
      var td = el("td");
      if (c instanceof Node) td.appendChild(c); else td.textContent = typeof c === "number" ? fmtNum(c) : String(c);
      if ((i === 3 || i === 4 || i === 5) && c > 0) td.classList.add("hot");
      tr.appendChild(td);
    });
    body.appendChild(tr);
  });
}

/** The key's credential hash (its last part), short: two keys of one model are told apart by it. */
function hashOf(key) { return key.slice(key.lastIndexOf(":") + 1); }
/**
 * The last caller each key was seen used by on this page: the admin API names a key's busiest caller
 * of the last minute (its default caller "(default)" too), and nobody once it has been quiet that
 * long or its limiter did not answer in time; the row then keeps the name it had, marked earlier.
 */
var lastCaller = {};
/** Who uses the key, as the admin API names it: a pool member's pool and name, else its busiest caller. */
function usedBy(k) {
  if (k.member) return k.member.pool + " / " + k.member.member;
  if (k.caller) {
    lastCaller[k.key] = k.caller;
    return k.caller;
  }
  var span = el("span", lastCaller[k.key] ? "earlier" : "", lastCaller[k.key] || "\u2013");
  span.title = k.live === false ? "its limiter did not answer in time" : "nobody in the last minute" + (lastCaller[k.key] ? "; earlier: " + lastCaller[k.key] : "");
  return span;
}

function renderKeys(keys) {
  var body = $("keys").tBodies[0];
  body.textContent = "";
  $("empty").hidden = keys.length > 0;
  keys.forEach(function (k) {
    var m = k.metrics;
    var tr = el("tr", k.key === selected ? "selected" : "");
    tr.title = k.key;
    var cool = countdown(k.cooldownUntil);
    cool.classList.add("gate");
    paint(cool, Date.now());
    var seen = el("span");
    seen.dataset.seen = k.lastSeen || "";
    var hash = el("span", "", hashOf(k.key).slice(0, 8));
    hash.title = hashOf(k.key);
    var cells = [k.provider, el("span", "", k.model), hash, usedBy(k), k.limit, k.inFlight, k.queued, cool, share(m),
      m ? fmtMs(m.p50LatencyMs) : "\u2013", m ? fmtMs(m.p99LatencyMs) : "\u2013", seen];
    cells.forEach(function (c, i) {
      var td = el("td", ["", "model", "hash", "by"][i] || "");
      if (c instanceof Node) td.appendChild(c); else td.textContent = typeof c === "number" ? fmtNum(c) : String(c);
      if (i === 8 && m && m.rateLimitHits > 0) td.classList.add("hot");
      tr.appendChild(td);
    });
    tr.addEventListener("click", function () { select(k.key); });
    body.appendChild(tr);
  });
  tick();
}

function rows(id, list) {
  var dl = $(id);
  dl.textContent = "";
  list.forEach(function (r) {
    dl.appendChild(el("dt", "", r[0]));
    var dd = el("dd");
    if (r[1] instanceof Node) dd.appendChild(r[1]); else dd.textContent = typeof r[1] === "number" ? fmtNum(r[1]) : String(r[1]);
    dl.appendChild(dd);
  });
}

function renderDetail() {
  var sec = $("detail");
  if (!selected || !detail) { sec.hidden = true; return; }
  sec.hidden = false;
  var c = detail.concurrency, m = detail.metrics;
  $("d-key").textContent = detail.key;
  $("d-sub").textContent = detail.provider + " \u00b7 " + detail.model + " \u00b7 " + c.phase;
  drawChart($("chart"), detail.history, c.limit, Date.now(), samples);
  renderSeries(samples);
  renderCallers(detail.callers || []);
  var gate = countdown(detail.cooldownUntil);
  gate.classList.add("gate");
  rows("d-conc", [["limit", c.limit], ["min / max", c.min + " / " + c.max], ["in flight", c.inFlight],
    ["queued", c.queued], ["phase", c.phase], ["cooldown", gate]]);
  var q = [];
  // A key with a window of output tokens apart (Anthropic's OTPM, Fireworks', a Vertex Claude's
  // stated one) counts its prompts alone in `tokens`; a statement in PROVIDERS is shown beside it.
  var apart = !!detail.quotas.output;
  ["requests", "tokens", "output"].forEach(function (name) {
    var w = detail.quotas[name];
    var label = name === "output" ? "output tokens" : name === "tokens" && apart ? "input tokens" : name;
    if (!w) { if (name !== "output") q.push([label, "not reported"]); return; }
    var stated = w.stated == null ? "" : " (stated " + fmtQty(w.stated) + ")";
    var left = el("span", "", fmtQty(w.remaining) + " / " + (w.limit == null ? "?" : fmtQty(w.limit)) + stated);
    left.title = fmtNum(w.remaining) + " / " + (w.limit == null ? "?" : fmtNum(w.limit)) + (w.stated == null ? "" : " (stated " + fmtNum(w.stated) + " a minute)");
    q.push([label + " left", left]);
    q.push([label + " reset in", countdown(w.resetAt)]);
  });
  rows("d-quotas", q);
  rows("d-metrics", [["requests", m.totalRequests], ["completed", m.completedRequests], ["failed", m.failedRequests],
    ["rate-limited", m.rateLimitHits], ["retries", m.retriedRequests], ["429 share", share(m)],
    ["avg latency", fmtMs(m.avgLatencyMs)], ["p50 latency", fmtMs(m.p50LatencyMs)], ["p99 latency", fmtMs(m.p99LatencyMs)]]);
  var cfg = JSON.stringify(detail.config || {}, null, 2);
  $("d-config").textContent = cfg === "{}" ? "none: defaults apply" : cfg;
}

function select(key) {
  selected = key;
  detail = null;
  samples = null;
  document.querySelectorAll("#keys tbody tr").forEach(function (tr) { tr.classList.toggle("selected", tr.title === key); });
  refresh();
}

$("login").addEventListener("submit", function (ev) {
  ev.preventDefault();
  var t = $("token").value.trim();
  $("token").value = "";
  if (!t) return;
  $("login-error").textContent = "";
  token = t;
  keepToken(t, $("remember").checked);
  refresh();
});
$("spend-by").addEventListener("change", function () { refreshSpend(true); });
$("forget").addEventListener("click", function () { dropToken(); selected = null; detail = null; showLogin(""); });
document.addEventListener("visibilitychange", function () { if (!document.hidden) refresh(); });
setInterval(function () { if (!document.hidden) refresh(); }, REFRESH_MS);
setInterval(tick, 1000);
refresh();
