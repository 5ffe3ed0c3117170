// The Worker's own work per request, stage by stage, inside workerd: the CPU a plain request (no
// virtual key, pools, cache or budget) costs beside its object call and its upstream fetch. Each
// stage of the request path runs many times on one representative chat completion; then whole
// requests through the Worker (its real Limiter object, a provider that answers at once) give
// the wall time of everything together. Prints a markdown table; asserts only that the stages ran.
//   npx vitest run --config bench/vitest.workerd.config.ts bench/workerd/hotpath.run.ts
import { env, exports } from "cloudflare:workers";
import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { expect, it, vi } from "vitest";
import type { Limiter } from "../../src/limiter/object";
import type { SettleRequest } from "../../src/limiter/types";
import { cachePlan } from "../../src/cache/directives";
import type { Env } from "../../src/env";
import app from "../../src/index";
import { virtualKeyIn } from "../../src/pools/member";
import { parseRateLimitHeaders } from "../../src/policy/limits";
import { DIALECTS } from "../../src/providers/dialects";
import { answerInit } from "../../src/proxy/answer";
import { askedOf } from "../../src/proxy/asked";
import { whoIsAsking } from "../../src/proxy/caller";
import { upstreamHeaders } from "../../src/proxy/forward";
import { describe } from "../../src/proxy/request";
import { type Settings, settingsOf } from "../../src/proxy/settings";
import { Meter } from "../../src/usage/meter";
import { ANSWER, BODY, BYTES, UPSTREAM } from "./sample";

const RUNS = Number(globalThis.process?.env?.HOTPATH_RUNS ?? 5_000);
const HEADERS = {
  authorization: "Bearer sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH",
  "content-type": "application/json",
  "user-agent": "OpenAI/JS 6.9.0",
  "x-stainless-lang": "js",
  accept: "application/json",
};

const request = () => new Request("https://gw.example/openai/v1/chat/completions", { method: "POST", headers: HEADERS, body: BODY });

/** The rows before the object's own (the Worker's stages, after the runtime's Request for scale). */
const WORKER_STAGES = 11;
const USAGE = { model: "gpt-4o-mini", caller: "c", tokens: { input: 120, output: 1, cached: 0, cacheWrite: 0 }, costUsd: 0.00002 };
const SETTLE: SettleRequest = { cls: "success", status: 200, info: { retryAfterMs: null, requests: null, tokens: null }, latencyMs: 300, attempt: 1, final: true, release: true, usage: USAGE };

/** The key's object: its own work for an acquire and for a settle with usage (inside it, no RPC), and one call's round trip. */
async function objectSide(): Promise<[string, number][]> {
  const meta = { key: "openai:hotpath:00000000000000ef", provider: "openai", model: "hotpath" };
  const stub = env.LIMITER.get(env.LIMITER.idFromName(meta.key));
  await stub.configure({ maxConcurrency: 100_000, limit: 100_000 });
  const inside = await runInDurableObject(stub, async (obj: Limiter) => {
    const n = Math.min(RUNS, 2_000);
    let acquire = 0;
    let settle = 0;
    for (let i = 0; i < n; i++) {
      let t = performance.now();
      await obj.exchange(meta, [{ t: "acquire", req: { leaseId: `in${i}`, cost: 121, retry: false, waitMs: 1_000 } }]);
      acquire += performance.now() - t;
      t = performance.now();
      await obj.exchange(meta, [{ t: "settle", id: `in${i}`, outcome: SETTLE }]);
      settle += performance.now() - t;
    }
    return { acquire: (acquire / n) * 1_000, settle: (settle / n) * 1_000 };
  });
  let i = 0;
  const call = await us(Math.min(RUNS, 1_000), () => stub.exchange(meta, [{ t: "acquire", req: { leaseId: `rt${i++}`, cost: 121, retry: false, waitMs: 1_000 } }, { t: "release", id: `rt${i - 2}` }]));
  return [
    ["object: an acquire, its own work (no RPC)", inside.acquire],
    ["object: a settle with usage (the outbox row), its own work", inside.settle],
    ["object: one call's round trip (an acquire and a release, by RPC)", call],
  ];
}

/**
 * Whole requests through the app with tracing off and on (OTLP to a receiver that answers at once,
 * its batches leaving every 50 ms as they would every 5 s), alternated in slices so drift hits both
 * alike: µs to the answer read, the export's work inside the same isolate included.
 */
async function tracing(n: number): Promise<[string, number][]> {
  const off = { ...env } as unknown as Env;
  const on = { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318", OTEL_BSP_SCHEDULE_DELAY: "50" } as unknown as Env;
  let exported = 0;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input) => {
    if (String(input instanceof Request ? input.url : input).startsWith("http://127.0.0.1:4318")) {
      exported++;
      return new Response("{}");
    }
    return new Response(ANSWER, { headers: UPSTREAM });
  });
  const time = { off: 0, on: 0 };
  const pending: Promise<void>[] = [];
  const slice = 100;
  for (let done = -200; done < n; done += slice)
    for (const [name, e] of [["off", off], ["on", on]] as const) {
      const t0 = performance.now();
      for (let i = 0; i < slice; i++) {
        const ctx = createExecutionContext();
        const res = await app.fetch(request(), e, ctx);
        await res.arrayBuffer();
        pending.push(waitOnExecutionContext(ctx));
      }
      // The first 200 warm both up.
      if (done >= 0) time[name] += performance.now() - t0;
    }
  await Promise.all(pending);
  vi.restoreAllMocks();
  expect(exported).toBeGreaterThan(0);
  const [a, b] = [(time.off / n) * 1_000, (time.on / n) * 1_000];
  return [
    ["a whole request, tracing off (no OTEL_* set), alternated with the next", a],
    ["a whole request, tracing on (every request sampled, OTLP/HTTP JSON to a receiver), alternated", b],
    ["tracing's added cost a request", b - a],
  ];
}

async function us(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(n, 500); i++) await fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) / n) * 1_000;
}

it("the request path's stages, and whole requests", async () => {
  const e = env as unknown as Env;
  const s = settingsOf(e) as Settings;
  const one = request();
  const asked = askedOf(one, new URL(one.url), s, Date.now());
  if (asked instanceof Response) throw new Error("asked");
  const upstream = new Headers(UPSTREAM);
  const rows: [string, number][] = [
    ["new Request (the runtime's, for scale)", await us(RUNS, () => request())],
    ["settings: the vars, parsed once per isolate", await us(RUNS, () => settingsOf(e))],
    ["asked: provider, upstream URL, limit headers", await us(RUNS, () => askedOf(one, new URL(one.url), s, 0))],
    ["caller: x-slotgate-caller, priority", await us(RUNS, () => whoIsAsking(asked.headers, undefined))],
    ["virtual key? the credential headers", await us(RUNS, () => virtualKeyIn(asked.headers, asked.incoming))],
    ["described: JSON, the key's hash, cost, stream", await us(RUNS, () => describe(asked.provider, asked.headers, asked.incoming, asked.rest, BYTES, JSON.parse(new TextDecoder().decode(BYTES)), null))],
    ["upstream headers", await us(RUNS, () => upstreamHeaders(asked.headers))],
    ["meter", await us(RUNS, () => new Meter({ provider: "openai", model: "gpt-4o-mini", prices: s.prices, strip: false }))],
    ["cache plan (off)", await us(RUNS, () => cachePlan((h) => asked.headers.get(h), true, s.cache))],
    ["answer: the rate-limit headers read", await us(RUNS, () => parseRateLimitHeaders(upstream, Date.now(), DIALECTS.openai))],
    ["answer: the caller's headers", await us(RUNS, () => answerInit(new Response(ANSWER, { headers: upstream })))],
    ["answer: its usage read", await us(RUNS, () => new Meter({ provider: "openai", model: "gpt-4o-mini", prices: s.prices, strip: false }).plain(new TextEncoder().encode(ANSWER)))],
  ];
  rows.push(...(await objectSide()));
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(ANSWER, { headers: UPSTREAM }));
  const whole = await us(Math.min(RUNS, 1_000), async () => {
    const res = await exports.default.fetch(request());
    await res.arrayBuffer();
  });
  vi.restoreAllMocks();
  const traced = await tracing(Math.min(RUNS, 1_000));
  const stages = rows.slice(1, WORKER_STAGES + 1).reduce((a, [, v]) => a + v, 0);
  console.log(
    [`| stage (workerd, ${RUNS} runs each) | µs a request |`, "| --- | --- |", ...rows.map(([n, v]) => `| ${n} | ${v.toFixed(1)} |`),
      `| the Worker's stages, in all | ${stages.toFixed(1)} |`,
      `| a whole request through the Worker, its Limiter and a provider that answers at once, 1 in flight | ${whole.toFixed(0)} |`,
      ...traced.map(([n, v]) => `| ${n} | ${v.toFixed(0)} |`)].join("\n"),
  );
  expect(stages).toBeGreaterThan(0);
});
