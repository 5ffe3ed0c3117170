// The admin dashboard in a real browser: Debian's chromium (headless, driven by playwright-core)
// against `wrangler dev`, after traffic through the gateway has moved the key's limit a few times.
// Needs /usr/bin/chromium (CI installs it: `apt-get install -y chromium`); without it this FAILS.
// DASHBOARD_TRAFFIC_S=90 keeps traffic going in waves that long first, so the time series show a
// run (how docs/dashboard.png is made: copy test-results/dashboard.png after such a run).
import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Gateway, startGateway } from "../support/gateway.ts";
import { gatewayProviders } from "../support/standin/bases.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const ADMIN_TOKEN = "e2e-dashboard-token-5c1f0b9e";
const API_KEY = "sk-e2e-dashboard";
const MODEL = "gpt-4o-mini";
const SCREENSHOT = resolve(import.meta.dirname, "../../test-results/dashboard.png");
const REASONS = ["slow_start", "steady_up", "rate_limit", "quota", "manual"];
/** A Gemini key whose quotas the operator states (Gemini tells none): its requests, and output tokens apart from its input. */
const GEMINI = { model: "gemini-2.5-flash", key: "gemini-e2e-dashboard-key", quota: { requestsPerMinute: 300, outputTokensPerMinute: 50_000 } };

interface State {
  key: string;
  concurrency: { limit: number };
  history: { at: string; from: number; to: number; reason: string }[];
}

let standin: Standin;
let gateway: Gateway;
let browser: Browser | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    const how =
      `chromium not found at ${CHROMIUM}: the dashboard test needs a real browser.\n` +
      "Install Debian's package:  sudo apt-get update && sudo apt-get install -y chromium\n" +
      "(or point CHROMIUM_PATH at a Chromium/Chrome binary). playwright-core never downloads one.";
    console.error(how);
    throw new Error(how);
  }
  // At most 6 in flight per credential: the limiter's slow start (4 -> 8) runs into the cap, the
  // 429s cut it, steady growth climbs back into the cap, and so on. Nothing else limits.
  standin = await startStandin({ maxConcurrent: 6, latencyMs: 200, rpm: 5_000, tpm: 200_000 });
  gateway = await startGateway({
    providers: { openai: { baseUrl: standin.url }, gemini: { ...gatewayProviders(standin.url, ["gemini"]).gemini!, quota: GEMINI.quota } },
    // A short cut debounce, so that a few seconds of traffic make more than one episode.
    vars: {
      ADMIN_TOKEN, COOLDOWN_MS: "1000", BASE_BACKOFF_MS: "50", USAGE_FLUSH_MS: "300",
      // A pool of two, for the pools table.
      POOLS: JSON.stringify({ dash: { provider: "openai", members: [{ name: "m1", secret: "DASH_KEY_1" }, { name: "m2", secret: "DASH_KEY_2" }] } }),
      DASH_KEY_1: "sk-e2e-dashboard-member-1",
      DASH_KEY_2: "sk-e2e-dashboard-member-2",
    },
    verbose: !!process.env.E2E_VERBOSE,
  });
});

afterAll(async () => {
  const closing = [browser?.close(), gateway?.close(), standin?.close()];
  const failed = (await Promise.allSettled(closing)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
});

async function chat(i: number): Promise<{ status: number; key: string }> {
  const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    // Half of the calls name a caller: the detail's callers table shows it beside the default one.
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json", ...(i % 2 ? { "x-slotgate-caller": "dashboard-e2e" } : {}) },
    body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: `dashboard ${i}` }] }),
  });
  await res.arrayBuffer();
  return { status: res.status, key: res.headers.get("x-slotgate-key") ?? "" };
}

/** `total` chat completions, `width` at a time. */
async function traffic(total: number, width: number): Promise<{ status: number; key: string }[]> {
  const out: { status: number; key: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) out.push(await chat(next++));
  };
  await Promise.all(Array.from({ length: width }, worker));
  return out;
}

async function admin<T>(path: string): Promise<T> {
  const res = await fetch(`${gateway.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as T;
}

it("shows the key, its limit history and its state in a real browser", async () => {
  // 1. Traffic that moves the limit: slow start, then rate-limit cuts at the stand-in's cap, in
  // batches until both show in the history (a slow machine's gateway overhead can keep the
  // stand-in's in-flight count under its cap for a while; growth then takes it there).
  const started = Date.now();
  const results: { status: number; key: string }[] = [];
  let state: State | undefined;
  for (;;) {
    results.push(...(await traffic(40, 12)));
    const keys = [...new Set(results.map((r) => r.key))];
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^openai:${MODEL}:[0-9a-f]{16}$`));
    state = await admin<State>(`/admin/keys/${encodeURIComponent(keys[0]!)}`);
    const reasons = state.history.map((h) => h.reason);
    // A key starts at START_CONCURRENCY (16), above this cap: growth shows after the first cut.
    if (reasons.includes("rate_limit") && reasons.some((r) => r === "slow_start" || r === "steady_up")) break;
    if (Date.now() - started > 45_000) expect.fail(`no growth and rate_limit in 45 s of traffic: ${JSON.stringify(state.history)}`);
  }
  const key = state.key;
  console.log(`traffic: ${results.length} requests in ${Date.now() - started} ms, ` +
    `history ${state.history.map((h) => `${h.from}->${h.to} ${h.reason}`).join(", ")}`);
  expect(results.filter((r) => r.status !== 200), "every request ends in a 200 (429s are absorbed)").toEqual([]);
  expect(standin.stats().rateLimitedBy.concurrency, "the stand-in's cap was hit").toBeGreaterThan(0);
  // The chart draws one point per history entry (the start of the step line is no point).
  expect(state.history.length).toBeGreaterThanOrEqual(2);
  // For the README's screenshot: waves of traffic and pauses, so the charts show a run's shape.
  const extraMs = Number(process.env.DASHBOARD_TRAFFIC_S ?? 0) * 1_000;
  for (const until = Date.now() + extraMs; Date.now() < until; ) {
    expect((await traffic(60, 12)).filter((r) => r.status !== 200)).toEqual([]);
    await new Promise((r) => setTimeout(r, 4_000));
  }
  if (extraMs > 0) state = await admin<State>(`/admin/keys/${encodeURIComponent(key)}`);

  // The response cache: the same request twice, with another credential and model (a row of its own): a miss, then a hit.
  const cached = () => fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-e2e-dashboard-cache", "content-type": "application/json", "x-slotgate-cache": "on" },
    body: JSON.stringify({ model: "gpt-4o", max_tokens: 16, messages: [{ role: "user", content: "cache me" }] }),
  }).then(async (r) => (await r.arrayBuffer(), r.headers.get("x-slotgate-cache")));
  expect(await cached()).toBe("miss");
  await expect.poll(async () => (await admin<{ entries: number }>("/admin/cache")).entries).toBe(1);
  expect(await cached()).toBe("hit");

  // A virtual key's traffic through the pool, so the pools table has both members.
  const minted = await fetch(`${gateway.url}/admin/virtual-keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "dash-vk", pool: "dash" }),
  });
  expect(minted.status).toBe(201);
  const vk = ((await minted.json()) as { key: string }).key;
  for (let i = 0; i < 8; i++) {
    const r = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
      method: "POST",
      headers: { authorization: `Bearer ${vk}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "gpt-4o-pool", max_tokens: 16, messages: [{ role: "user", content: `pool ${i}` }] }),
    });
    await r.arrayBuffer();
    expect(r.status).toBe(200);
  }

  // A second credential on the same model, under a caller of its own: a row that must be told apart from the first.
  const second = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: "Bearer sk-e2e-dashboard-second", "content-type": "application/json", "x-slotgate-caller": "second-job" },
    body: JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: "second" }] }),
  });
  await second.arrayBuffer();
  const secondKey = second.headers.get("x-slotgate-key")!;
  // A path the provider does not have: a 4xx in the upstream counts, beside the cap's 429s. Every
  // attempt that reached the stand-in is counted, as the stand-in itself counted it.
  expect((await fetch(`${gateway.url}/openai/v1/no-such-endpoint`, { headers: { authorization: `Bearer ${API_KEY}` } })).status).toBe(404);
  const upstream = async () => (await admin<{ providers: { provider: string; counts: Record<string, number> }[] }>("/admin/upstream")).providers.find((p) => p.provider === "openai")?.counts;
  await expect.poll(async () => (await upstream())?.["4xx"], { timeout: 10_000 }).toBe(standin.stats().rateLimited + 1);
  const counted = (await upstream())!;
  expect(counted["2xx"]).toBe(standin.stats().successes);
  expect([counted["3xx"], counted["5xx"], counted.unreachable]).toEqual([0, 0, 0]);

  // Two requests to the stated Gemini key: it is listed once its first answer has proved it.
  let geminiKey = "";
  for (let i = 0; i < 2; i++) {
    const r = await fetch(`${gateway.url}/gemini/v1beta/models/${GEMINI.model}:generateContent`, {
      method: "POST",
      headers: { "x-goog-api-key": GEMINI.key, "content-type": "application/json" },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: `stated ${i}` }] }], generationConfig: { maxOutputTokens: 16 } }),
    });
    await r.arrayBuffer();
    expect(r.status).toBe(200);
    geminiKey = r.headers.get("x-slotgate-key")!;
  }

  // The usage ledger has the traffic's minutes before the page loads (limiters write every 300 ms here).
  await expect.poll(async () => (await admin<{ totals: { requests: number } }>("/admin/usage")).totals.requests, { timeout: 15_000 }).toBeGreaterThan(0);

  // 2. The dashboard in chromium.
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", "--disable-quic"],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: "light", locale: "en-GB" });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error" || m.type() === "warning") problems.push(`console ${m.type()}: ${m.text()} (${m.location().url})`);
  });
  const urls: string[] = [];
  page.on("request", (r) => urls.push(r.url()));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()} for ${r.url()}`);
  });

  const res = await page.goto(`${gateway.url}/admin`);
  expect(res?.status()).toBe(200);
  await page.locator("#login").waitFor({ state: "visible" });
  expect(await page.locator("#app").isHidden()).toBe(true);

  // A wrong token is refused and the form stays.
  await page.locator("#token").fill("not-the-token");
  await page.locator("#login button[type=submit]").click();
  await expect.poll(() => page.locator("#login-error").textContent()).toBe("That token was refused.");
  expect(await page.locator("#app").isHidden()).toBe(true);
  // Its 401 is the only thing that went wrong so far.
  for (const p of problems.splice(0)) expect(p).toMatch(/\b401\b/);

  await page.locator("#token").fill(ADMIN_TOKEN);
  await page.locator("#login button[type=submit]").click();
  await page.locator("#app").waitFor({ state: "visible" });
  expect(await page.locator("#login").isHidden()).toBe(true);
  expect(await page.locator("#login-error").isVisible()).toBe(false);
  expect(await page.locator("#token").inputValue(), "the input is cleared after login").toBe("");
  expect(await page.locator("#forget").isVisible()).toBe(true);

  // The key's row: the row's title is the full key; its first cells are provider, model, the
  // credential's hash (its first 8 hex) and who uses it. Two keys of one model are told apart by them.
  const row = page.locator(`#keys tbody tr[title="${key}"]`);
  await row.first().waitFor({ state: "visible" });
  expect(await row.count()).toBe(1);
  const cells = row.locator("td");
  expect((await cells.nth(0).textContent())?.trim()).toBe("openai");
  expect((await cells.nth(1).textContent())?.trim()).toBe(MODEL);
  expect((await cells.nth(2).textContent())?.trim()).toBe(key.split(":")[2]!.slice(0, 8));
  // A row whose limiter did not answer the list in time (a loaded machine) names nobody until a later
  // refresh does: 15 s once passed by in `npm test` beside the other e2e suites, so 30 s (a miss shows what it said).
  await expect.poll(async () => (await cells.nth(3).textContent())?.trim(), { timeout: 30_000 }).toMatch(/^(dashboard-e2e|\(default\))$/);
  expect((await cells.nth(4).textContent())?.trim()).toBe(String(state.concurrency.limit));
  const twin = page.locator(`#keys tbody tr[title="${secondKey}"] td`);
  await expect.poll(() => twin.nth(1).textContent()).toBe(MODEL);
  expect(await twin.nth(2).textContent()).toBe(secondKey.split(":")[2]!.slice(0, 8));
  expect(await twin.nth(2).textContent()).not.toBe(await cells.nth(2).textContent());
  expect(await twin.nth(3).textContent()).toBe("second-job");
  // A pool member's key says which member it is.
  const memberRows = page.locator("#keys tbody tr").filter({ has: page.locator("td.model", { hasText: "gpt-4o-pool" }) });
  await expect.poll(async () => (await memberRows.locator("td.by").allTextContents()).every((t) => /^dash \/ m[12]$/.test(t)) && (await memberRows.count()) > 0).toBe(true);

  // Every key's upstream answers by provider, the failure (the 404) marked.
  const upstreamRow = page.locator("#upstream tbody tr").filter({ has: page.locator("td", { hasText: /^openai$/ }) });
  await upstreamRow.waitFor({ state: "visible" });
  const upstreamCells = (await upstreamRow.locator("td").allTextContents()).map((t) => t.replace(/,/g, ""));
  expect(upstreamCells.slice(1, 6)).toEqual([counted["2xx"], 0, counted["4xx"], 0, 0].map(String));
  expect(await upstreamRow.locator("td").nth(3).getAttribute("class")).toContain("hot");
  // Each table's caption sits on its own table, at its left edge, right above its header.
  for (const id of ["#upstream", "#pools"]) {
    const [cap, table, head] = await Promise.all([page.locator(`${id} caption`).boundingBox(), page.locator(id).boundingBox(), page.locator(`${id} thead`).boundingBox()]);
    expect(Math.abs(cap!.x - table!.x), `${id} caption's left edge`).toBeLessThan(2);
    expect(cap!.y + cap!.height, `${id} caption right above its header`).toBeLessThanOrEqual(head!.y + 1);
    expect(head!.y - (cap!.y + cap!.height)).toBeLessThan(4);
    expect(await page.locator(`${id} caption`).evaluate((e) => (globalThis as unknown as { getComputedStyle(x: unknown): { textAlign: string } }).getComputedStyle(e).textAlign)).toBe("left");
  }
  expect(await page.locator("#empty").isHidden()).toBe(true);
  await expect.poll(() => page.locator("#cache").textContent()).toMatch(/^Response cache: hit ratio 50% \(1 hits, 0 collapsed, 1 misses\), 1 entries, [\d,]+B$/);

  // The pools table: a row per member, both in.
  const poolRows = page.locator("#pools tbody tr");
  await expect.poll(() => poolRows.count()).toBe(2);
  const poolCells = await poolRows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
  expect(poolCells.map((c) => [c[0], c[1], c[2]])).toEqual([["dash", "m1", "in"], ["dash", "m2", "in"]]);
  expect(await page.locator("#pools").textContent()).not.toContain("sk-e2e-dashboard-member");

  // Its detail: the chart has one point per limit change, coloured by reason.
  await row.click();
  await page.locator("#detail").waitFor({ state: "visible" });
  await expect.poll(() => page.locator("#d-key").textContent()).toBe(key);
  expect(await row.getAttribute("class")).toContain("selected");
  expect(await page.locator("#d-sub").textContent()).toContain(`openai · ${MODEL}`);
  const points = page.locator("#chart circle");
  await expect.poll(() => points.count()).toBeGreaterThanOrEqual(2);
  expect(await points.count()).toBe(state.history.length);
  const classes = await points.evaluateAll((els) => els.map((e) => e.getAttribute("class") ?? ""));
  for (const c of classes) expect(c).toMatch(new RegExp(`^pt r-(${REASONS.join("|")})$`));
  expect(classes).toEqual(state.history.map((h) => `pt r-${h.reason}`));
  expect(await page.locator("#chart path.step").getAttribute("d")).toMatch(/^M[\d.]+ [\d.]+( H[\d.]+ V[\d.]+)+ H[\d.]+$/);
  for (const r of REASONS) expect(await page.locator(`#legend .sw.r-${r}`).count()).toBe(1);
  expect(await page.locator("#d-conc").textContent()).toContain("limit");
  // The stand-in's headers: 5,000 requests and 200,000 tokens a minute (large numbers compact).
  expect(await page.locator("#d-quotas").textContent()).toMatch(/requests left[\d,]+ \/ 5,000/);
  expect(await page.locator("#d-quotas").textContent()).toMatch(/tokens left[\d.,]+K? \/ 200K/);
  expect(await page.locator("#d-metrics").textContent()).toContain("rate-limited");
  expect(await page.locator("#d-config").textContent()).toBe("none: defaults apply");
  // The callers table: the named caller and the default one, both in the normal lane.
  const callerRows = page.locator("#d-callers tbody tr");
  await expect.poll(() => callerRows.count()).toBe(2);
  const callerCells = await callerRows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
  expect(callerCells.map((c) => c[0]).sort()).toEqual(["(default)", "dashboard-e2e"]);
  for (const c of callerCells) {
    expect(c[1]).toBe("normal");
    expect(c[5]).toMatch(/^\d+\.\d %$/);
  }

  // In flight is drawn against the limit history, from the key's sample ring.
  const ring = await admin<{ stepMs: number; points: { rateLimited: number; rate: number | null; inFlightMax: number }[] }>(
    `/admin/keys/${encodeURIComponent(key)}/samples`,
  );
  expect(ring.stepMs).toBe(5_000);
  expect(ring.points.length).toBeGreaterThanOrEqual(1);
  expect(ring.points.some((p) => p.rateLimited > 0), "the 429s are in the samples").toBe(true);
  expect(ring.points.some((p) => p.rate !== null && Math.abs(p.rate - 5_000 / 60) < 0.01), "the provider's rate (5,000 RPM) is known").toBe(true);
  await expect.poll(() => page.locator("#chart path.s-inflight").count()).toBe(1);
  expect(Number(await page.locator("#chart path.s-inflight").getAttribute("data-points"))).toBeGreaterThanOrEqual(1);

  // The time series: every chart has its axes labelled and every line drawn from real samples.
  const charts: Record<string, string[]> = {
    "s-answers": ["s-answers", "s-rate"],
    "s-inflight": ["s-inflight", "s-limit"],
    "s-queue": ["s-queue"],
    "s-errors": ["s-429", "s-transient"],
    "s-latency": ["s-p50", "s-p99"],
  };
  for (const [id, lines] of Object.entries(charts)) {
    const svg = page.locator(`#series svg#${id}`);
    expect(await svg.count(), id).toBe(1);
    expect((await svg.locator("text.x-label").textContent())?.trim()).toBe("time (5 s buckets)");
    expect((await svg.locator("text.y-label").textContent())?.trim()).not.toBe("");
    expect(await svg.locator("text.tick").count(), `${id} ticks`).toBeGreaterThanOrEqual(5);
    for (const cls of lines) {
      const path = svg.locator(`path.line.${cls}`);
      expect(await path.count(), `${id} ${cls}`).toBe(1);
      const n = Number(await path.getAttribute("data-points"));
      expect(n, `${id} ${cls} points`).toBeGreaterThanOrEqual(1);
      expect(n).toBeLessThanOrEqual(ring.points.length + 1); // the page may have refreshed a bucket later
      expect(await path.getAttribute("d")).toMatch(/^M[\d.]+ [\d.]+( [ML][\d.]+ [\d.]+)*$/);
    }
    expect(await page.locator(`#series figure:has(svg#${id}) .legend .sw`).count()).toBe(lines.length);
  }
  // The 429 line leaves its baseline somewhere: the chart shows the rate-limited bucket, not only zeros.
  const ys = ((await page.locator("#s-errors path.s-429").getAttribute("d")) ?? "").split(/[ML]/).filter(Boolean).map((p) => Number(p.trim().split(" ")[1]));
  expect(new Set(ys).size, "the 429 line is not flat").toBeGreaterThan(1);

  // The spend chart: a line per caller (the named one and the default one), then per model.
  await page.locator("#spend:not([hidden])").waitFor({ timeout: 15_000 });
  expect(await page.locator("#spend-total").textContent()).toMatch(/^\$\d+\.\d{4} in \d+ answers, \d+ tokens/);
  await expect.poll(() => page.locator('#spend-chart path.line[data-name="dashboard-e2e"]').count()).toBe(1);
  expect(await page.locator('#spend-chart path.line[data-name="(none)"]').count()).toBe(1);
  expect(await page.locator("#spend-legend > span").count()).toBeGreaterThanOrEqual(2);
  // How fresh it is: when it was fetched, and how soon an answer reaches the ledger (USAGE_FLUSH_MS, 300 ms here).
  expect(await page.locator("#spend-fresh").textContent()).toMatch(/^as of \d\d:\d\d:\d\d; answers reach the ledger within 300 ms of their end$/);
  await page.selectOption("#spend-by", "model");
  await expect.poll(() => page.locator(`#spend-chart path.line[data-name="${MODEL}"]`).count()).toBe(1);
  // Each model's whole total for the range, as GET /admin/usage?by=model's groups give it.
  const byModel = await admin<{ groups: { model: string; costUsd: number }[] }>("/admin/usage?by=model");
  const total = byModel.groups.find((g) => g.model === MODEL)!.costUsd;
  const money = (v: number) => `$${v < 1 ? v.toFixed(4) : v.toFixed(2)}`;
  await expect.poll(() => page.locator(`#spend-legend > span[data-name="${MODEL}"]`).textContent(), { timeout: 10_000 }).toBe(`${MODEL} ${money(total)}`);

  // The stated Gemini key's detail: its requests and output windows at their statements, its input
  // window (Gemini tells none, and none is stated) not reported.
  const geminiRow = page.locator(`#keys tbody tr[title="${geminiKey}"]`);
  await expect.poll(() => geminiRow.count(), { timeout: 15_000 }).toBe(1);
  await geminiRow.click();
  await expect.poll(() => page.locator("#d-key").textContent()).toBe(geminiKey);
  const quotas = (await page.locator("#d-quotas").textContent()) ?? "";
  expect(quotas).toMatch(/requests left\d+ \/ 300 \(stated 300\)/);
  expect(quotas).toMatch(/input tokensnot reported/);
  expect(quotas).toMatch(/output tokens left[\d,]+ \/ 50,000 \(stated 50,000\)/);

  // The token never shows up in a URL: neither the page's nor any request it made.
  expect(page.url()).not.toContain(ADMIN_TOKEN);
  expect(urls.length).toBeGreaterThan(1);
  for (const u of urls) expect(u).not.toContain(ADMIN_TOKEN);
  expect(problems).toEqual([]);

  mkdirSync(resolve(SCREENSHOT, ".."), { recursive: true });
  await page.screenshot({ path: SCREENSHOT, fullPage: true });
});
