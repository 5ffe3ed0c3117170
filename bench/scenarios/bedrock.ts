// Amazon Bedrock at its quota (issue 41): several callers (a virtual key each, the AWS SDK's
// Converse, a quarter streamed with ConverseStream) on one pool member holding IAM credentials the
// gateway signs every attempt with, one model at a per-minute quota the stand-in enforces per
// account, region and model with no headers (a ThrottlingException is all Bedrock says). Rows: answered
// and the time over the quota's ideal, the upstream 429 share, what the callers saw fail, and whether
// the ledger holds exactly the usage the stand-in charged; then the same fleet on a second model at
// the same quota, which `PROVIDERS` states (paced from the first request: no refusal to learn
// from); then a Claude 4 model whose tokens quota `PROVIDERS` states, asked `maxTokens` 1,000 with
// answers of 200: the stand-in reserves each request's limit and settles it at what it drew (its
// output five times), and the gateway charges the most a request can draw and gives back the rest.
// `npm run bench -- --only bedrock`.
import type { ClientSpec } from "../client.ts";
import { configure, type Ctx, PROMPT, type Scenario } from "../context.ts";
import { runFleets } from "../fleet.ts";
import { goal, pct, type Row, secs, share, times } from "../stats.ts";
import { ledgerRow } from "./providers.ts";
import { Admin } from "../../test/support/pools.ts";
import { gatewayProviders } from "../../test/support/standin/bases.ts";
import { DEFAULT_BEDROCK } from "../../test/support/standin/bedrock-options.ts";

const ACCOUNT = DEFAULT_BEDROCK.accounts[0]!;
const REGION = "us-east-1";
const MODEL = "meta.llama3-3-70b-instruct-v1:0";
/** Models whose quota the operator states (`PROVIDERS.bedrock.quota`), one per size, at the same quota as MODEL's in that size. */
const STATED = { full: "meta.llama3-1-8b-instruct-v1:0", quick: "meta.llama3-2-3b-instruct-v1:0" };
const LATENCY_MS = 100;
/**
 * Requests per minute, in a bucket of the whole minute, and the fleet: twice the quota, so the
 * second half is paced at the quota (full: a minute of it, quick: half a minute). A quota small
 * beside what the callers could send (8 in flight at 100 ms: 80 a second) so that it binds, not the
 * machine: a first run at 240 RPM with 200 ms answers never met the quota (15 answers a second
 * on a loaded two-core machine) and measured the machine.
 */
const FULL = { rpm: 120, n: 240, k: 4, c: 2 };
const QUICK = { rpm: 60, n: 120, k: 2, c: 2 };
/**
 * The tokens fleet: a Claude 4 model (an output token draws five), a quota about half of what the
 * fleet draws (answers of `OUTPUT` tokens, about 1,000 drawn each with the prompt), so the second
 * half is paced at it; and an output limit five times what the answers use.
 */
const TOKENS_MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0";
const TOKENS = { tpm: 120_000, n: { full: 240, quick: 120 } };
const OUTPUT = 200;
const MAX_TOKENS = 1_000;
const STUCK_MS = 300_000;

const POOLS = {
  "bench-bedrock": {
    provider: "bedrock",
    members: [{ name: "aws-bench", provider: "bedrock", region: REGION, account: ACCOUNT.id, secrets: { accessKeyId: "BENCH_AWS_KEY_ID", secretAccessKey: "BENCH_AWS_SECRET" } }],
  },
};

export const bedrock: Scenario = {
  name: "bedrock",
  real: true,
  vars: () => ({ POOLS: JSON.stringify(POOLS), BENCH_AWS_KEY_ID: ACCOUNT.keys[0]!.accessKeyId, BENCH_AWS_SECRET: ACCOUNT.keys[0]!.secretAccessKey, USAGE_FLUSH_MS: "200" }),
  // PROVIDERS is set when the gateway starts, before the run picks its size: a model stated for each.
  providers: (url) => ({
    bedrock: {
      ...gatewayProviders(url, ["bedrock"]).bedrock!,
      quota: { models: { [STATED.full]: { requestsPerMinute: FULL.rpm }, [STATED.quick]: { requestsPerMinute: QUICK.rpm }, [TOKENS_MODEL]: { tokensPerMinute: TOKENS.tpm } } },
    },
  }),
  async run(ctx: Ctx) {
    const f = ctx.opts.quick ? QUICK : FULL;
    const known = ctx.opts.quick ? STATED.quick : STATED.full;
    configure(ctx, {
      latencyMs: LATENCY_MS, outputTokens: 16,
      bedrock: { ...DEFAULT_BEDROCK, limits: { [`${ACCOUNT.id}/${REGION}/${MODEL}`]: { rpm: f.rpm }, [`${ACCOUNT.id}/${REGION}/${known}`]: { rpm: f.rpm } } },
    });
    const learned = await fleetAt(ctx, MODEL, f, "learned from refusals");
    const stated = await fleetAt(ctx, known, f, "stated in PROVIDERS");
    // The tokens fleet (PROVIDERS is set before the run picks its size: the quick run sends half as many at the same quota).
    configure(ctx, {
      latencyMs: LATENCY_MS, outputTokens: OUTPUT,
      bedrock: { ...DEFAULT_BEDROCK, limits: { [`${ACCOUNT.id}/${REGION}/${TOKENS_MODEL}`]: { rpm: 6_000, tpm: TOKENS.tpm } } },
    });
    const n = ctx.opts.quick ? TOKENS.n.quick : TOKENS.n.full;
    const tokens = await fleetAt(ctx, TOKENS_MODEL, { ...f, n, rpm: 6_000 }, "stated in PROVIDERS", { tpm: TOKENS.tpm, maxTokens: MAX_TOKENS });
    return { rows: [...learned.rows, ...stated.rows, ...tokens.rows], data: { learned: learned.data, stated: stated.data, tokens: tokens.data } };
  },
};

/**
 * One fleet on `model` at quota `f`: its rows, `how` the gateway knows the quota. `tokens`: a tokens
 * quota binds instead (`tpm`), the callers asking `maxTokens` each; its ideal is what the answers
 * drew (input, and output five times on a Claude 4 model) beyond the minute's bucket, at the quota.
 */
async function fleetAt(ctx: Ctx, model: string, f: typeof FULL, how: string, tokens?: { tpm: number; maxTokens: number }): Promise<{ rows: Row[]; data: unknown }> {
  const { n } = f;
  const m = n / f.k;
  const stamp = Date.now().toString(36);
  const admin = new Admin(ctx.gateway.url, ctx.adminToken);
  const keys = await Promise.all(Array.from({ length: f.k }, (_, i) => admin.mint(`bench-bedrock-${stamp}-${i}`, "bench-bedrock")));
  const since = Date.now() - 60_000;
  const spec = (key: string): ClientSpec => ({
    baseURL: `${ctx.gateway.url}/bedrock/${REGION}`, apiKey: key, model, requests: m, concurrency: f.c, maxRetries: 0, maxTokens: tokens?.maxTokens ?? 16, prompt: PROMPT, sdk: "bedrock", streamEvery: 4,
  });
  // Each caller its own process and virtual key, started together.
  const fleets = await runFleets(keys.map((vk) => ({ k: 1, spec: spec(vk.key) })), async () => ctx.standin.resetStats(), STUCK_MS).catch(() => null);
  const up = ctx.standin.stats();
  const quota = tokens ? `${tokens.tpm.toLocaleString("en-US")} TPM (Claude 4: output x5), maxTokens ${tokens.maxTokens} for answers of ${OUTPUT}` : `${f.rpm} RPM`;
  const scenario = `bedrock: AWS SDK Converse (a quarter ConverseStream), ${f.k} callers x ${m} at ${f.c}, one IAM member signed by the gateway, ${quota}, no headers, the quota ${how}`;
  // The quota's: the first minute's bucket at once, the rest at the quota; never faster than the callers' own round trips.
  const drawn = tokens ? (up.bedrock[ACCOUNT.id]?.[model]?.input ?? 0) + 5 * (up.bedrock[ACCOUNT.id]?.[model]?.output ?? 0) : n;
  const [units, perMin] = tokens ? [drawn, tokens.tpm] : [n, f.rpm];
  const idealMs = Math.max(((units - perMin) / perMin) * 60_000, (n / (f.k * f.c)) * LATENCY_MS) + LATENCY_MS;
  if (!fleets) return { rows: [goal({ scenario, metric: "answered; time / ideal", baseline: "", value: `${up.successes}/${n} upstream answers when the clients were stopped after ${secs(STUCK_MS)}` }, "all; <= 1.10x", false)], data: { stuck: true } };
  const ok = fleets.reduce((a, fl) => a + fl.ok, 0);
  const failed = fleets.reduce((a, fl) => a + fl.failed, 0);
  const makespan = Math.max(...fleets.map((fl) => fl.end)) - Math.min(...fleets.map((fl) => fl.start));
  const failures: Record<string, number> = {};
  for (const fl of fleets) for (const [st, c] of Object.entries(fl.failures)) failures[st] = (failures[st] ?? 0) + c;
  const charged = up.bedrock[ACCOUNT.id]?.[model] ?? { answers: 0, input: 0, output: 0 };
  const ledger = await ledgerRow(ctx, model, since, n);
  const exact = ledger !== null && ledger.unknownUsage === 0 && ledger.requests === charged.answers && ledger.inputTokens === charged.input && ledger.outputTokens === charged.output;
  const ratio = makespan / idealMs;
  const share429 = share(up.rateLimited, up.attempts);
  // Stated, the key never has to be refused to learn: none is the goal.
  const most429 = how.startsWith("stated") ? 0 : 0.05;
  const rows: Row[] = [
    goal({ scenario, metric: "answered; time / the quota's ideal", baseline: `ideal ${secs(idealMs)}`, value: `${ok}/${n}; ${secs(makespan)} = ${times(ratio)}` }, "all; <= 1.10x", ok === n && ratio <= 1.1),
    goal({ scenario, metric: "upstream attempts, 429 share", baseline: "", value: `${up.attempts}, ${pct(share429)}` }, most429 === 0 ? "none" : "<= 5%", share429 <= most429),
    goal({ scenario, metric: "caller-visible errors", baseline: "", value: Object.entries(failures).map(([st, c]) => `${st === "0" ? "no answer" : st}×${c}`).join(", ") || "none" }, "none", failed === 0),
    goal(
      { scenario, metric: "usage in the ledger = the stand-in's (requests, in / out)", baseline: "", value: ledger ? `${ledger.requests}, ${ledger.inputTokens} / ${ledger.outputTokens} vs ${charged.answers}, ${charged.input} / ${charged.output}` : "no ledger row" },
      "exact", exact,
    ),
  ];
  return { rows, data: { model, rpm: f.rpm, n, makespanMs: makespan, idealMs, upstream: { attempts: up.attempts, rateLimited: up.rateLimited }, charged, ledger, failures } };
}
