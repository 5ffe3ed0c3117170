// Google Vertex AI at a project's quota (issue 41): a pool member holding a service account key (the
// gateway mints its tokens at the stand-in's token endpoint), K processes of @anthropic-ai/vertex-sdk
// through a virtual key (bench/vertex.ts), a quarter of the requests streamed, one Claude model at a
// per-minute quota the stand-in enforces with no headers (Vertex's quotas are per minute:
// cloud.google.com/vertex-ai/generative-ai/docs/quotas). The quota's ideal: a full minute's bucket
// at once, the rest at its rate. Per run: answered and time over that ideal, the upstream 429 share,
// what the callers saw fail, the ledger against the stand-in's own count. Then two Claude models
// whose output tokens a minute bind (a quota of their own: partner-models/claude/quotas), asked
// `max_tokens` 1,000 each: one stated in `PROVIDERS` (`outputTokensPerMinute`), one learned from
// its refusals, whose message names the quota.
// `npm run bench -- --only vertex`.
import type { ClientSpec } from "../client.ts";
import { configure, type Ctx, PROMPT, type Scenario } from "../context.ts";
import { runFleet } from "../fleet.ts";
import { goal, pct, type Row, secs, share, times } from "../stats.ts";

const PROJECT = "bench-vertex";
const MODEL = "claude-sonnet-4-5@20250929";
const LATENCY_MS = 200;
/** Requests a minute: a process's share of the run is two minutes' worth over K processes, so the quota binds. */
const RPM = 120;
const FLEET = { k: 4, c: 4, maxTokens: 16, streamEvery: 4 };
/**
 * The output fleets: 120,000 output tokens a minute at 1,000 a request (120 requests' worth), and
 * half as many again as the bucket holds, so the last third is paced at the quota (30 s).
 */
const OUTPUT = { stated: "claude-haiku-4-5@20251001", learned: "claude-opus-4-5@20251101", otpm: 120_000, maxTokens: 1_000, n: { full: 180, quick: 150 } };
const STUCK_MS = 300_000;

/** The quota's ideal for `n` requests: the minute's bucket at once (at one answer's latency), the rest at RPM. */
export const idealMs = (n: number, rpm: number, latencyMs: number) => Math.max(0, n - rpm) * (60_000 / rpm) + latencyMs;

async function ledgerOf(ctx: Ctx, model: string, since: number, n: number): Promise<{ requests: number; inputTokens: number; outputTokens: number; unknownUsage: number } | null> {
  for (const end = Date.now() + 20_000; Date.now() < end; await new Promise((r) => setTimeout(r, 250))) {
    const res = await fetch(`${ctx.gateway.url}/admin/usage?since=${since}&by=model`, { headers: { authorization: `Bearer ${ctx.adminToken}` } });
    if (!res.ok) continue;
    // A model's usage comes in several rows (by hour, caller, key): summed.
    const rows = ((await res.json()) as { rows: { model: string; requests: number; inputTokens: number; outputTokens: number; unknownUsage: number }[] }).rows.filter((r) => r.model === model);
    const row = { requests: 0, inputTokens: 0, outputTokens: 0, unknownUsage: 0 };
    for (const r of rows) for (const k of ["requests", "inputTokens", "outputTokens", "unknownUsage"] as const) row[k] += r[k];
    if (row.requests >= n) return row;
  }
  return null;
}

/** The base model a key names (Vertex's quotas are per base model: no `@version`). */
const base = (model: string) => model.replace(/@.*$/, "");

export const vertex: Scenario = {
  name: "vertex",
  providers: (url) => ({
    vertex: { baseUrl: `${url}/{resource}-aiplatform.googleapis.com`, quota: { models: { [`us-east5/${base(OUTPUT.stated)}`]: { outputTokensPerMinute: OUTPUT.otpm } } } },
  }),
  vars: (standin) => ({
    USAGE_FLUSH_MS: "200",
    POOLS: JSON.stringify({ "bench-vertex": { provider: "vertex", members: [{ name: "gcp", provider: "vertex", project: PROJECT, location: "us-east5", secret: "BENCH_VERTEX_SA" }] } }),
    BENCH_VERTEX_SA: JSON.stringify(standin.serviceAccount({ project: PROJECT, name: "bench" })),
  }),
  async run(ctx: Ctx) {
    const k = ctx.opts.quick ? 2 : FLEET.k;
    configure(ctx, { latencyMs: LATENCY_MS, headers: false, outputTokens: 12, keyLimits: { [PROJECT]: { rpm: RPM } } });
    const requests = await fleetAt(ctx, k, MODEL, 2 * RPM, FLEET.maxTokens, RPM, `${RPM} RPM per minute, no headers`, 0.05);
    // The output fleets: requests and input plenty, output tokens a minute binding.
    configure(ctx, { latencyMs: LATENCY_MS, headers: false, outputTokens: 12, keyLimits: { [PROJECT]: { rpm: 60_000, tpm: 0, itpm: 100_000_000, otpm: OUTPUT.otpm } } });
    const n = ctx.opts.quick ? OUTPUT.n.quick : OUTPUT.n.full;
    const perMin = OUTPUT.otpm / OUTPUT.maxTokens;
    const what = `${OUTPUT.otpm.toLocaleString("en-US")} output tokens per minute, max_tokens ${OUTPUT.maxTokens.toLocaleString("en-US")}, no headers`;
    const stated = await fleetAt(ctx, k, OUTPUT.stated, n, OUTPUT.maxTokens, perMin, `${what}, stated in PROVIDERS`, 0);
    const learned = await fleetAt(ctx, k, OUTPUT.learned, n, OUTPUT.maxTokens, perMin, `${what}, learned from refusals`, 0.05);
    return { rows: [...requests.rows, ...stated.rows, ...learned.rows], data: { requests: requests.data, outputStated: stated.data, outputLearned: learned.data } };
  },
};

/**
 * One fleet of `k` processes on `model`, `n` requests in all asking `maxTokens` each, at a quota of
 * `perMin` such requests a minute (`quota` says which): its rows. `most429`: the upstream 429
 * share allowed (none where the quota is stated: nothing need be refused to learn it).
 */
async function fleetAt(ctx: Ctx, k: number, model: string, n: number, maxTokens: number, perMin: number, quota: string, most429: number): Promise<{ rows: Row[]; data: unknown }> {
  const m = Math.ceil(n / k);
  const minted = await fetch(`${ctx.gateway.url}/admin/virtual-keys`, {
    method: "POST", headers: { authorization: `Bearer ${ctx.adminToken}`, "content-type": "application/json" }, body: JSON.stringify({ name: `bench-vertex-${Date.now().toString(36)}`, pool: "bench-vertex" }),
  });
  if (minted.status !== 201) throw new Error(`minting the bench's virtual key: ${minted.status} ${await minted.text()}`);
  const { key } = (await minted.json()) as { key: string };
  const spec: ClientSpec = {
    baseURL: `${ctx.gateway.url}/vertex/v1`, apiKey: key, model, requests: m, concurrency: FLEET.c, maxRetries: 0,
    maxTokens, prompt: PROMPT, sdk: "vertex", streamEvery: FLEET.streamEvery,
  };
  const since = Date.now() - 60_000;
  const scenario = `vertex: @anthropic-ai/vertex-sdk via a virtual key, a service account member, ${model}, ${quota}, ${k} x ${m} at ${FLEET.c}`;
  const fleet = await runFleet(k, spec, async () => ctx.standin.resetStats(), STUCK_MS).catch(() => null);
  const up = ctx.standin.stats();
  const ideal = idealMs(k * m, perMin, LATENCY_MS);
  if (!fleet) return { rows: [goal({ scenario, metric: "answered; time / ideal", baseline: secs(ideal), value: `${up.successes}/${k * m} when stopped after ${secs(STUCK_MS)}` }, "all; <= 1.10x", false)], data: { stuck: true } };
  const ledger = await ledgerOf(ctx, model, since, k * m);
  const counted = up.usageBy[PROJECT]?.[model];
  const ratio = fleet.makespan / ideal;
  const share429 = share(up.rateLimited, up.attempts);
  const exact = !!ledger && !!counted && ledger.unknownUsage === 0 && ledger.inputTokens === counted.input && ledger.outputTokens === counted.output;
  const rows: Row[] = [
    goal({ scenario, metric: "answered; time / the quota's ideal", baseline: secs(ideal), value: `${fleet.ok}/${k * m}; ${secs(fleet.makespan)} = ${times(ratio)}` }, "all; <= 1.10x", fleet.ok === k * m && ratio <= 1.1),
    goal({ scenario, metric: "upstream attempts, 429 share", baseline: "", value: `${up.attempts}, ${pct(share429)}` }, most429 === 0 ? "none" : `<= ${most429 * 100}%`, share429 <= most429),
    goal({ scenario, metric: "caller-visible errors", baseline: "", value: Object.entries(fleet.failures).map(([s, c]) => `${s}×${c}`).join(", ") || "none" }, "none", fleet.failed === 0),
    goal({ scenario, metric: "usage in the ledger = the stand-in's (in / out)", baseline: "", value: ledger && counted ? `${ledger.inputTokens} / ${ledger.outputTokens} vs ${counted.input} / ${counted.output}` : "no ledger row" }, "exact", exact),
  ];
  return { rows, data: { model, fleet: { ok: fleet.ok, requests: k * m, failures: fleet.failures, makespanMs: fleet.makespan }, idealMs: ideal, upstream: { attempts: up.attempts, rateLimited: up.rateLimited, oauth: up.oauth }, ledger, counted } };
}
