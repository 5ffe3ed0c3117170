// `slotgate batch --gateway`: a tiny fake gateway that turns every item away once with the
// gateway's own queue_timeout 429, then proxies to the stand-in. The real gateway (wrangler dev)
// is wired by the e2e harness.
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import type { Standin } from "../../support/standin/index.ts";
import { chatLine, idCounts, inputOf, KEY, onCleanup, readOutput, runBatch, standin, tempDir, writeInput } from "./helpers.ts";

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  item: string;
  at: number;
  answer: "queue_timeout" | "proxied" | "provider_429";
}

/** Answers each item's first request with queue_timeout (retry-after: 1 s), then proxies it. */
async function fakeGateway(upstream: Standin, refuse: (item: string) => "provider_429" | null = () => null) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const item = /hello ([\w-]+)/.exec(raw)?.[1] ?? "?";
      const first = !seen.some((s) => s.item === item);
      const note = (answer: Seen["answer"]) => seen.push({ path: req.url ?? "", headers: req.headers, item, at: Date.now(), answer });
      if (first) {
        note("queue_timeout");
        res.writeHead(429, { "content-type": "application/json", "x-slotgate-error": "queue_timeout", "retry-after": "1" });
        res.end(JSON.stringify({ error: { type: "queue_timeout", message: "no slot became free before the request's deadline" } }));
        return;
      }
      if (refuse(item) === "provider_429") {
        note("provider_429");
        res.writeHead(429, { "content-type": "application/json", "x-request-id": "req_gw", "x-slotgate-attempts": "6" });
        res.end(JSON.stringify({ error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }));
        return;
      }
      note("proxied");
      const up = await fetch(`${upstream.url}${(req.url ?? "").replace(/^\/openai/, "")}`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: String(req.headers.authorization ?? "") },
        body: raw,
      });
      res.writeHead(up.status, { "content-type": "application/json", "x-request-id": up.headers.get("x-request-id") ?? "" });
      res.end(await up.text());
    });
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  onCleanup(() => new Promise<void>((ok) => { server.closeAllConnections(); server.close(() => ok()); }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

describe("batch, gateway mode", () => {
  test("a queue_timeout 429 is waited out by its retry-after and sent again; every item answered once", async () => {
    const s = await standin();
    const gw = await fakeGateway(s);
    const dir = tempDir();
    const input = writeInput(dir, inputOf(20));
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input, out, gateway: gw.url, concurrency: 20, env: { OPENAI_API_KEY: KEY, SLOTGATE_TOKEN: "gw-token" } });

    const lines = readOutput(out);
    const counts = idCounts(lines);
    expect(counts.size).toBe(20);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
    expect(lines.every((l) => l.error === null && l.response?.status_code === 200 && /^req_/.test(l.response.request_id ?? ""))).toBe(true);
    expect(summary).toMatchObject({ succeeded: 20, failed: 0, absorbed429: 20 });

    for (let i = 0; i < 20; i++) {
      const mine = gw.seen.filter((x) => x.item === `req-${i}`);
      expect(mine.map((x) => x.answer)).toEqual(["queue_timeout", "proxied"]);
      // retry-after: 1 was honoured (give or take timer slack).
      expect(mine[1]!.at - mine[0]!.at).toBeGreaterThanOrEqual(990);
    }
    for (const x of gw.seen) {
      expect(x.path).toBe("/openai/v1/chat/completions");
      expect(x.headers.authorization).toBe(`Bearer ${KEY}`);
      expect(x.headers["x-slotgate-token"]).toBe("gw-token");
      // A caller of its own in the low lane, so interactive calls on the key are not stuck behind the job.
      expect(x.headers["x-slotgate-caller"]).toBe("batch.requests.jsonl");
      expect(x.headers["x-slotgate-priority"]).toBe("low");
    }
    expect(s.stats()).toMatchObject({ attempts: 20, successes: 20 });
  });

  test("--caller and --priority replace the job's defaults", async () => {
    const s = await standin();
    const gw = await fakeGateway(s);
    const dir = tempDir();
    const input = writeInput(dir, inputOf(2), "nightly evals (v2).jsonl");
    await runBatch({ input, out: join(dir, "a.jsonl"), gateway: gw.url });
    expect(gw.seen.map((x) => x.headers["x-slotgate-caller"])).toContain("batch.nightly-evals--v2-.jsonl");
    await runBatch({ input, out: join(dir, "b.jsonl"), gateway: gw.url, caller: "ci/run-42", priority: "normal" });
    expect(gw.seen.at(-1)!.headers["x-slotgate-caller"]).toBe("ci/run-42");
    expect(gw.seen.at(-1)!.headers["x-slotgate-priority"]).toBe("normal");
    await expect(runBatch({ input, out: join(dir, "c.jsonl"), gateway: gw.url, caller: "no spaces" })).rejects.toThrow(/--caller/);
  });

  test("the provider's own 429 from the gateway is not resent: it is the gateway's final answer", async () => {
    const s = await standin();
    const gw = await fakeGateway(s, (item) => (item === "slow" ? "provider_429" : null));
    const dir = tempDir();
    const input = writeInput(dir, [chatLine("slow"), chatLine("fine")]);
    const out = join(dir, "results.jsonl");

    const summary = await runBatch({ input, out, gateway: gw.url });

    const byId = new Map(readOutput(out).map((l) => [l.custom_id, l]));
    expect(byId.get("fine")?.response?.status_code).toBe(200);
    const slow = byId.get("slow")!;
    expect(slow.response?.status_code).toBe(429);
    expect(slow.error?.code).toBe("rate_limit_exceeded");
    expect(gw.seen.filter((x) => x.item === "slow").map((x) => x.answer)).toEqual(["queue_timeout", "provider_429"]);
    // Recorded, and marked for --resume (a rate limit is not a final answer).
    expect(summary).toMatchObject({ succeeded: 1, failed: 1, retryable: 1, absorbed429: 2 });
  });

  test("an unreachable gateway: an error line after the attempts run out, which --resume runs again", async () => {
    const s = await standin();
    const dir = tempDir();
    const input = writeInput(dir, inputOf(3));
    const out = join(dir, "results.jsonl");
    const closed = "http://127.0.0.1:9"; // discard port: nothing listens

    const summary = await runBatch({ input, out, gateway: closed, retry: { maxAttempts: 2, baseBackoffMs: 10, maxBackoffMs: 20 } });
    expect(summary).toMatchObject({ failed: 3, retryable: 3, failedByReason: { upstream_unreachable: 3 } });
    expect(readOutput(out).every((l) => l.error?.code === "upstream_unreachable" && l.response === null)).toBe(true);

    const gw = await fakeGateway(s);
    const again = await runBatch({ input, out, gateway: gw.url, resume: true });
    expect(again).toMatchObject({ skipped: 0, succeeded: 3 });
    const lines = readOutput(out);
    expect(lines).toHaveLength(3);
    expect(lines.every((l) => l.error === null)).toBe(true);
  });
});
