// `slotgate batch --mode provider` through `wrangler dev` with a virtual key: the job killed and
// resumed, each line answered once and made once; the ledger's batch rows equal the stand-in's
// own usage at half price, apart from the synchronous rows of the lines that fell back; the
// budget spent what the ledger says.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { chatLine, cli, countLines, idCounts, inputOf, readOutput, runBatch, tempDir, until, writeInput } from "../node/batch/helpers.ts";
import { ranByChunk, standinBatches, syncAnswers } from "../node/batch/provider-helpers.ts";
import { Admin, type MintedKey, type Pools, poolVars } from "../support/pools.ts";
import { ADMIN_TOKEN, useStack } from "./setup.ts";

const secret = (label: string) => `sk-pbatch-${label}-${randomBytes(6).toString("hex")}`;
const SECRETS = { PB_A: secret("a"), PB_B: secret("b"), PB_ANT: secret("ant") };
const POOLS: Pools = {
  jobs: { provider: "openai", members: [{ name: "a", secret: "PB_A" }, { name: "b", secret: "PB_B" }] },
  claude: { provider: "anthropic", members: [{ name: "c", secret: "PB_ANT" }] },
};
const BATCH = { batchValidatingMs: 50, batchFinalizingMs: 50, batchTurnaroundMs: 1_000 };
const stack = useStack({ admin: true, standin: { latencyMs: 5, rpm: 0, tpm: 0, ...BATCH }, vars: { ...poolVars(POOLS, SECRETS), USAGE_FLUSH_MS: "500" } });

const admin = () => new Admin(stack.gateway.url, ADMIN_TOKEN);
async function mint(pool: string, extra: Record<string, unknown>): Promise<MintedKey> {
  const res = await admin().fetch("POST", "/admin/virtual-keys", { name: `pb-${randomBytes(4).toString("hex")}`, pool, scopes: ["inference", "batches"], ...extra });
  expect(res.status).toBe(201);
  return (await res.json()) as MintedKey;
}
type Row = { virtualKey: string; requests: number; inputTokens: number; outputTokens: number; costUsd: number };
async function ledger(vk: string, mode: "batch" | "sync"): Promise<Row | undefined> {
  const res = await admin().fetch("GET", `/admin/usage?by=virtualKey&mode=${mode}&since=${Date.now() - 3_600_000}`);
  return ((await res.json()) as { rows: Row[] }).rows.filter((r) => r.virtualKey === vk).reduce<Row | undefined>(
    (a, r) => (a ? { ...a, requests: a.requests + r.requests, inputTokens: a.inputTokens + r.inputTokens, outputTokens: a.outputTokens + r.outputTokens, costUsd: a.costUsd + r.costUsd } : r),
    undefined,
  );
}
/** gpt-4o-mini at half its 0.15 / 0.6 per million. */
const halfMini = (input: number, output: number) => (input * 0.075 + output * 0.3) / 1e6;

describe("provider batches through the gateway", () => {
  it("2,000 lines, killed half-way and resumed: each line once, each chunk's batch made once, the ledger equal to the stand-in at half price", async () => {
    const s = stack.standin;
    s.configure({ ...BATCH, batchEnqueuedTokens: 12_000, batchFailRate: 0, batchExpireMs: 86_400_000 });
    s.resetStats();
    const vk = await mint("jobs", { budget: 5 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(2_000));
    const out = join(dir, "results.jsonl");
    const run = cli(["batch", input, "--out", out, "--gateway", stack.gateway.url, "--mode", "provider", "--batch-lines", "100", "--poll", "1"], { OPENAI_API_KEY: vk.key });
    await until(() => countLines(out) >= 500, 90_000, "500 answered lines");
    run.child.kill("SIGKILL");
    await run.exited;
    expect(countLines(out)).toBeLessThan(2_000);

    await runBatch({ input, out, gateway: stack.gateway.url, mode: "provider", resume: true, batchLines: 100, pollMs: 1_000, env: { OPENAI_API_KEY: vk.key } });
    const counts = idCounts(readOutput(out));
    expect(counts.size).toBe(2_000);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(readOutput(out).every((l) => l.error === null)).toBe(true);
    // The chunks went to both members; each ran in one batch, on one of them.
    const ran = ranByChunk([...(await standinBatches(s, SECRETS.PB_A)), ...(await standinBatches(s, SECRETS.PB_B))]);
    expect(ran.size).toBe(20);
    expect([...ran.values()].every((b) => b.length === 1)).toBe(true);
    const st = s.stats().batch;
    expect(st.generations).toBe(2_000);
    expect(syncAnswers(s)).toBe(0);

    let row: Row | undefined;
    for (let i = 0; i < 100 && row?.requests !== 2_000; i++) {
      await new Promise((r) => setTimeout(r, 200));
      row = await ledger(vk.name, "batch");
    }
    expect(row).toMatchObject({ requests: 2_000, inputTokens: st.usage.input, outputTokens: st.usage.output });
    expect(row!.costUsd).toBeCloseTo(halfMini(st.usage.input, st.usage.output), 10);
    // The budget holds nothing more, and spent what the ledger says the batches cost.
    const spend = (await admin().list()).keys.find((k) => k.name === vk.name) as unknown as { spend: { usd: number; reservedUsd: number } };
    expect(spend.spend.reservedUsd).toBe(0);
    expect(spend.spend.usd).toBeCloseTo(row!.costUsd, 10);
  });

  it("lines that failed or expired in their batches fall back once; the ledger tells the batch rows from the synchronous ones", async () => {
    const s = stack.standin;
    s.configure({ ...BATCH, batchTurnaroundMs: 1_200, batchExpireMs: 700, batchFailRate: 0.1, batchEnqueuedTokens: 0 });
    s.resetStats();
    const vk = await mint("claude", {});
    const dir = tempDir();
    const claude = (i: number) => chatLine(`c-${i}`, { provider: "anthropic", url: "/v1/messages", body: { model: "claude-haiku-4-5", max_tokens: 8, messages: [{ role: "user", content: `hello ${i}` }] } });
    const out = join(dir, "results.jsonl");
    const summary = await runBatch({ input: writeInput(dir, Array.from({ length: 120 }, (_, i) => claude(i))), out, gateway: stack.gateway.url, mode: "provider", pollMs: 300, env: { ANTHROPIC_API_KEY: vk.key } });
    expect(idCounts(readOutput(out)).size).toBe(120);
    expect(readOutput(out).every((l) => l.error === null)).toBe(true);
    const st = s.stats().batch;
    const fellBack = st.failedLines + st.expiredLines;
    expect(fellBack).toBeGreaterThan(0);
    expect(syncAnswers(s)).toBe(fellBack);
    expect(summary.batches?.fallback).toBe(fellBack);
    let batch: Row | undefined;
    let sync: Row | undefined;
    for (let i = 0; i < 100 && (batch?.requests !== st.generations || sync?.requests !== fellBack); i++) {
      await new Promise((r) => setTimeout(r, 200));
      [batch, sync] = [await ledger(vk.name, "batch"), await ledger(vk.name, "sync")];
    }
    expect(batch).toMatchObject({ requests: st.generations, inputTokens: st.usage.input, outputTokens: st.usage.output });
    // claude-haiku-4-5 at 1 / 5 per million, and half of it in a batch.
    expect(batch!.costUsd).toBeCloseTo((st.usage.input * 0.5 + st.usage.output * 2.5) / 1e6, 10);
    // The synchronous rows are the fallback lines' answers alone (the batch calls themselves are not answers).
    const used = s.stats().usage;
    expect(sync).toMatchObject({ requests: fellBack, inputTokens: used.input, outputTokens: used.output });
    expect(sync!.costUsd).toBeCloseTo((used.input * 1 + used.output * 5) / 1e6, 10);
  });
});
