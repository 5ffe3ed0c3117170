// Metrics and event lines end to end: traffic with a known secret API key and prompt through
// `wrangler dev` into a stand-in that refuses past 4 in flight; then the exposition through
// promtool, a real Prometheus scraping the gateway with the bearer-token config docs/operating.md gives, and
// wrangler's own log output for the event lines. Needs Debian's `prometheus` package (promtool and
// prometheus; CI installs it); without it this FAILS.
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { freePort, type Gateway, startGateway } from "../support/gateway.ts";
import { spawnOwned, stopGroup } from "../support/owned.ts";
import { checkMetrics, PROMETHEUS, requireTool } from "../support/promtool.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";

const ADMIN_TOKEN = "e2e-metrics-admin-4d7e1a";
const API_KEY = "sk-e2e-metrics-secret-9b3f27c1";
const PROMPT = "prompt-marker-e61c0f never in a log";
const TOTAL = 48;

let standin: Standin;
let gateway: Gateway;
let prometheus: ChildProcess | undefined;
let dir = "";

beforeAll(async () => {
  requireTool(PROMETHEUS);
  dir = mkdtempSync(join(tmpdir(), "slotgate-prom-"));
  standin = await startStandin({ maxConcurrent: 4, latencyMs: 100, rpm: 5_000, tpm: 500_000, echo: true });
  gateway = await startGateway({
    providers: { openai: { baseUrl: standin.url } },
    vars: { ADMIN_TOKEN, COOLDOWN_MS: "1000", BASE_BACKOFF_MS: "50" },
    verbose: !!process.env.E2E_VERBOSE,
    logLevel: "log", // info lines (console.log) too, not only warnings
  });
});

afterAll(async () => {
  if (prometheus) await stopGroup(prometheus);
  await gateway?.close();
  await standin?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function chat(i: number): Promise<{ status: number; key: string; text: string }> {
  const res = await fetch(`${gateway.url}/openai/v1/chat/completions`, {
    method: "POST",
    headers: { authorization: `Bearer ${API_KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ model: "gpt-4o-mini", max_tokens: 16, messages: [{ role: "user", content: `${PROMPT} ${i}` }] }),
  });
  return { status: res.status, key: res.headers.get("x-slotgate-key") ?? "", text: await res.text() };
}

/** The operating guide's scrape config, pointed at this gateway over plain http and scraping every second. */
function scrapeConfig(tokenFile: string): string {
  const guide = readFileSync(resolve(import.meta.dirname, "../../docs/operating.md"), "utf8");
  const block = /```yaml\n(scrape_configs:[\s\S]*?job_name: slotgate[\s\S]*?)```/.exec(guide)?.[1];
  if (!block) throw new Error("docs/operating.md has no yaml block with the slotgate scrape config");
  const host = new URL(gateway.url).host;
  const out = block
    .replace("scheme: https", "scheme: http")
    .replace(/scrape_interval: \S+/, "scrape_interval: 1s")
    .replace(/credentials_file: \S+/, `credentials_file: ${tokenFile}`)
    .replace(/targets: \[[^\]]*\]/, `targets: ["${host}"]`);
  expect(out).toContain(host); // every replacement found its line
  expect(out).toContain(tokenFile);
  return out;
}

async function promQuery(port: number, q: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await res.json()) as { status: string; data: { result: { metric: Record<string, string>; value: [number, string] }[] } };
  expect(body.status).toBe("success");
  return body.data.result;
}

it("exposes the run's numbers to promtool and a real Prometheus, and logs its decisions without secrets", async () => {
  const results: { status: number; key: string; text: string }[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: 12 }, async () => {
    while (next < TOTAL) results.push(await chat(next++));
  }));
  expect(results.filter((r) => r.status !== 200)).toEqual([]);
  expect(results[0]!.text).toContain("prompt-marker-e61c0f"); // the stand-in echoes: the answer holds the prompt too
  const key = results[0]!.key;
  const hash = key.split(":")[2]!;
  const refused = standin.stats().rateLimitedBy.concurrency;
  expect(refused, "the stand-in's cap was hit").toBeGreaterThan(0);

  // 1. The exposition, once every settle has landed, through Prometheus's own parser and linter.
  const scrape = async () => {
    const res = await fetch(`${gateway.url}/admin/metrics`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    return res.text();
  };
  let text = "";
  await expect.poll(async () => (text = await scrape()), { timeout: 10_000 }).toContain(`slotgate_requests_total{provider="openai",model="gpt-4o-mini",key_hash="${hash}",class="success"} ${TOTAL}\n`);
  expect(checkMetrics(text)).toEqual({ status: 0, output: "" });
  expect((await fetch(`${gateway.url}/admin/metrics`)).status).toBe(401);

  // 2. A real Prometheus with the operating guide's config scrapes the gateway.
  const tokenFile = join(dir, "token");
  writeFileSync(tokenFile, ADMIN_TOKEN);
  writeFileSync(join(dir, "prometheus.yml"), scrapeConfig(tokenFile));
  const port = await freePort();
  let promLog = "";
  // Owned (support/owned.ts): gone with this test run however it ends.
  prometheus = spawnOwned(PROMETHEUS, [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"]);
  prometheus.stdout!.on("data", (b: Buffer) => (promLog += b));
  prometheus.stderr!.on("data", (b: Buffer) => (promLog += b));
  await expect.poll(async () => {
    try {
      const r = await fetch(`http://127.0.0.1:${port}/api/v1/targets`);
      const t = (await r.json()) as { data: { activeTargets: { health: string; lastError: string }[] } };
      return t.data.activeTargets.map((a) => `${a.health} ${a.lastError}`).join();
    } catch {
      return "not up yet";
    }
  }, { timeout: 30_000, interval: 500 }).toBe("up ");
  const success = await promQuery(port, `slotgate_requests_total{key_hash="${hash}",class="success"}`);
  expect(success.map((r) => [r.metric.provider, r.metric.model, r.value[1]]), promLog).toEqual([["openai", "gpt-4o-mini", String(TOTAL)]]);
  const absorbed = Number((await promQuery(port, `slotgate_rate_limits_absorbed_total{key_hash="${hash}"}`))[0]!.value[1]);
  expect(absorbed).toBe(refused); // every 429 the stand-in sent was retried, none reached a caller
  const attempts = await promQuery(port, `sum(slotgate_upstream_attempts_total{key_hash="${hash}"})`);
  expect(Number(attempts[0]!.value[1])).toBe(TOTAL + refused);
  const waited = await promQuery(port, `slotgate_queue_wait_seconds_count{key_hash="${hash}"}`);
  expect(Number(waited[0]!.value[1])).toBe(TOTAL + refused);
  const p99 = await promQuery(port, `histogram_quantile(0.99, slotgate_upstream_latency_seconds_bucket{key_hash="${hash}"})`);
  expect(Number(p99[0]!.value[1])).toBeGreaterThan(0.05); // the stand-in takes 100 ms
  expect((await promQuery(port, "slotgate_keys_omitted"))[0]!.value[1]).toBe("0");

  // 3. The event lines wrangler printed: the 429s and the cut are there, the secrets are not.
  // wrangler decorates each line (a coloured "[WARNING]" before a warn line): take the JSON out.
  const plain = gateway.output().replace(/\x1b\[[0-9;]*m/g, "");
  const events = plain.split("\n").filter((l) => l.includes('{"event":')).map((l) => JSON.parse(l.slice(l.indexOf("{"), l.lastIndexOf("}") + 1)) as Record<string, unknown>);
  const mine = events.filter((e) => e.key === key);
  // One ratelimit:hit per upstream 429, unless the rate bound held some back (then a line says so).
  const hits = mine.filter((e) => e.event === "ratelimit:hit").length;
  if (mine.some((e) => typeof e.suppressed === "number")) expect(hits).toBeLessThan(refused);
  else expect(hits).toBe(refused);
  expect(mine.map((e) => e.event)).toEqual(expect.arrayContaining(["ratelimit:hit", "request:retrying", "concurrency:decreased", "ratelimit:learned"]));
  for (const where of [text, gateway.output()])
    for (const s of [API_KEY, "e2e-metrics-secret", "prompt-marker-e61c0f", ADMIN_TOKEN]) expect(where).not.toContain(s);
});
