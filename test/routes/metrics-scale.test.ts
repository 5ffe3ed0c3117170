import { env, exports } from "cloudflare:workers";
import { expect, it, vi } from "vitest";
import { directoryOf } from "../../src/directory/object";
import { METRICS_KEYS_MAX } from "../../src/routes/metrics";
import { parseExposition, value } from "../support/exposition";

// The scrape's cost with many keys, in workerd: METRICS_KEYS_MAX + 5 limiters with real state
// (a grant and a settle each), then timed scrapes. The figure is printed and recorded in
// BENCHMARKS.md; the bound on it here is loose, only to catch a scrape gone quadratic.
const KEYS = METRICS_KEYS_MAX + 5;
const SCRAPES = 3;

it(`a scrape of ${KEYS} keys exports the ${METRICS_KEYS_MAX} most recent, counts the rest, and stays cheap`, { timeout: 180_000 }, async () => {
  const keys = Array.from({ length: KEYS }, (_, i) => `openai:scale-${i}:${i.toString(16).padStart(16, "0")}`);
  for (let i = 0; i < keys.length; i += 50)
    await Promise.all(
      keys.slice(i, i + 50).map(async (key, j) => {
        const stub = env.LIMITER.get(env.LIMITER.idFromName(key));
        const leaseId = `lease-${i + j}`;
        await stub.acquire({ key, provider: "openai", model: key.split(":")[1]!, leaseId, cost: 10, retry: false, waitMs: 5_000 });
        await stub.settle(leaseId, { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 150, attempt: 1, final: true, release: true });
      }),
    );
  await vi.waitFor(async () => expect((await directoryOf(env.DIRECTORY).list(1)).total).toBeGreaterThanOrEqual(KEYS), { timeout: 30_000 });

  const times: number[] = [];
  let text = "";
  for (let i = 0; i < SCRAPES; i++) {
    const t0 = performance.now();
    const res = await exports.default.fetch("http://gateway/admin/metrics", { headers: { authorization: "Bearer test-admin-token" } });
    text = await res.text();
    times.push(performance.now() - t0);
    expect(res.status).toBe(200);
  }
  const fams = parseExposition(text);
  expect(value(fams, "slotgate_keys")).toBe(KEYS);
  expect(value(fams, "slotgate_keys_exported")).toBe(METRICS_KEYS_MAX);
  expect(value(fams, "slotgate_keys_omitted")).toBe(5);
  expect(value(fams, "slotgate_keys_unanswered")).toBe(0);
  const hashes = new Set(fams.find((f) => f.name === "slotgate_concurrency_limit")!.samples.map((s) => s.labels.key_hash));
  expect(hashes.size).toBe(METRICS_KEYS_MAX);
  const series = fams.reduce((n, f) => n + f.samples.length, 0);
  const sorted = [...times].sort((a, b) => a - b);
  console.info(
    `metrics scrape, ${KEYS} keys (${METRICS_KEYS_MAX} exported): ` +
      `${sorted.map((t) => `${Math.round(t)} ms`).join(", ")} (median ${Math.round(sorted[1]!)} ms); ` +
      `${series} series, ${(text.length / 1e6).toFixed(2)} MB; gather ${value(fams, "slotgate_scrape_duration_seconds")} s`,
  );
  expect(sorted[1]).toBeLessThan(30_000);
});
