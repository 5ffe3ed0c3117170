// `slotgate batch --gateway` against real `wrangler dev` and the stand-in provider: the gateway
// does the limiting, the command keeps N requests open and loses nothing.
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Gateway, startGateway } from "../support/gateway.ts";
import { type Standin, startStandin } from "../support/standin/index.ts";
import { chatLine, idCounts, inputOf, readOutput, runBatch, tempDir, writeInput } from "../node/batch/helpers.ts";

let standin: Standin;
let gateway: Gateway;
beforeAll(async () => {
  // 3,000 RPM with a small burst: the bucket runs dry early and the gateway must pace.
  standin = await startStandin({ rpm: 3_000, tpm: 0, burst: 0.05, latencyMs: 20, quotaExhaustedKeys: ["sk-batch-broke"] });
  gateway = await startGateway({ providers: { openai: { baseUrl: standin.url } } });
});
afterAll(async () => {
  await gateway?.close();
  await standin?.close();
});

const env = (key: string) => ({ OPENAI_API_KEY: key });

it("500 lines through the gateway against an RPM limit: every custom_id answered exactly once", async () => {
  const dir = tempDir();
  const input = writeInput(dir, inputOf(500));
  const out = `${dir}/results.jsonl`;
  standin.resetStats();
  const summary = await runBatch({ input, out, gateway: gateway.url, concurrency: 32, env: env("sk-batch-500") });
  const lines = readOutput(out);
  const counts = idCounts(lines);
  expect(counts.size).toBe(500);
  expect([...counts.values()].every((n) => n === 1)).toBe(true);
  expect(lines.every((l) => l.response?.status_code === 200 && l.error === null)).toBe(true);
  expect(summary.succeeded).toBe(500);
  const st = standin.stats();
  expect(st.rateLimited).toBeLessThanOrEqual(25); // the gateway paced the key: at most 5% of 500
  console.log(`[batch:gateway] 500 lines, upstream attempts ${st.attempts}, upstream 429s ${st.rateLimited}`);
});

it("a run stopped half-way and resumed ends with every custom_id exactly once", async () => {
  const dir = tempDir();
  const input = writeInput(dir, inputOf(300, "resume"));
  const out = `${dir}/results.jsonl`;
  const stop = new AbortController();
  const abort = new AbortController();
  const first = runBatch({ input, out, gateway: gateway.url, concurrency: 16, env: env("sk-batch-resume"), stop: stop.signal, abort: abort.signal });
  while (readOutput(out).length < 100) await new Promise((r) => setTimeout(r, 20));
  stop.abort();
  abort.abort(); // cut what is in flight too: those lines are recorded as not done
  await first;
  const partial = idCounts(readOutput(out));
  expect(partial.size).toBeLessThan(300);
  await runBatch({ input, out, gateway: gateway.url, concurrency: 16, env: env("sk-batch-resume"), resume: true });
  const lines = readOutput(out);
  const counts = idCounts(lines);
  expect(counts.size).toBe(300);
  expect([...counts.values()].every((n) => n === 1)).toBe(true);
  expect(lines.every((l) => l.response?.status_code === 200)).toBe(true);
});

it("bad lines are recorded with their line numbers, and the run goes on", async () => {
  const dir = tempDir();
  const input = writeInput(dir, [chatLine("ok-1"), "{not json", { method: "POST", url: "/v1/chat/completions", body: {} }, chatLine("odd", { url: "/v1/unknown" }), chatLine("ok-2")]);
  const out = `${dir}/results.jsonl`;
  await runBatch({ input, out, gateway: gateway.url, env: env("sk-batch-bad") });
  const byId = new Map(readOutput(out).map((l) => [l.custom_id, l]));
  expect(byId.get("ok-1")?.response?.status_code).toBe(200);
  expect(byId.get("ok-2")?.response?.status_code).toBe(200);
  expect(byId.get("line-2")?.error?.message).toMatch(/^line 2:/);
  expect(byId.get("line-3")?.error?.message).toMatch(/^line 3:/);
  expect(byId.get("odd")?.error?.message).toMatch(/^line 4:/);
});

it("insufficient_quota is recorded as an error line after exactly one upstream attempt", async () => {
  const dir = tempDir();
  const input = writeInput(dir, [chatLine("broke")]);
  const out = `${dir}/results.jsonl`;
  standin.resetStats();
  await runBatch({ input, out, gateway: gateway.url, env: env("sk-batch-broke") });
  const [line] = readOutput(out);
  expect(line?.custom_id).toBe("broke");
  expect(line?.error?.code).toBe("insufficient_quota");
  expect(standin.stats().perCredential["sk-batch-broke"]).toBe(1);
});
