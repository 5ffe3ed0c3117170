// The Worker's own work per request, stage by stage, inside workerd: the CPU a plain request (no
// virtual key, pools, cache or budget) costs beside its object call and its upstream fetch. Each
// stage of the request path runs many times on one representative chat completion; then whole
// requests through the Worker (its real Limiter object, a provider that answers at once) give
// the wall time of everything together. Prints a markdown table; asserts only that the stages ran.
//   npx vitest run --config bench/vitest.workerd.config.ts bench/workerd/hotpath.run.ts
import { env, exports } from "cloudflare:workers";
import { expect, it, vi } from "vitest";
import { cachePlan } from "../../src/cache/directives";
import type { Env } from "../../src/env";
import { virtualKeyIn } from "../../src/pools/member";
import { parseRateLimitHeaders } from "../../src/policy/headers";
import { answerInit } from "../../src/proxy/answer";
import { askedOf } from "../../src/proxy/asked";
import { whoIsAsking } from "../../src/proxy/caller";
import { upstreamHeaders } from "../../src/proxy/forward";
import { describe } from "../../src/proxy/request";
import { type Settings, settingsOf } from "../../src/proxy/settings";
import { Meter } from "../../src/usage/meter";

const RUNS = Number(globalThis.process?.env?.HOTPATH_RUNS ?? 5_000);
const BODY = JSON.stringify({
  model: "gpt-4o-mini",
  max_tokens: 64,
  messages: [
    { role: "system", content: "You are a careful grader. Answer with one word." },
    { role: "user", content: "Question 17 of the eval set: is the following statement true? ".repeat(6) },
  ],
});
const BYTES = new TextEncoder().encode(BODY);
const HEADERS = {
  authorization: "Bearer sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH",
  "content-type": "application/json",
  "user-agent": "OpenAI/JS 6.9.0",
  "x-stainless-lang": "js",
  accept: "application/json",
};
const UPSTREAM = {
  "content-type": "application/json",
  "x-request-id": "req_0123456789abcdef",
  "openai-processing-ms": "312",
  "x-ratelimit-limit-requests": "500000",
  "x-ratelimit-remaining-requests": "499999",
  "x-ratelimit-reset-requests": "1ms",
  "x-ratelimit-limit-tokens": "200000000",
  "x-ratelimit-remaining-tokens": "199999000",
  "x-ratelimit-reset-tokens": "1ms",
};
const ANSWER = JSON.stringify({ id: "chatcmpl-1", object: "chat.completion", model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "True" }, finish_reason: "stop" }], usage: { prompt_tokens: 120, completion_tokens: 1, total_tokens: 121 } });

const request = () => new Request("https://gw.example/openai/v1/chat/completions", { method: "POST", headers: HEADERS, body: BODY });

async function us(n: number, fn: () => unknown): Promise<number> {
  for (let i = 0; i < Math.min(n, 500); i++) await fn();
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return ((performance.now() - t0) / n) * 1_000;
}

it("the request path's stages, and whole requests", async () => {
  const e = env as unknown as Env;
  const s = settingsOf(e) as Settings;
  const asked = askedOf(request(), s, Date.now());
  if (asked instanceof Response) throw new Error("asked");
  const upstream = new Headers(UPSTREAM);
  const rows: [string, number][] = [
    ["new Request (the runtime's, for scale)", await us(RUNS, () => request())],
    ["settings: the vars, parsed once per isolate", await us(RUNS, () => settingsOf(e))],
    ["asked: provider, upstream URL, limit headers", await us(RUNS, () => askedOf(asked.headers === null ? request() : request(), s, 0))],
    ["caller: x-slotgate-caller, priority", await us(RUNS, () => whoIsAsking(asked.headers, undefined))],
    ["virtual key? the credential headers", await us(RUNS, () => virtualKeyIn(asked.headers, asked.incoming))],
    ["described: JSON, the key's hash, cost, stream", await us(RUNS, () => describe(asked.provider, asked.headers, asked.incoming, asked.rest, BYTES, null))],
    ["upstream headers", await us(RUNS, () => upstreamHeaders(asked.headers))],
    ["meter", await us(RUNS, () => new Meter({ provider: "openai", model: "gpt-4o-mini", prices: s.prices, strip: false }))],
    ["cache plan (off)", await us(RUNS, () => cachePlan((h) => asked.headers.get(h), true, s.cache))],
    ["answer: the rate-limit headers read", await us(RUNS, () => parseRateLimitHeaders(upstream, Date.now()))],
    ["answer: the caller's headers", await us(RUNS, () => answerInit(new Response(ANSWER, { headers: upstream })))],
    ["answer: its usage read", await us(RUNS, () => new Meter({ provider: "openai", model: "gpt-4o-mini", prices: s.prices, strip: false }).plain(new TextEncoder().encode(ANSWER)))],
  ];
  vi.spyOn(globalThis, "fetch").mockImplementation(async () => new Response(ANSWER, { headers: UPSTREAM }));
  const whole = await us(Math.min(RUNS, 1_000), async () => {
    const res = await exports.default.fetch(request());
    await res.arrayBuffer();
  });
  vi.restoreAllMocks();
  const stages = rows.slice(1).reduce((a, [, v]) => a + v, 0);
  console.log(
    [`| stage (workerd, ${RUNS} runs each) | µs a request |`, "| --- | --- |", ...rows.map(([n, v]) => `| ${n} | ${v.toFixed(1)} |`),
      `| the stages above, in all | ${stages.toFixed(1)} |`,
      `| a whole request through the Worker, its Limiter and a provider that answers at once, 1 in flight | ${whole.toFixed(0)} |`].join("\n"),
  );
  expect(stages).toBeGreaterThan(0);
});
