// Attack 12 (issue 39): one request larger than a key's tokens-per-minute limit, sent on the same key
// as a teammate's (attacks.test.ts puts trap and victim on different models, so it could not see
// this). Through `wrangler dev`, with the official openai SDK, against a stand-in that answers such
// a request as OpenAI does (its "Request too large" 429: standin/openai.ts). Before, the trap waited
// at the head of the key's queue for its window to fill (up to a minute), holding every caller of
// the key behind it, and the provider's refusal then cut the key's limit for everyone. And what is
// not too large though its bytes are: a picture sent inline, as OpenAI and Anthropic count it; and
// what is larger than its bytes: a picture named by URL.
import { randomBytes } from "node:crypto";
import OpenAI from "openai";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { Admin, type Pools, poolVars } from "../support/pools.ts";
import { ADMIN_TOKEN, ANTHROPIC_MODEL, anthropicVia, credential, limiterState, OPENAI_MODEL, openaiVia, rejection, useStack } from "./setup.ts";

const secret = (label: string) => `sk-too-large-${label}-${randomBytes(8).toString("hex")}`;
const SECRETS = { ONE: secret("one"), SMALL: secret("small"), BIG: secret("big") };
/** Raw keys for the pictures' cases: OpenAI's tier-1 gpt-4o TPM, and Anthropic's tier-1 ITPM and OTPM. */
const VISION = { OPENAI: secret("vision-openai"), ANTHROPIC: secret("vision-anthropic"), BY_URL: secret("vision-url") };
/** A raw key for `n` answers a request: 600,000 tokens a minute in a bucket of 10,000 (a second's). */
const SAMPLED = secret("sampled");
const POOLS: Pools = {
  // Trap and victim on one member, one model: one key.
  one: { provider: "openai", members: [{ name: "one", secret: "ONE" }] },
  // A member of 20,000 tokens a minute and one of 200,000 (the stand-in's default).
  split: { provider: "openai", members: [{ name: "small", secret: "SMALL" }, { name: "big", secret: "BIG" }] },
};

const stack = useStack({
  admin: true,
  standin: {
    latencyMs: 50, echo: true,
    keyLimits: { [SECRETS.SMALL]: { tpm: 20_000 }, [VISION.OPENAI]: { tpm: 30_000 }, [VISION.ANTHROPIC]: { rpm: 50, tpm: 0, itpm: 30_000, otpm: 8_000 }, [VISION.BY_URL]: { tpm: 30_000 }, [SAMPLED]: { tpm: 600_000, burst: 1 / 60 } },
  },
  vars: { ...poolVars(POOLS, SECRETS), DEADLINE_MS: "90000" },
});

const admin = () => new Admin(stack.gateway.url, ADMIN_TOKEN);
const holderOf = async (pool: string) => openaiVia(stack, (await admin().mint(`too-large-${pool}-${randomBytes(4).toString("hex")}`, pool)).key);
const ask = (client: OpenAI, text: string, maxTokens = 16) =>
  client.chat.completions.create({ model: OPENAI_MODEL, max_tokens: maxTokens, messages: [{ role: "user", content: text }] }).withResponse();
const refusal = async (p: PromiseLike<unknown>) => (await rejection(p)) as InstanceType<typeof OpenAI.APIError>;
const sent = (apiKey: string) => stack.standin.stats().log.filter((a) => a.credential === apiKey).length;

beforeEach(() => stack.standin.resetStats());

describe("attack 12: one request too large for a key", () => {
  it("on a key a teammate uses, behind a window half drawn: refused at once (413, nothing sent); the teammate is not held behind it and the key's limit is not cut", async () => {
    const holder = await holderOf("one");
    const victim = await holderOf("one");
    // The key learns its window from an answer's headers; then the holder draws 150,000 of its 200,000.
    await ask(victim, "warm");
    await ask(holder, "a large one that fits", 150_000);
    const key = (await admin().member("one", "one")).keys.find((k) => k.includes(OPENAI_MODEL))!;
    const before = await limiterState(stack, key);
    const attempts = sent(SECRETS.ONE);
    // The trap first, then the victim's requests: before, the trap waited ~45 s for 150,000 tokens of refill, and they behind it.
    const trap = refusal(ask(holder, "take the key", 1_000_000));
    const served = await Promise.all(Array.from({ length: 6 }, (_, i) => ask(victim, `victim ${i}`)));
    const t = await trap;
    expect(t.status).toBe(413);
    expect(t.message).toMatch(/more than any member of pool one takes in one request/);
    expect(served.map((r) => r.data.choices[0]?.message.content)).toEqual(Array.from({ length: 6 }, (_, i) => expect.stringContaining(`victim ${i}`)));
    // Each waited for no slot: a stalled head would show the ~45 s refill here.
    for (const r of served) expect(Number(r.response.headers.get("x-slotgate-queue-ms"))).toBeLessThan(5_000);
    expect(sent(SECRETS.ONE)).toBe(attempts + 6); // the trap never reached the provider
    const after = await limiterState(stack, key);
    expect(after.concurrency.limit).toBeGreaterThanOrEqual(before.concurrency.limit);
    expect(after.history.filter((h) => h.reason === "rate_limit")).toEqual([]);
    expect(after.cooldownUntil).toBeNull();
  });

  it("on a key whose window is not known yet: the provider's own 429 comes back once, as it is, with no retry, no cut and the gate open; the next is refused before it is sent", async () => {
    const apiKey = credential("too-large");
    const own = openaiVia(stack, apiKey);
    const first = await refusal(ask(own, "fresh key", 1_000_000));
    expect(first.status).toBe(429);
    expect(first.message).toMatch(/Request too large for gpt-4o-mini/);
    expect(first.headers?.get("x-slotgate-attempts")).toBe("1");
    const key = first.headers!.get("x-slotgate-key")!;
    // A refusal proves nothing: only an answer does, then the admin view lists the key (its report goes after the answer).
    const ok = await ask(own, "after it");
    expect(ok.response.status).toBe(200);
    const listed = () => fetch(`${stack.gateway.url}/admin/keys/${encodeURIComponent(key)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }).then((r) => r.status);
    await vi.waitFor(async () => expect(await listed()).toBe(200), { timeout: 10_000, interval: 100 });
    const state = await limiterState(stack, key);
    expect(state.history.filter((h) => h.reason === "rate_limit")).toEqual([]);
    expect(state.cooldownUntil).toBeNull();
    expect(state.metrics.rateLimitHits).toBe(0);
    const again = await refusal(ask(own, "again", 1_000_000));
    expect(again.status).toBe(413);
    expect(again.message).toMatch(/estimated \d+ tokens are more than the key's limit of 200000 tokens per minute/);
    expect(sent(apiKey)).toBe(2);
  });

  it("in a pool, a request too large for one member goes to the other; too large for both is refused, nothing sent", async () => {
    const holder = await holderOf("split");
    // Until both members have answered once (each limiter learns its window): best of two picks either.
    for (let i = 0; i < 40 && !(sent(SECRETS.SMALL) > 0 && sent(SECRETS.BIG) > 0); i++) await ask(holder, `warm ${i}`);
    expect([sent(SECRETS.SMALL) > 0, sent(SECRETS.BIG) > 0]).toEqual([true, true]);
    stack.standin.resetStats();
    for (let i = 0; i < 3; i++) expect((await ask(holder, `needs the big one ${i}`, 50_000)).response.status).toBe(200);
    expect([sent(SECRETS.SMALL), sent(SECRETS.BIG)]).toEqual([0, 3]);
    const both = await refusal(ask(holder, "too large for both", 1_000_000));
    expect(both.status).toBe(413);
    expect(both.headers?.get("x-slotgate-error")).toBe("request_too_large");
    expect([sent(SECRETS.SMALL), sent(SECRETS.BIG)]).toEqual([0, 3]);
  });
});

describe("a picture or a document sent inline is not a large request", () => {
  // A 300 KB picture as base64: about 75,000 tokens at a token per 4 bytes; a provider counts a few
  // hundred to 1,600 for it (src/policy/media.ts), the stand-in 765 (OpenAI) and 1,398 (Anthropic).
  const picture = randomBytes(225_000).toString("base64");

  it("OpenAI, a told TPM of 30,000: a question about it is answered (before: 413 request_too_large, nothing sent)", async () => {
    const client = openaiVia(stack, VISION.OPENAI);
    await ask(client, "learn the window");
    for (const detail of ["high", "low"] as const) {
      const r = await client.chat.completions.create({
        model: OPENAI_MODEL, max_tokens: 16,
        messages: [{ role: "user", content: [{ type: "text", text: "what is in it?" }, { type: "image_url", image_url: { url: `data:image/png;base64,${picture}`, detail } }] }],
      }).withResponse();
      expect(r.response.status).toBe(200);
      expect(r.data.usage?.prompt_tokens).toBeLessThan(1_000);
    }
    expect(sent(VISION.OPENAI)).toBe(3);
  });

  it("OpenAI, the same key: a PDF sent inline, priced by its bytes (a provider counts its pages), goes once the window is full; the provider decides (before: 413)", async () => {
    const client = openaiVia(stack, VISION.OPENAI);
    await ask(client, "the window told");
    const r = await client.chat.completions.create({
      model: OPENAI_MODEL, max_tokens: 16,
      messages: [{ role: "user", content: [{ type: "text", text: "summarise it" }, { type: "file", file: { filename: "report.pdf", file_data: `data:application/pdf;base64,${picture}` } }] }],
    }).withResponse();
    expect(r.response.status).toBe(200);
    expect(r.response.headers.get("x-slotgate-attempts")).toBe("1");
  });

  it("Anthropic, an ITPM of 30,000: four questions about it at once wait for no refill (before: each after the first waited for the window to be full)", async () => {
    const client = anthropicVia(stack, VISION.ANTHROPIC);
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) =>
      client.messages.create({
        model: ANTHROPIC_MODEL, max_tokens: 16,
        messages: [{ role: "user", content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: picture } }, { type: "text", text: `what is in it? (${i})` }] }],
      }).withResponse()));
    expect(answers.map((r) => r.response.status)).toEqual([200, 200, 200, 200]);
    // Charged 75,000 each, more than the window holds, each went only when the window was full again:
    // 2.1, 4.1 and 6.1 s in the queue for the three after the first (the tree before); the four fit it at once now.
    const queued = answers.map((r) => Number(r.response.headers.get("x-slotgate-queue-ms")));
    expect(queued.reduce((a, b) => a + b), `ms in the queue: ${queued.join(", ")}`).toBeLessThan(3_000);
    expect(stack.standin.stats().byCredential[VISION.ANTHROPIC]?.rateLimited ?? 0).toBe(0);
  });
});


describe("a picture named by URL is charged as a picture", () => {
  it("OpenAI, a told TPM of 30,000: eleven questions about four pictures each at once, none refused upstream (before: each charged its few hundred bytes, all sent at once, 6 attempts refused)", async () => {
    const client = openaiVia(stack, VISION.BY_URL);
    await ask(client, "learn the window");
    // The stand-in counts each picture 765 (what OpenAI counts a 1024 x 1024 one): about 3,100 tokens
    // a request, 34,000 for the eleven; the gateway charged each about 150 before, so the window held
    // all of them, and the provider refused what passed its 30,000 (6 attempts, retried). Now 800 a
    // picture (the OpenAI row's imageTokens); at the most any provider counts, 1,600, the same run
    // took 15.7 s where this takes about 9 (what the window's refill allows).
    const pictures = (i: number) => Array.from({ length: 4 }, (_, j) => ({ type: "image_url" as const, image_url: { url: `https://example.com/eval/${i}-${j}.png` } }));
    const answers = await Promise.all(Array.from({ length: 11 }, (_, i) =>
      client.chat.completions.create({
        model: OPENAI_MODEL, max_tokens: 16,
        messages: [{ role: "user", content: [{ type: "text", text: `what differs between them? (${i})` }, ...pictures(i)] }],
      }).withResponse()));
    expect(answers.map((r) => r.response.status)).toEqual(Array(11).fill(200));
    expect(Math.min(...answers.map((r) => r.data.usage?.prompt_tokens ?? 0))).toBeGreaterThan(4 * 765);
    expect(stack.standin.stats().byCredential[VISION.BY_URL]?.rateLimited ?? 0).toBe(0);
  });
});

describe("a request for n answers is charged every answer's output limit", () => {
  it("OpenAI, n = 8: twelve such requests at once are paced to the window, not found by 429s (before: each charged one answer's allowance)", async () => {
    const client = openaiVia(stack, SAMPLED);
    await ask(client, "learn the window");
    // 8 x 250 = 2,000 tokens of output a request as OpenAI's TPM counts it (prompt + n x max_tokens); the
    // gateway charged about 270 before, so all twelve went into a bucket of 10,000 at once (7 attempts
    // refused upstream; none in two runs now).
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) =>
      client.chat.completions.create({ model: OPENAI_MODEL, max_tokens: 250, n: 8, messages: [{ role: "user", content: `pass@8, problem ${i}` }] }).withResponse()));
    expect(answers.map((r) => r.response.status)).toEqual(Array(12).fill(200));
    expect(answers.map((r) => r.data.choices.length)).toEqual(Array(12).fill(8));
    const refused = stack.standin.stats().byCredential[SAMPLED]?.rateLimited ?? 0;
    console.log(`[too-large] n = 8: ${refused} attempts refused upstream`);
    expect(refused).toBeLessThanOrEqual(1);
  });

  it("OpenAI, n = 128 with max_tokens 5,000, over the told 600,000 a minute: 413 at once, nothing sent (before: sent, and the provider's 429 came back)", async () => {
    const client = openaiVia(stack, SAMPLED);
    await ask(client, "the window told");
    const before = sent(SAMPLED);
    const err = await refusal(client.chat.completions.create({ model: OPENAI_MODEL, max_tokens: 5_000, n: 128, messages: [{ role: "user", content: "sample widely" }] }));
    expect(err.status).toBe(413);
    expect(err.message).toMatch(/fewer answers \(n\)/);
    expect(sent(SAMPLED)).toBe(before);
  });
});
