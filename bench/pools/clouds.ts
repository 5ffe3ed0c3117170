// The cross-cloud pool row (issue 41, item 6): one Claude model served by an Anthropic member, a
// Bedrock member and a Vertex member (test/support/clouds-pool.ts, the POOLS docs/pools-and-virtual-keys.md
// shows), each at its own quota on the stand-in (Anthropic's told in headers, Bedrock's and
// Vertex's by refusals only), driven by the Anthropic SDK through one virtual key, a quarter of the
// requests streamed. Every quota is per minute, a bucket holding a minute (as each provider states
// it), so the buckets start with a minute each: the ideal serves that at once and the rest at the
// sum of the three rates, plus one answer. Each member's answers in the ledger at its own price.
import { Admin } from "../../test/support/pools.ts";
import {
  CLOUDS, type Cloud, type CloudCredentials, cloudsStandin, cloudsVars, costOf, MODEL, MEMBER, newCredentials, POOL, type Quotas, refusedBy, servedBy,
} from "../../test/support/clouds-pool.ts";
import type { Standin } from "../../test/support/standin/index.ts";
import type { ClientSpec } from "../client.ts";
import { configure, type Ctx, PROMPT } from "../context.ts";
import { runFleet } from "../fleet.ts";
import { goal, pct, type Row, secs, times } from "../stats.ts";

const LATENCY_MS = 300;
const MAX_TOKENS = 16;
const creds: CloudCredentials = newCredentials();

/** Quotas, a minute's bucket each; the fleet sends the buckets' minute and `minutes` more at the summed rate. */
const shapeOf = (ctx: Ctx) => {
  const q = ctx.opts.quick ? { anthropic: 60, bedrock: 30, vertex: 30 } : { anthropic: 240, bedrock: 120, vertex: 120 };
  const quotas: Quotas = { anthropic: { rpm: q.anthropic, burst: 1 }, bedrock: { rpm: q.bedrock, burst: 1 }, vertex: { rpm: q.vertex, burst: 1 } };
  const total = q.anthropic + q.bedrock + q.vertex;
  const minutes = ctx.opts.quick ? 0.5 : 2;
  const fleet = ctx.opts.quick ? { k: 2, c: 16 } : { k: 4, c: 32 };
  const n = Math.round(total * (1 + minutes));
  return { quotas, total, n, fleet: { ...fleet, m: Math.ceil(n / fleet.k) } };
};

/** The gateway's vars: the pool and its members' secrets (the Vertex key made by this stand-in). */
export const cloudsBenchVars = (standin: Standin) => cloudsVars(standin, creds);

/** What each member served, refused and cost in the ledger, as text. */
const perMember = (f: (c: Cloud) => string) => CLOUDS.map((c) => `${MEMBER[c]} ${f(c)}`).join(" / ");

export async function runClouds(ctx: Ctx) {
  const { quotas, total, n, fleet } = shapeOf(ctx);
  configure(ctx, { ...cloudsStandin(creds, quotas), latencyMs: LATENCY_MS });
  const admin = new Admin(ctx.gateway.url, ctx.adminToken);
  const vk = await admin.mint(`bench-clouds-${Date.now().toString(36)}`, POOL);
  const since = Date.now() - 1_000;
  const spec: ClientSpec = {
    baseURL: `${ctx.gateway.url}/anthropic`, apiKey: vk.key, model: MODEL, requests: fleet.m, concurrency: fleet.c, maxRetries: 0,
    maxTokens: MAX_TOKENS, prompt: PROMPT, sdk: "anthropic", streamEvery: 4,
  };
  const run = await runFleet(fleet.k, spec, async () => ctx.standin.resetStats());
  const stats = ctx.standin.stats();
  const served = servedBy(stats, creds);
  const refused = refusedBy(stats, creds);
  const requests = fleet.k * fleet.m;
  // The buckets' minute at once, the rest at the summed rate, plus one answer.
  const ideal = (Math.max(0, requests - total) * 60_000) / total + LATENCY_MS;
  const ledger = await ledgerCosts(admin, since, served);
  const attempts = stats.log.length;
  const s = `clouds-pool: Claude on Anthropic (${quotas.anthropic.rpm} RPM, headers), Bedrock (${quotas.bedrock.rpm}) and Vertex (${quotas.vertex.rpm}, no headers), a minute's bucket each, Anthropic SDK with a virtual key, ${fleet.k}x${fleet.m} at ${fleet.c}, a quarter streamed, ${LATENCY_MS} ms`;
  const rows: Row[] = [
    goal({ scenario: s, metric: `makespan / ideal at the sum ${total} RPM ${secs(ideal)}`, baseline: "", value: `${secs(run.makespan)} = ${times(run.makespan / ideal)}` }, "<= 1.10x", run.makespan / ideal <= 1.1),
    goal({ scenario: s, metric: "answered", baseline: "", value: `${run.ok}/${run.requests}${run.failed ? ` (${JSON.stringify(run.failures)})` : ""}` }, "all", run.ok === run.requests),
    { scenario: s, metric: "members' answers (refused upstream)", baseline: "", value: perMember((c) => `${served[c].answers} (${refused[c]})`) },
    { scenario: s, metric: "upstream attempts, 429 share", baseline: "", value: `${attempts}, ${pct(attempts ? (refused.anthropic + refused.bedrock + refused.vertex) / attempts : 0)} 429` },
    goal({ scenario: s, metric: "ledger cost per member / its tokens at its own price", baseline: "", value: perMember((c) => (ledger[c] === null ? "not flushed" : `$${ledger[c]!.toFixed(6)} / $${costOf(c, served[c]).toFixed(6)}`)) },
      "equal", CLOUDS.every((c) => ledger[c] !== null && Math.abs(ledger[c]! - costOf(c, served[c])) < 1e-9)),
  ];
  return { rows, data: { n: requests, idealMs: ideal, makespanMs: run.makespan, fleet: { ok: run.ok, failures: run.failures }, served, refused, ledger } };
}

/** Each member key's cost in the ledger once its requests are all there (the limiters flush every USAGE_FLUSH_MS); null: not in 30 s. */
async function ledgerCosts(admin: Admin, since: number, served: Record<Cloud, { answers: number }>): Promise<Record<Cloud, number | null>> {
  const pool = (await admin.pools()).pools.find((p) => p.name === POOL)!;
  const keyOf = (c: Cloud) => pool.members.find((m) => m.name === MEMBER[c])?.keys.find((k) => k.includes(MODEL));
  const out: Record<Cloud, number | null> = { anthropic: null, bedrock: null, vertex: null };
  for (const end = Date.now() + 30_000; Date.now() < end; await new Promise((r) => setTimeout(r, 500))) {
    const res = await admin.fetch("GET", `/admin/usage?since=${since}&by=key`);
    const rows = res.ok ? ((await res.json()) as { rows: { key: string; requests: number; costUsd: number }[] }).rows : [];
    for (const c of CLOUDS) {
      const mine = rows.filter((r) => r.key === keyOf(c));
      out[c] = mine.reduce((a, r) => a + r.requests, 0) === served[c].answers ? mine.reduce((a, r) => a + r.costUsd, 0) : null;
    }
    if (CLOUDS.every((c) => out[c] !== null)) break;
  }
  return out;
}
