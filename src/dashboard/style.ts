/** The dashboard's whole stylesheet, inlined: the page loads nothing else. */

/** History reasons and their colours; the chart's points and the legend share these classes. */
export const REASON_COLOURS: Record<string, string> = {
  slow_start: "#3b82f6",
  steady_up: "#16a34a",
  rate_limit: "#dc2626",
  quota: "#d97706",
  manual: "#7c3aed",
};

const reasons = Object.entries(REASON_COLOURS)
  .map(([r, c]) => `.r-${r}{fill:${c};background:${c}}`)
  .join("\n");

/** Time-series lines and their colours (stroke for the path, background for the legend swatch). */
const LINE_COLOURS: Record<string, string> = {
  "s-answers": "#0969da",
  "s-rate": "#d97706",
  "s-inflight": "#16a34a",
  "s-limit": "#0969da",
  "s-queue": "#7c3aed",
  "s-429": "#dc2626",
  "s-transient": "#d97706",
  "s-p50": "#0969da",
  "s-p99": "#dc2626",
};

const lines = Object.entries(LINE_COLOURS)
  .map(([cls, c]) => `svg.chart .${cls}{stroke:${c}} svg.chart .dot.${cls}{fill:${c};stroke:none} .sw.${cls}{background:${c}}`)
  .join("\n");

export const STYLE = `
:root{color-scheme:light dark;--fg:#1f2328;--muted:#656d76;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;--accent:#0969da;--bad:#cf222e}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#8d96a0;--bg:#0d1117;--panel:#161b22;--line:#30363d;--accent:#4493f8;--bad:#f85149}}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;align-items:center;gap:1rem;padding:.75rem 1.25rem;border-bottom:1px solid var(--line);background:var(--panel)}
header h1{font-size:1.1rem;margin:0}
header .spacer{flex:1}
main{padding:1rem 1.25rem;max-width:1200px}
.muted{color:var(--muted)}
.error{color:var(--bad)}
button{font:inherit;padding:.3rem .7rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);cursor:pointer}
button:hover{border-color:var(--accent)}
input[type=password]{font:inherit;padding:.35rem .5rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);min-width:18rem}
form.login{display:flex;flex-wrap:wrap;gap:.5rem;align-items:center;padding:1rem;border:1px solid var(--line);border-radius:8px;background:var(--panel);max-width:44rem}
table{border-collapse:collapse;width:100%}
th,td{padding:.35rem .6rem;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{font-weight:600;color:var(--muted);font-size:.8rem;text-transform:uppercase;letter-spacing:.02em}
th:first-child,td:first-child,th:nth-child(2),td:nth-child(2){text-align:left}
#keys th:nth-child(3),#keys td:nth-child(3),#keys th:nth-child(4),#keys td:nth-child(4){text-align:left}
td.hash{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85rem}
td.by{max-width:16rem;overflow:hidden;text-overflow:ellipsis}
td.by .earlier{opacity:.55;font-style:italic}
caption{caption-side:top;text-align:left;font-weight:600;font-size:.85rem;color:var(--muted);text-transform:uppercase;padding:1.25rem 0 .35rem}
caption span{text-transform:none;font-weight:400}
table#upstream tbody tr,table#pools tbody tr{cursor:default}
#upstream th:nth-child(2),#upstream td:nth-child(2){text-align:right}
tbody tr{cursor:pointer}
tbody tr:hover,tbody tr.selected{background:var(--panel)}
td.model,td.caller{max-width:22rem;overflow:hidden;text-overflow:ellipsis}
table.callers{margin-top:.5rem}
table.callers tbody tr{cursor:default}
.hot{color:var(--bad);font-weight:600}
section.detail{margin-top:1.5rem;padding:1rem;border:1px solid var(--line);border-radius:8px}
section.detail h2{font-size:1rem;margin:0 0 .25rem;word-break:break-all}
.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(15rem,1fr));gap:1rem;margin-top:1rem}
.card{padding:.75rem;border:1px solid var(--line);border-radius:8px;background:var(--panel)}
.card h3{margin:0 0 .5rem;font-size:.85rem;color:var(--muted);text-transform:uppercase}
dl{display:grid;grid-template-columns:auto 1fr;gap:.15rem .75rem;margin:0}
dt{color:var(--muted)}
dd{margin:0;text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
svg.chart{width:100%;max-width:900px;height:auto;display:block;margin-top:.75rem}
svg.chart .axis{stroke:var(--line);stroke-width:1}
svg.chart .grid{stroke:var(--line);stroke-width:1;stroke-dasharray:2 4}
svg.chart .s-rate,svg.chart .s-limit{stroke-dasharray:6 4}
svg.chart .step{fill:none;stroke:var(--accent);stroke-width:2}
svg.chart text{fill:var(--muted);font-size:11px}
.legend{display:flex;flex-wrap:wrap;gap:1rem;margin-top:.4rem;font-size:.85rem}
.legend span.sw{display:inline-block;width:.75rem;height:.75rem;border-radius:50%;margin-right:.35rem;vertical-align:-1px}
svg.chart .line{fill:none;stroke-width:1.75;stroke-linejoin:round}
svg.chart text.axis-label{fill:var(--fg);font-size:11px}
.series-grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(26rem,1fr));gap:1rem;margin-top:.5rem}
figure.series{margin:0;padding:.5rem .75rem;border:1px solid var(--line);border-radius:8px}
figure.series figcaption{font-weight:600;font-size:.85rem;color:var(--muted)}
svg.chart.small{margin-top:.25rem}
h3.over-time{margin:1.25rem 0 0;font-size:.85rem;color:var(--muted);text-transform:uppercase}
.legend span.line-sw{border-radius:2px;height:.25rem;width:1rem;vertical-align:3px}
${lines}
pre{margin:0;white-space:pre-wrap;word-break:break-all}
[hidden]{display:none!important}
${reasons}
`;
