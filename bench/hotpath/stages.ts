// `npx tsx bench/hotpath/stages.ts [runs]`: the Worker's own work per request, stage by stage, for a plain request
// (no virtual key, pools, cache or budget): the CPU a request costs beside its object call and its
// upstream fetch. Runs the request path's stage functions in Node on one representative chat
// completion, many times each, and prints microseconds per call. Node's costs are not workerd's,
// but the order and the shares are what a profile of the Worker shows (workerd's clock does not
// move during a request, so a per-stage timer inside it reads 0).
import { askedOf } from "../../src/proxy/asked.ts";
import { whoIsAsking } from "../../src/proxy/caller.ts";
import { answerInit } from "../../src/proxy/answer.ts";
import { upstreamHeaders } from "../../src/proxy/forward.ts";
import { readRequest } from "../../src/proxy/request.ts";
import { settingsOf, type Settings } from "../../src/proxy/settings.ts";
import { virtualKeyIn } from "../../src/pools/member.ts";
import { cachePlan } from "../../src/cache/directives.ts";
import { parseRateLimitHeaders } from "../../src/policy/headers.ts";
import { Meter } from "../../src/usage/meter.ts";
import type { Env } from "../../src/env.ts";

const ENV = { MAX_ATTEMPTS: "8", DEADLINE_MS: "120000", PROVIDERS: "{}", PRICES: "{}", CACHE: "off" } as unknown as Env;
const BODY = JSON.stringify({
  model: "gpt-4o-mini",
  max_tokens: 64,
  messages: [
    { role: "system", content: "You are a careful grader. Answer with one word." },
    { role: "user", content: "Question 17 of the eval set: is the following statement true? ".repeat(6) },
  ],
});
const HEADERS = {
  authorization: "Bearer sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGH",
  "content-type": "application/json",
  "user-agent": "OpenAI/JS 6.9.0",
  "x-stainless-lang": "js",
  "x-stainless-retry-count": "0",
  accept: "application/json",
};
const UPSTREAM = new Headers({
  "content-type": "application/json",
  "x-request-id": "req_0123456789abcdef",
  "openai-processing-ms": "312",
  "x-ratelimit-limit-requests": "500",
  "x-ratelimit-remaining-requests": "499",
  "x-ratelimit-reset-requests": "120ms",
  "x-ratelimit-limit-tokens": "200000",
  "x-ratelimit-remaining-tokens": "199850",
  "x-ratelimit-reset-tokens": "45ms",
});

const request = () => new Request("https://gw.example/openai/v1/chat/completions", { method: "POST", headers: HEADERS, body: BODY });

async function time(name: string, n: number, fn: () => unknown): Promise<[string, number]> {
  for (let i = 0; i < Math.min(n, 2_000); i++) await fn(); // warm
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await fn();
  return [name, ((performance.now() - t0) / n) * 1_000];
}

async function main() {
  // Run by tsx in Node; type-checked with the Worker's sources (tsconfig.json), where `process` is not declared.
  const argv = (globalThis as { process?: { argv: string[]; versions: { node: string } } }).process;
  const n = Number(argv?.argv[2] ?? 20_000);
  const s = settingsOf(ENV) as Settings;
  const asked = askedOf(request(), s, Date.now());
  if (asked instanceof Response) throw new Error("asked");
  const stages: [string, number][] = [];
  stages.push(await time("settings (vars, parsed once per isolate)", n, () => settingsOf(ENV)));
  stages.push(await time("asked (provider, URL, limit headers)", n, () => askedOf(request(), s, 0)));
  stages.push(await time("  of which: new Request (the runtime's)", n, () => request()));
  stages.push(await time("caller (x-slotgate-caller, priority)", n, () => whoIsAsking(asked.headers, undefined)));
  stages.push(await time("virtual key? (credential headers)", n, () => virtualKeyIn(asked.headers, asked.incoming)));
  stages.push(await time("body read and described (JSON, key hash, cost)", n, () => readRequest(request(), askedOf(request(), s, 0) as typeof asked, s.gw.maxBodyBytes)));
  stages.push(await time("upstream headers", n, () => upstreamHeaders(asked.headers)));
  stages.push(await time("meter", n, () => new Meter({ provider: "openai", model: "gpt-4o-mini", prices: s.prices, strip: false })));
  stages.push(await time("cache plan (off)", n, () => cachePlan((h) => asked.headers.get(h), true, s.cache)));
  stages.push(await time("answer: rate-limit headers read", n, () => parseRateLimitHeaders(UPSTREAM, Date.now())));
  stages.push(await time("answer: caller's headers", n, () => answerInit(new Response("{}", { headers: UPSTREAM }))));
  const total = stages.filter(([name]) => !name.startsWith("  ")).reduce((a, [, us]) => a + us, 0);
  console.log(`| stage | µs a request (Node ${argv?.versions.node}, ${n} runs) |\n| --- | --- |`);
  for (const [name, us] of stages) console.log(`| ${name} | ${us.toFixed(1)} |`);
  console.log(`| all of the above | ${total.toFixed(1)} |`);
}

await main();
