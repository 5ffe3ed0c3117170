// Every built-in provider beyond OpenAI and Anthropic (issue 32), each at its limit in its own
// dialect: the stand-in plays the provider's headers, windows and refusals (test/support/standin),
// its users' client drives it through wrangler dev (the openai SDK on its OpenAI-style route,
// AzureOpenAI, fetch on Gemini's native API), a quarter of the requests streamed without asking
// for usage. Per provider: answered and time over the ideal, the upstream 429 share, what the
// callers saw fail, whether the ledger holds exactly the usage the provider reported; beside each,
// the simulator's figure for the same shape (sim/provider.ts speaks the same dialect).
// `npm run bench -- --only providers`.
import type { ClientSpec } from "../client.ts";
import { configure, type Ctx, PROMPT, type Scenario } from "../context.ts";
import { runFleet } from "../fleet.ts";
import { NEUTRAL } from "../real/measure.ts";
import { type SimResult, simulateShape } from "../simulated.ts";
import { goal, pct, type Row, secs, share, times } from "../stats.ts";
import { OPENAI_SDK_PATHS } from "../../test/support/standin/index.ts";
import type { BuiltIn, DialectName, OpenAiStyle, StandinOptions } from "../../test/support/standin/index.ts";

interface ProviderShape {
  provider: Exclude<BuiltIn, "openai" | "anthropic" | "bedrock">;
  client: "openai" | "azure" | "gemini";
  /** What binds, as the provider tells it. */
  label: string;
  standin: Partial<StandinOptions>;
  /** Upstream 429s allowed, as a share of attempts. */
  max429: number;
}

/** 20 requests a second in a second's bucket, as each provider counts it; 200 ms answers. */
const RATE = 20;
const COST = Math.ceil(PROMPT.length / 4) + 16; // prompt + max_tokens, as the stand-in charges a request
const SECOND = 1 / 60;
const BASE = { latencyMs: 200, burst: SECOND };

const SHAPES: ProviderShape[] = [
  { provider: "azure", client: "azure", label: "AzureOpenAI, 1,200 RPM per deployment over 1 s, remaining-only headers", standin: { ...BASE, rpm: RATE * 60, tpm: 200_000 }, max429: 0.02 },
  { provider: "gemini", client: "gemini", label: "fetch on generateContent, 1,200 RPM, no headers (RESOURCE_EXHAUSTED + RetryInfo)", standin: { ...BASE, rpm: RATE * 60, rpd: 100_000 }, max429: 0.05 },
  { provider: "groq", client: "openai", label: "openai SDK, TPM binding (tokens per minute, requests per DAY in the headers)", standin: { ...BASE, tpm: RATE * 60 * COST, rpd: 14_400 }, max429: 0.02 },
  { provider: "mistral", client: "openai", label: "openai SDK, tokens per minute by size and a month's cap", standin: { ...BASE, tpm: RATE * 60 * COST, monthlyTokens: 10_000_000 }, max429: 0.02 },
  { provider: "openrouter", client: "openai", label: "openai SDK, 1,200 RPM, no headers (limits only in a 429's metadata)", standin: { ...BASE, rpm: RATE * 60 }, max429: 0.05 },
  { provider: "deepseek", client: "openai", label: "openai SDK, no limit, every answer held 300 ms with keep-alive lines", standin: { latencyMs: 200, heldMs: 300 }, max429: 0 },
  { provider: "together", client: "openai", label: "openai SDK, 1,200 RPM told per second, 5% 503 below the rate", standin: { ...BASE, rpm: RATE * 60, faults: { "503": 0.05 } }, max429: 0.02 },
  { provider: "fireworks", client: "openai", label: "openai SDK, generated tokens per second binding", standin: { ...BASE, rpm: 6_000, tpm: 0, itpm: 3_600_000, otpm: RATE * 60 * 16 }, max429: 0.02 },
  { provider: "xai", client: "openai", label: "openai SDK, 1,200 RPM as 20 a second, no headers", standin: { ...BASE, rpm: RATE * 60, tpm: 0 }, max429: 0.05 },
];

const FLEET = { k: 4, m: 60, c: 8, maxTokens: 16, streamEvery: 4 };
const STUCK_MS = 120_000;

function baseURL(ctx: Ctx, s: ProviderShape): string {
  const gw = ctx.gateway.url;
  if (s.client === "azure") return `${gw}/azure/benchres`;
  if (s.client === "gemini") return `${gw}/gemini`;
  return `${gw}/${s.provider}${OPENAI_SDK_PATHS[s.provider as OpenAiStyle]}`;
}

export type Ledger = { requests: number; inputTokens: number; outputTokens: number; unknownUsage: number };

/** The ledger's row for one model, polled until it holds `n` requests (or 20 s). */
export async function ledgerRow(ctx: Ctx, model: string, since: number, n: number): Promise<Ledger | null> {
  const end = Date.now() + 20_000;
  let row: Ledger | null = null;
  while (Date.now() < end) {
    const res = await fetch(`${ctx.gateway.url}/admin/usage?since=${since}&by=model`, { headers: { authorization: `Bearer ${ctx.adminToken}` } });
    if (res.ok) row = ((await res.json()) as { rows: (Ledger & { model: string })[] }).rows.filter((r) => r.model === model).reduce<Ledger | null>(
      (a, r) => ({ requests: (a?.requests ?? 0) + r.requests, inputTokens: (a?.inputTokens ?? 0) + r.inputTokens, outputTokens: (a?.outputTokens ?? 0) + r.outputTokens, unknownUsage: (a?.unknownUsage ?? 0) + r.unknownUsage }),
      null,
    );
    if ((row?.requests ?? 0) >= n) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return row;
}

const simulated = (s: ProviderShape, k: number, m: number): SimResult =>
  simulateShape({
    shape: { ...NEUTRAL, ...s.standin, flavour: s.provider satisfies DialectName },
    fleet: { k, c: FLEET.c, n: k * m, maxTokens: FLEET.maxTokens, promptChars: PROMPT.length },
    via: "gateway",
    client: "sdk",
  });

async function one(ctx: Ctx, s: ProviderShape): Promise<{ rows: Row[]; data: unknown }> {
  const k = ctx.opts.quick ? 2 : FLEET.k;
  const m = ctx.opts.quick ? 16 : FLEET.m;
  const n = k * m;
  configure(ctx, s.standin);
  const stamp = Date.now().toString(36);
  const model = `bench-${s.provider}-${stamp}`;
  const spec: ClientSpec = {
    baseURL: baseURL(ctx, s), apiKey: `sk-bench-${s.provider}-${stamp}`, model, requests: m, concurrency: FLEET.c, maxRetries: 0,
    maxTokens: FLEET.maxTokens, prompt: PROMPT, sdk: s.client, streamEvery: FLEET.streamEvery,
  };
  const since = Date.now() - 60_000;
  const scenario = `providers ${s.provider}: ${s.label}, ${k} x ${m} at ${FLEET.c}`;
  // A run that has not ended in two minutes (ten times its ideal) is a finding, not a reason to stop the others.
  const fleet = await runFleet(k, spec, async () => ctx.standin.resetStats(), STUCK_MS).catch(() => null);
  const up = ctx.standin.stats();
  const sim = simulated(s, k, m);
  const simText = `${n - sim.failed}/${n}; ${secs(sim.makespanMs)} = ${times(sim.makespanMs / sim.idealMs)}`;
  if (!fleet) {
    return {
      rows: [goal({ scenario, metric: "answered; time / ideal (simulator | wrangler dev)", baseline: simText, value: `${up.successes}/${n} upstream answers when the clients were stopped after ${secs(STUCK_MS)}` }, "all; <= 1.10x", false)],
      data: { shape: s, stuck: true, upstream: { attempts: up.attempts, rateLimited: up.rateLimited, successes: up.successes }, sim },
    };
  }
  const ledger = await ledgerRow(ctx, model, since, n);
  const ratio = fleet.makespan / sim.idealMs;
  const share429 = share(up.rateLimited, up.attempts);
  const simShare = share(sim.upstream429, sim.attempts);
  const exact = ledger !== null && ledger.unknownUsage === 0 && ledger.inputTokens === up.usage.input && ledger.outputTokens === up.usage.output;
  const failures = Object.entries(fleet.failures).map(([st, c]) => `${st === "0" ? "no answer" : st}×${c}`).join(", ") || "none";
  const rows: Row[] = [
    goal(
      { scenario, metric: "answered; time / ideal (simulator | wrangler dev)", baseline: simText, value: `${fleet.ok}/${n}; ${secs(fleet.makespan)} = ${times(ratio)} of ${secs(sim.idealMs)}` },
      "all; <= 1.10x", fleet.ok === n && ratio <= 1.1,
    ),
    goal({ scenario, metric: "upstream attempts, 429 share", baseline: `${sim.attempts}, ${pct(simShare)}`, value: `${up.attempts}, ${pct(share429)}` }, `<= ${pct(s.max429, 0)}`, share429 <= s.max429),
    goal({ scenario, metric: "caller-visible errors", baseline: String(sim.failed), value: failures }, "none", fleet.failed === 0),
    goal(
      {
        scenario, metric: "usage in the ledger = the provider's (in / out)", baseline: "",
        value: ledger ? `${ledger.inputTokens} / ${ledger.outputTokens} vs ${up.usage.input} / ${up.usage.output}${ledger.unknownUsage ? `, ${ledger.unknownUsage} unknown` : ""}` : "no ledger row",
      },
      "exact", exact,
    ),
  ];
  return { rows, data: { shape: s, fleet: { ok: fleet.ok, requests: n, failures: fleet.failures, makespanMs: fleet.makespan }, upstream: { attempts: up.attempts, rateLimited: up.rateLimited, usage: up.usage, faults: up.faults }, ledger, sim } };
}

export const providers: Scenario = {
  name: "providers",
  real: true,
  vars: () => ({ USAGE_FLUSH_MS: "200" }),
  async run(ctx: Ctx) {
    const rows: Row[] = [];
    const data: Record<string, unknown> = {};
    for (const s of SHAPES) {
      const out = await one(ctx, s);
      rows.push(...out.rows);
      data[s.provider] = out.data;
    }
    return { rows, data };
  },
};
