// Pool row 4: revocation. A member with one slot (PUT /admin/keys/:key/config) held by another
// virtual key's slow request; per round a new key's request queues behind it, the key is deleted,
// and a new request is sent with it as soon as the DELETE has answered. Measured from the DELETE's
// start to each 401, with the openai SDK. Under wrangler dev there is one isolate: the 1 s a
// remote isolate may trust an earlier lookup is not exercised here.
import OpenAI from "openai";
import { baseURL, configure, type Ctx, MODEL, PROMPT } from "../context.ts";
import { goal, ms, type Row, spread } from "../stats.ts";
import { admin, MEMBERS, mintFor } from "./config.ts";

const HOLD_MS = 60_000;

const client = (ctx: Ctx, apiKey: string) => new OpenAI({ apiKey, baseURL: baseURL(ctx, "gateway"), maxRetries: 0, timeout: 120_000 });
const body = { model: MODEL, max_tokens: 16, messages: [{ role: "user" as const, content: PROMPT }] };

/** Resolves with the status the call ended with and when (performance.now()). */
function ask(c: OpenAI, signal?: AbortSignal): Promise<{ status: number; at: number }> {
  return c.chat.completions.create(body, { signal }).then(
    () => ({ status: 200, at: performance.now() }),
    (e: unknown) => ({ status: e instanceof OpenAI.APIError ? (e.status ?? 0) : 0, at: performance.now() }),
  );
}

async function until(what: string, cond: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`bench pools-revoke: timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function runRevoke(ctx: Ctx) {
  const rounds = ctx.opts.quick ? 2 : 8;
  const [solo] = MEMBERS.solo;
  const a = admin(ctx);
  configure(ctx, {});
  const holder = client(ctx, (await mintFor(ctx, "solo")).key);
  await holder.chat.completions.create(body);
  // The member's own limiter key (an answer names the virtual key's), once its limiter has reported it.
  let key = "";
  await until("the member's key listed", async () => (key = (await a.member("bench-solo", solo.name)).keys[0] ?? "") !== "");
  const cap = await a.fetch("PUT", `/admin/keys/${encodeURIComponent(key)}/config`, { maxConcurrency: 1 });
  if (!cap.ok) throw new Error(`bench pools-revoke: PUT config ${cap.status} ${await cap.text()}`);
  ctx.standin.configure({ latencyMs: HOLD_MS });
  ctx.standin.resetStats();
  const stop = new AbortController();
  const held = ask(holder, stop.signal);
  const queuedMs: number[] = [];
  const freshMs: number[] = [];
  const statuses: number[] = [];
  try {
    await until("the holder at the provider", async () => (ctx.standin.stats().perCredential[solo.key] ?? 0) === 1);
    for (let r = 0; r < rounds; r++) {
      const vk = await mintFor(ctx, "solo");
      const c = client(ctx, vk.key);
      const queued = ask(c);
      await until("a queued request", async () => (await a.member("bench-solo", solo.name)).queued >= 1);
      const t0 = performance.now();
      const del = await a.revoke(vk.name);
      if (del.status !== 204) throw new Error(`bench pools-revoke: DELETE ${del.status}`);
      const fresh = await ask(c);
      const q = await queued;
      statuses.push(q.status, fresh.status);
      queuedMs.push(q.at - t0);
      freshMs.push(fresh.at - t0);
    }
  } finally {
    stop.abort();
    await held;
    ctx.standin.configure({ latencyMs: 0 });
  }
  const reached = (ctx.standin.stats().perCredential[solo.key] ?? 0) - 1;
  const all401 = statuses.every((s) => s === 401);
  const worst = Math.max(...queuedMs, ...freshMs);
  const text = (xs: number[]) => `${ms(spread(xs).p50)} / ${ms(Math.max(...xs))}`;
  const scenario = `pools: revocation, ${rounds} rounds (a request queued behind another key's, then a new one), one isolate (wrangler dev)`;
  const rows: Row[] = [
    goal({ scenario, metric: "DELETE to 401, the queued request: p50 / max", baseline: "raw key: cannot be revoked", value: text(queuedMs) }, "<= 2 s", all401 && Math.max(...queuedMs) <= 2_000),
    goal({ scenario, metric: "DELETE to 401, a new request: p50 / max", baseline: "", value: text(freshMs) }, "<= 2 s", all401 && Math.max(...freshMs) <= 2_000),
    goal({ scenario, metric: "refused requests that reached the provider; statuses", baseline: "", value: `${reached}; ${statuses.filter((s) => s === 401).length}/${statuses.length} 401` }, "0; all 401", reached === 0 && all401),
  ];
  return { rows, data: { rounds, queuedMs, freshMs, statuses, reached, worstMs: worst } };
}
