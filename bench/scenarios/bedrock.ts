// Amazon Bedrock at its quota (issue 41): several callers (a virtual key each, the AWS SDK's
// Converse, a quarter streamed with ConverseStream) on one pool member holding IAM credentials the
// gateway signs every attempt with, one model at a per-minute quota the stand-in enforces per
// account, region and model with no headers (a ThrottlingException is all Bedrock says). Rows: answered
// and the time over the quota's ideal, the upstream 429 share, what the callers saw fail, and whether
// the ledger holds exactly the usage the stand-in charged. `npm run bench -- --only bedrock`.
import type { ClientSpec } from "../client.ts";
import { configure, type Ctx, PROMPT, type Scenario } from "../context.ts";
import { runFleets } from "../fleet.ts";
import { goal, pct, type Row, secs, share, times } from "../stats.ts";
import { ledgerRow } from "./providers.ts";
import { Admin } from "../../test/support/pools.ts";
import { DEFAULT_BEDROCK } from "../../test/support/standin/bedrock-options.ts";

const ACCOUNT = DEFAULT_BEDROCK.accounts[0]!;
const REGION = "us-east-1";
const MODEL = "meta.llama3-3-70b-instruct-v1:0";
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
  async run(ctx: Ctx) {
    const f = ctx.opts.quick ? QUICK : FULL;
    const { n } = f;
    const m = n / f.k;
    configure(ctx, { latencyMs: LATENCY_MS, outputTokens: 16, bedrock: { ...DEFAULT_BEDROCK, limits: { [`${ACCOUNT.id}/${REGION}/${MODEL}`]: { rpm: f.rpm } } } });
    const stamp = Date.now().toString(36);
    const admin = new Admin(ctx.gateway.url, ctx.adminToken);
    const keys = await Promise.all(Array.from({ length: f.k }, (_, i) => admin.mint(`bench-bedrock-${stamp}-${i}`, "bench-bedrock")));
    const since = Date.now() - 60_000;
    const spec = (key: string): ClientSpec => ({
      baseURL: `${ctx.gateway.url}/bedrock/${REGION}`, apiKey: key, model: MODEL, requests: m, concurrency: f.c, maxRetries: 0, maxTokens: 16, prompt: PROMPT, sdk: "bedrock", streamEvery: 4,
    });
    // Each caller its own process and virtual key, started together.
    const fleets = await runFleets(keys.map((vk) => ({ k: 1, spec: spec(vk.key) })), async () => ctx.standin.resetStats(), STUCK_MS).catch(() => null);
    const up = ctx.standin.stats();
    const scenario = `bedrock: AWS SDK Converse (a quarter ConverseStream), ${f.k} callers x ${m} at ${f.c}, one IAM member signed by the gateway, ${f.rpm} RPM, no headers`;
    // The quota's: the first minute's bucket at once, the rest at the quota; never faster than the callers' own round trips.
    const idealMs = Math.max(((n - f.rpm) / f.rpm) * 60_000, (n / (f.k * f.c)) * LATENCY_MS) + LATENCY_MS;
    if (!fleets) return { rows: [goal({ scenario, metric: "answered; time / ideal", baseline: "", value: `${up.successes}/${n} upstream answers when the clients were stopped after ${secs(STUCK_MS)}` }, "all; <= 1.10x", false)], data: { stuck: true } };
    const ok = fleets.reduce((a, fl) => a + fl.ok, 0);
    const failed = fleets.reduce((a, fl) => a + fl.failed, 0);
    const makespan = Math.max(...fleets.map((fl) => fl.end)) - Math.min(...fleets.map((fl) => fl.start));
    const failures: Record<string, number> = {};
    for (const fl of fleets) for (const [st, c] of Object.entries(fl.failures)) failures[st] = (failures[st] ?? 0) + c;
    const charged = up.bedrock[ACCOUNT.id]?.[MODEL] ?? { answers: 0, input: 0, output: 0 };
    const ledger = await ledgerRow(ctx, MODEL, since, n);
    const exact = ledger !== null && ledger.unknownUsage === 0 && ledger.requests === charged.answers && ledger.inputTokens === charged.input && ledger.outputTokens === charged.output;
    const ratio = makespan / idealMs;
    const share429 = share(up.rateLimited, up.attempts);
    const rows: Row[] = [
      goal({ scenario, metric: "answered; time / the quota's ideal", baseline: `ideal ${secs(idealMs)}`, value: `${ok}/${n}; ${secs(makespan)} = ${times(ratio)}` }, "all; <= 1.10x", ok === n && ratio <= 1.1),
      goal({ scenario, metric: "upstream attempts, 429 share", baseline: "", value: `${up.attempts}, ${pct(share429)}` }, "<= 5%", share429 <= 0.05),
      goal({ scenario, metric: "caller-visible errors", baseline: "", value: Object.entries(failures).map(([st, c]) => `${st === "0" ? "no answer" : st}×${c}`).join(", ") || "none" }, "none", failed === 0),
      goal(
        { scenario, metric: "usage in the ledger = the stand-in's (requests, in / out)", baseline: "", value: ledger ? `${ledger.requests}, ${ledger.inputTokens} / ${ledger.outputTokens} vs ${charged.answers}, ${charged.input} / ${charged.output}` : "no ledger row" },
        "exact", exact,
      ),
    ];
    return { rows, data: { rpm: f.rpm, n, makespanMs: makespan, idealMs, upstream: { attempts: up.attempts, rateLimited: up.rateLimited }, charged, ledger, failures } };
  },
};
