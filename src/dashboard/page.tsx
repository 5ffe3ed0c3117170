// The dashboard's HTML shell, rendered at build time (scripts/dashboard.mjs) into the Worker's
// static assets (assets/admin/): nothing of it is in the Worker's bundle.
import type { FC } from "hono/jsx";
import { REASON_COLOURS } from "./style";

/** A row per pool member (GET /admin/pools). */
const POOL_COLUMNS = ["pool", "member", "state", "limit", "in flight", "queued", "rate /min", "served", "share, last minute"];

/** `credential`: the first 8 hex of the credential's hash (the key's last part); `used by`: a pool member, else the busiest caller of the last minute. */
const COLUMNS = ["provider", "model", "credential", "used by", "limit", "in flight", "queued", "cooldown", "429 share", "p50", "p99", "last seen"];
/** Every key's upstream attempts by provider (GET /admin/upstream), listed keys or not. */
const UPSTREAM_COLUMNS = ["provider", "2xx", "3xx", "4xx", "5xx", "unreachable", "last"];
const CALLER_COLUMNS = ["caller", "lane", "in flight", "queued", "served", "share (1 min)", "last seen"];

/** A table's header row. */
const Head: FC<{ columns: string[] }> = ({ columns }) => (
  <thead>
    <tr>
      {columns.map((c) => (
        <th scope="col">{c}</th>
      ))}
    </tr>
  </thead>
);

/**
 * The HTML shell. It holds no data and no token: the script asks for the token once, keeps it in
 * the browser's storage and fetches /admin/keys with it as a Bearer header.
 */
const Page: FC = () => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>Slotgate</title>
      <link rel="stylesheet" href="/admin/dashboard.css" />
    </head>
    <body>
      <header>
        <h1>Slotgate</h1>
        <span id="status" class="muted" aria-live="polite"></span>
        <span class="spacer"></span>
        <button id="forget" type="button" hidden>
          Forget token
        </button>
      </header>
      <main>
        {/* No `name` on the input: even without the script, the token is never submitted in a URL. */}
        <form id="login" class="login" method="post" action="#" autocomplete="off" hidden>
          <label for="token">Admin token</label>
          <input id="token" type="password" autocomplete="current-password" required />
          <label>
            <input id="remember" type="checkbox" /> remember on this device
          </label>
          <button type="submit">Open</button>
          <span id="login-error" class="error" role="alert"></span>
        </form>
        <div id="app" hidden>
          <table id="keys">
            <Head columns={COLUMNS} />
            <tbody></tbody>
          </table>
          <p id="cache" class="muted" hidden></p>
          <table id="upstream" hidden>
            <caption>Upstream answers by provider, every key <span id="upstream-since" class="muted"></span></caption>
            <Head columns={UPSTREAM_COLUMNS} />
            <tbody></tbody>
          </table>
          <table id="pools" hidden>
            <caption>Pools</caption>
            <Head columns={POOL_COLUMNS} />
            <tbody></tbody>
          </table>
          <section id="spend" hidden>
            <h3 class="over-time">Spend, last hour</h3>
            <div class="muted">
              by{" "}
              <select id="spend-by">
                <option value="caller">caller</option>
                <option value="virtualKey">virtual key</option>
                <option value="model">model</option>
              </select>{" "}
              <span id="spend-total"></span>
            </div>
            {/* How fresh the figures are: the ledger is written every USAGE_FLUSH_MS from each key. */}
            <div id="spend-fresh" class="muted"></div>
            <svg id="spend-chart" class="chart small" role="img" aria-label="cumulative spend over the last hour" viewBox="0 0 720 200"></svg>
            <div id="spend-legend" class="legend"></div>
          </section>
          <p id="empty" class="muted" hidden>
            No keys yet. A key appears here once a request has gone through the gateway with it.
          </p>
          <section id="detail" class="detail" hidden>
            <h2 id="d-key"></h2>
            <div id="d-sub" class="muted"></div>
            <svg id="chart" class="chart" role="img" aria-label="concurrency limit over time, with in flight" viewBox="0 0 720 240"></svg>
            <div id="legend" class="legend">
              {Object.keys(REASON_COLOURS).map((r) => (
                <span>
                  <span class={`sw r-${r}`}></span>
                  {r}
                </span>
              ))}
              <span>
                <span class="sw line-sw s-inflight"></span>
                in flight (peak per 5 s)
              </span>
            </div>
            <h3 class="over-time">Callers</h3>
            {/* Who shares this key's slots (x-slotgate-caller, a gateway token's hash, or the default caller). */}
            <table id="d-callers" class="callers">
              <Head columns={CALLER_COLUMNS} />
              <tbody></tbody>
            </table>
            <p id="d-callers-none" class="muted" hidden>
              No callers in the last minute.
            </p>
            <h3 class="over-time">The last 15 minutes</h3>
            {/* Filled by the script: one chart per question about the run (series.ts). */}
            <div id="series" class="series-grid"></div>
            <div class="cards">
              <div class="card">
                <h3>Concurrency</h3>
                <dl id="d-conc"></dl>
              </div>
              <div class="card">
                <h3>Quotas</h3>
                <dl id="d-quotas"></dl>
              </div>
              <div class="card">
                <h3>Metrics</h3>
                <dl id="d-metrics"></dl>
              </div>
              <div class="card">
                <h3>Config overrides</h3>
                <pre id="d-config"></pre>
              </div>
            </div>
          </section>
        </div>
        <noscript>The dashboard needs JavaScript; the JSON API under /admin/keys works without it.</noscript>
      </main>
      <script src="/admin/dashboard.js"></script>
    </body>
  </html>
);

/** The shell as served. */
export async function render(): Promise<string> {
  return `<!doctype html>${await (<Page />).toString()}\n`;
}
