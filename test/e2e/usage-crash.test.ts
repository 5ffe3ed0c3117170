// Usage that survives a crash (issue 26): a run through a virtual key with the official openai SDK
// and its own retries; mid-run, with every request parked at the stand-in (none answered in
// transit), wrangler's whole process group gets SIGKILL and is started again on the same storage.
// The SDK's retries carry the run to its end, and the ledger must hold exactly the tokens the
// stand-in served: the usage the limiters had received but not yet written survives in their
// outboxes, and is written once.
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { Admin } from "../support/pools.ts";
import { parseExposition } from "../support/exposition.ts";
import { ADMIN_TOKEN, OPENAI_MODEL, until, useStack } from "./setup.ts";

const MEMBER_KEY = "sk-e2e-crash-member-5c1d9e07a2";
const TOTAL = 240;
const CONCURRENCY = 8;
/** Answers before the crash. */
const BEFORE_KILL = 100;

const stack = useStack({
  admin: true,
  standin: { latencyMs: 15 },
  vars: {
    POOLS: JSON.stringify({ crash: { provider: "openai", members: [{ name: "m", secret: "POOL_KEY_CRASH" }] } }),
    POOL_KEY_CRASH: MEMBER_KEY,
    // Short, for the test's time; the kill comes within one interval of the last records' arrival
    // (the test checks that the ledger lags at the kill, and lets more through until it does).
    USAGE_FLUSH_MS: "3000",
  },
});

const admin = (path: string) => fetch(`${stack.gateway.url}${path}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

/** Input and output tokens as the limiters counted them on receipt (their Prometheus counters). */
async function received(): Promise<{ input: number; output: number }> {
  const families = parseExposition(await (await admin("/admin/metrics")).text());
  const samples = families.find((f) => f.name === "slotgate_tokens_total")?.samples ?? [];
  const sum = (direction: string) => samples.filter((s) => s.labels.direction === direction).reduce((a, s) => a + s.value, 0);
  return { input: sum("input"), output: sum("output") };
}

/** What the ledger holds since `since`. */
async function ledger(since: number): Promise<{ requests: number; input: number; output: number }> {
  const res = await admin(`/admin/usage?since=${since}`);
  expect(res.status).toBe(200);
  const { totals } = (await res.json()) as { totals: { requests: number | null; inputTokens: number | null; outputTokens: number | null } };
  return { requests: totals.requests ?? 0, input: totals.inputTokens ?? 0, output: totals.outputTokens ?? 0 };
}

describe("usage that survives a crash", () => {
  it("kill -9 mid-run with usage not yet in the ledger: after the restart, the ledger's tokens equal the stand-in's exactly", { timeout: 60_000 }, async () => {
    const since = Date.now() - 60_000;
    const vk = await new Admin(stack.gateway.url, ADMIN_TOKEN).mint("crash-run", "crash");
    // The SDK's own retries carry requests over the restart (they back off up to 8 s each).
    const client = new OpenAI({ apiKey: vk.key, baseURL: `${stack.gateway.url}/openai/v1`, maxRetries: 10, timeout: 30_000 });
    let next = 0;
    let answered = 0;
    const seen = { input: 0, output: 0 };
    const worker = async () => {
      for (let i = next++; i < TOTAL; i = next++) {
        const r = await client.chat.completions.create({ model: OPENAI_MODEL, max_tokens: 4 + (i % 9), messages: [{ role: "user", content: `crash run ${i} ${"w ".repeat(i % 13)}` }] });
        seen.input += r.usage!.prompt_tokens;
        seen.output += r.usage!.completion_tokens;
        answered++;
      }
    };
    const run = Promise.all(Array.from({ length: CONCURRENCY }, worker));

    // Park every request at the stand-in; once the limiters have every served answer's usage and
    // the ledger does not (yet), crash. Else (a write came between) let a few more through.
    for (let tries = 0; ; tries++) {
      await until("answers before the crash", () => answered >= BEFORE_KILL + tries * CONCURRENCY, 20_000);
      stack.standin.configure({ hold: true });
      await until("every request parked", () => stack.standin.stats().held === CONCURRENCY && stack.standin.stats().inFlight === CONCURRENCY, 10_000);
      const served = stack.standin.stats().usage;
      const end = Date.now() + 5_000;
      while (JSON.stringify(await received()) !== JSON.stringify(served) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      expect(await received()).toEqual(served);
      if ((await ledger(since)).input < served.input) break;
      expect(tries).toBeLessThan(3);
      stack.standin.configure({ hold: false });
    }
    await stack.gateway.kill();
    // The parked requests' connections died with workerd: none of them is answered or counted.
    await until("the parked requests' callers gone", () => stack.standin.stats().held === 0, 10_000);
    stack.standin.configure({ hold: false });
    await stack.gateway.restart();
    await run;

    const served = stack.standin.stats();
    expect(answered).toBe(TOTAL);
    expect(served.completed).toBe(TOTAL);
    expect(served.aborted).toBeGreaterThanOrEqual(CONCURRENCY); // the parked ones, never answered
    expect(seen).toEqual(served.usage);
    let got = await ledger(since);
    const end = Date.now() + 25_000;
    while (got.requests < TOTAL && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
      got = await ledger(since);
    }
    expect(got).toEqual({ requests: TOTAL, input: served.usage.input, output: served.usage.output });
  });
});
