// Providers run at their limits through `wrangler dev` (issue 32): Azure, whose answers tell only
// what remains; Gemini, whose answers tell nothing until a 429; Fireworks and Anthropic, whose output
// tokens bind; Groq's flex tier, which sheds load with 498s. Small limits (10 a second) over a few seconds. What is asserted here is behaviour (every
// request answered, no lock, few refusals upstream); the timing targets (within 1.1x of the limit)
// are ratios in `npm run bench -- --only providers`, where the runs are longer: a wall-clock bound in
// a test run beside others on two cores would judge the machine, not the gateway.
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, ANTHROPIC_MODEL, anthropicVia, credential } from "./setup.ts";
import { azureOf, fleet, geminiNative, ledger, openaiOf, statusOf, useProviderStack } from "./providers-setup.ts";

const LATENCY_MS = 30;
const stack = useProviderStack({ latencyMs: LATENCY_MS, streamChunks: 3, outputTokens: 8 });
/** Ten a second, in a bucket of one second's worth (Azure's 1 s window; Gemini's minute played at the same pace). */
const PER_SECOND = 10;
const LIMIT = { rpm: PER_SECOND * 60, burst: 1 / 60, tpm: 0 };

/** The time n requests take at PER_SECOND from a full second's bucket, and one answer. */
const idealMs = (n: number) => ((n - PER_SECOND) / PER_SECOND) * 1000 + LATENCY_MS;

describe("providers at their limits", () => {
  it("Azure, remaining-only headers: every request answered at the deployment's limit, no lock; an old api-version's streams answered", async () => {
    const key = credential("az-limit");
    stack.standin.configure({ keyLimits: { [key]: LIMIT } });
    const deployment = `dep-${key.slice(-6)}`;
    const client = azureOf(stack, key, deployment);
    const n = 50;
    const run = await fleet(n, 16, () => statusOf(client.chat.completions.create({ model: "x", max_tokens: 8, messages: [{ role: "user", content: "at the limit" }] })));
    const upstream = stack.standin.stats().byCredential[key]!;
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    expect(upstream.successes).toBe(n);
    expect(upstream.rateLimited / upstream.attempts, `${upstream.rateLimited} of ${upstream.attempts} attempts refused`).toBeLessThanOrEqual(0.05);
    console.log(`[providers] azure: ${n} answered in ${run.makespanMs} ms, ${(run.makespanMs / idealMs(n)).toFixed(2)}x the limit's ${idealMs(n)} ms`);
    // No lock (b88fffb refused every later request on the key at once, nothing sent): a later
    // request on the same key goes upstream and is answered.
    const sentBefore = upstream.attempts;
    await client.chat.completions.create({ model: "x", max_tokens: 8, messages: [{ role: "user", content: "after" }] });
    expect(stack.standin.stats().byCredential[key]!.attempts).toBe(sentBefore + 1);
    // An api-version before 2024-09-01-preview refuses stream_options: its streams must be sent without it.
    const old = azureOf(stack, key, `${deployment}-old`, "2024-02-01");
    for (let i = 0; i < 3; i++) {
      let text = "";
      for await (const c of await old.chat.completions.create({ model: "x", messages: [{ role: "user", content: "old version" }], stream: true })) text += c.choices[0]?.delta.content ?? "";
      expect(text.split(" ")).toHaveLength(8);
    }
    expect(stack.standin.stats().log.filter((a) => a.credential === key && a.status === 400)).toEqual([]);
  });

  it("Gemini's native API, no headers: every request answered at its limit; once its first 429 has told the limit, at most 5% of attempts refused", async () => {
    const key = credential("gemini-limit");
    stack.standin.configure({ keyLimits: { [key]: LIMIT } });
    const n = 100;
    const run = await fleet(n, 16, () => geminiNative(stack, key, "gemini-2.5-flash", "generateContent", "at the limit").then(async (r) => (await r.arrayBuffer(), r.status)));
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    // A headerless key learns its limit from its first 429: the requests already on their way then
    // (at most the fleet's width) are its first episode, whatever the gateway does. After it, pacing.
    const mine = stack.standin.stats().log.filter((a) => a.credential === key).sort((a, b) => a.at - b.at);
    const first = mine.find((a) => a.status === 429);
    const heard = (first?.at ?? 0) + 100; // the refusal is answered at once; its word reaches the limiter within this
    const episode = mine.filter((a) => a.status === 429 && a.at <= heard).length;
    const later = mine.filter((a) => a.at > heard);
    const refusedLater = later.filter((a) => a.status === 429).length;
    expect(episode, "the first episode").toBeLessThanOrEqual(16);
    expect(refusedLater / later.length, `${refusedLater} of ${later.length} attempts after the first episode refused (${episode} in it)`).toBeLessThanOrEqual(0.05);
    console.log(`[providers] gemini: ${n} answered in ${run.makespanMs} ms, ${(run.makespanMs / idealMs(n)).toFixed(2)}x the limit's ${idealMs(n)} ms; ${episode} refused in the first episode, ${refusedLater} of ${later.length} after`);
  });

  it("Gemini's native API, its input TPM binding, a large maxOutputTokens: every request answered, the window charged prompts alone as Gemini counts it", async () => {
    const key = credential("gemini-input");
    // "Tokens per minute (input)": 600,000 a minute in a bucket of 10,000, ten of these 1,000-token prompts.
    stack.standin.configure({ keyLimits: { [key]: { rpm: 60_000, tpm: 600_000, burst: 1 / 60 } } });
    const n = 30;
    const rates: number[] = [];
    const ask = (i: number) => fetch(`${stack.gateway.url}/gemini/v1beta/models/gemini-2.5-flash:generateContent`, {
      method: "POST", headers: { "content-type": "application/json", "x-goog-api-key": key },
      body: JSON.stringify({ contents: [{ role: "user", parts: [{ text: `${"grade this answer ".repeat(222)}(${i})` }] }], generationConfig: { maxOutputTokens: 2_000 } }),
    }).then(async (r) => {
      await r.arrayBuffer();
      if (r.headers.has("x-slotgate-rate")) rates.push(Number(r.headers.get("x-slotgate-rate")));
      return r.status;
    });
    stack.standin.resetStats();
    const run = await fleet(n, 8, ask);
    const upstream = stack.standin.stats().byCredential[key]!;
    // Charged its 2,000 of output besides (3,000 a request once a 429 told the window), three went a second where ten fit.
    console.log(`[providers] gemini input TPM: ${n} answered in ${run.makespanMs} ms; ${upstream.rateLimited} of ${upstream.attempts} refused; x-slotgate-rate at last ${rates.at(-1)}`);
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    expect(upstream.successes).toBe(n);
    // A headerless key learns its window from its first 429s: at most the fleet's width, then paced.
    expect(upstream.rateLimited, `${upstream.rateLimited} of ${upstream.attempts} attempts refused`).toBeLessThanOrEqual(8 + 2);
    // The pace the key tells its callers (x-slotgate-rate: requests a minute the learned window allows
    // at its requests' mean charge): about 600 a minute of these prompts; about 200 charged 3,000 each.
    expect(rates.at(-1)).toBeGreaterThanOrEqual(400);
  });

  /**
   * `n` requests at 16 in flight on a credential whose output tokens alone bind: ten requests'
   * worth a second of `maxTokens` each, prompts and requests plenty. Every one answered, and at most
   * 2% of attempts refused: read as a window charged the whole estimate (Fireworks' prompt window, or
   * Anthropic's `tokens-*`, the two together), the output limit was found by 429s (16 to 25% of attempts).
   */
  async function outputBound(label: string, maxTokens: number, send: (key: string) => Promise<number>): Promise<void> {
    const key = credential(`${label}-output`);
    stack.standin.configure({ keyLimits: { [key]: { rpm: 6_000, tpm: 0, itpm: 3_600_000, otpm: PER_SECOND * 60 * maxTokens, burst: 1 / 60 } } });
    const n = 50;
    const run = await fleet(n, 16, () => send(key));
    const upstream = stack.standin.stats().byCredential[key]!;
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    expect(upstream.successes).toBe(n);
    expect(upstream.rateLimited / upstream.attempts, `${upstream.rateLimited} of ${upstream.attempts} attempts refused`).toBeLessThanOrEqual(0.02);
    console.log(`[providers] ${label}: ${n} answered in ${run.makespanMs} ms, ${(run.makespanMs / idealMs(n)).toFixed(2)}x the limit's ${idealMs(n)} ms; ${upstream.rateLimited} of ${upstream.attempts} refused`);
  }

  it("Fireworks, its generated tokens binding: every request answered, and the generated window paced, not found by refusals", async () => {
    await outputBound("fireworks", 8, (key) =>
      statusOf(openaiOf(stack, "fireworks", key).chat.completions.create({ model: "accounts/fireworks/models/llama-v3p1-8b-instruct", max_tokens: 8, messages: [{ role: "user", content: "at the limit" }] })));
  });

  it("Anthropic, its OTPM binding (long max_tokens, short prompts): every request answered, the output window paced, not found by refusals", async () => {
    await outputBound("anthropic", 200, (key) =>
      statusOf(anthropicVia(stack, key).messages.create({ model: ANTHROPIC_MODEL, max_tokens: 200, messages: [{ role: "user", content: "at the limit" }] })));
  });

  it("Anthropic, a long system prompt read from its prompt cache: the key charged what its input window counts, so it runs as wide as its callers", async () => {
    const key = credential("anthropic-cached");
    // ITPM 600,000 a minute in a bucket of 16,000 (two whole prompts); requests and output plenty.
    stack.standin.configure({ keyLimits: { [key]: { rpm: 60_000, tpm: 0, itpm: 600_000, otpm: 6_000_000, burst: 16_000 / 600_000 } } });
    // 8,000 tokens (32,000 characters) marked for the cache, then a short question: what an eval sends.
    const system = [{ type: "text" as const, text: "Grade the answer by the rubric. ".repeat(1_000), cache_control: { type: "ephemeral" as const } }];
    const client = anthropicVia(stack, key);
    const n = 48;
    const width = 8;
    stack.standin.resetStats();
    const run = await fleet(n, width, (i) =>
      statusOf(client.messages.create({ model: ANTHROPIC_MODEL, max_tokens: 8, system, messages: [{ role: "user", content: `answer ${i}` }] })));
    const stats = stack.standin.stats();
    const upstream = stats.byCredential[key]!;
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    expect(upstream.successes).toBe(n);
    expect(upstream.rateLimited / upstream.attempts, `${upstream.rateLimited} of ${upstream.attempts} attempts refused`).toBeLessThanOrEqual(0.02);
    // Charged whole (8,000 of a 16,000 bucket each), at most two could be out at once; charged the
    // part the window counts once answers show the cache read, as many as the callers send.
    expect(stats.peakInFlight, "requests in flight upstream at once").toBeGreaterThanOrEqual(width - 2);
    // The key's admin view says why: nearly all of its prompts were read from the cache.
    const { response } = await client.messages.create({ model: ANTHROPIC_MODEL, max_tokens: 8, system, messages: [{ role: "user", content: "one more" }] }).withResponse();
    const view = await fetch(`${stack.gateway.url}/admin/keys/${encodeURIComponent(response.headers.get("x-slotgate-key")!)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(((await view.json()) as { cacheReadShare?: number }).cacheReadShare).toBeGreaterThan(0.9);
    console.log(`[providers] anthropic cached: ${n} answered in ${run.makespanMs} ms, at most ${stats.peakInFlight} in flight; ${upstream.rateLimited} of ${upstream.attempts} refused`);
  });

  it("Anthropic, an eval that counts each prompt's tokens before sending it: the counts on a limiter of their own, drawing nothing from the messages' windows, as Anthropic limits them", async () => {
    const key = credential("anthropic-counted");
    // ITPM 600,000 a minute in a bucket of 10,000 (five 2,000-token prompts); the stand-in's counts
    // draw only their own requests window (twice the messages' RPM), never ITPM.
    stack.standin.configure({ keyLimits: { [key]: { rpm: 60_000, tpm: 0, itpm: 600_000, otpm: 6_000_000, burst: 1 / 60 } } });
    const client = anthropicVia(stack, key);
    const n = 20;
    const keys = { counts: new Set<string>(), messages: new Set<string>() };
    stack.standin.resetStats();
    const run = await fleet(n, 8, async (i) => {
      const messages = [{ role: "user" as const, content: `${"word ".repeat(1_600)}question ${i}` }];
      const counted = await client.messages.countTokens({ model: ANTHROPIC_MODEL, messages }).withResponse();
      keys.counts.add(counted.response.headers.get("x-slotgate-key")!);
      const sent = await client.messages.create({ model: ANTHROPIC_MODEL, max_tokens: 8, messages }).withResponse();
      keys.messages.add(sent.response.headers.get("x-slotgate-key")!);
      return sent.response.status;
    });
    const upstream = stack.standin.stats().byCredential[key]!;
    console.log(`[providers] anthropic counted: ${n} counts and ${n} messages in ${run.makespanMs} ms; ${upstream.rateLimited} of ${upstream.attempts} refused`);
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    expect(upstream.successes).toBe(2 * n);
    expect(upstream.rateLimited / upstream.attempts, `${upstream.rateLimited} of ${upstream.attempts} attempts refused`).toBeLessThanOrEqual(0.02);
    // The counts' key is the messages' with ~count after its model, and each limiter saw only its own
    // (before: one key, charged each count as a 2,000-token prompt in the input window).
    const [messagesKey] = [...keys.messages];
    expect([...keys.counts]).toEqual([messagesKey!.replace(`:${ANTHROPIC_MODEL}:`, `:${ANTHROPIC_MODEL}~count:`)]);
    const seen = async (k: string) => ((await (await fetch(`${stack.gateway.url}/admin/keys/${encodeURIComponent(k)}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })).json()) as { metrics: { totalRequests: number } }).metrics.totalRequests;
    expect([await seen(messagesKey!), await seen([...keys.counts][0]!)]).toEqual([n, n]);
  });

  it("OpenAI embeddings, TPM binding: each charged its input alone, so the key runs wider (before: 256 of output assumed on each)", async () => {
    const key = credential("openai-embeds");
    // 60,000 tokens a minute in a bucket of 1,000: about 17 of these 60-token inputs, or 3 charged 256 more each.
    stack.standin.configure({ keyLimits: { [key]: { rpm: 60_000, tpm: 60_000, burst: 1 / 60 } } });
    const client = openaiOf(stack, "openai", key);
    const n = 48;
    const width = 16;
    await client.embeddings.create({ model: "text-embedding-3-small", input: "learn the window" });
    stack.standin.resetStats();
    const run = await fleet(n, width, (i) => statusOf(client.embeddings.create({ model: "text-embedding-3-small", input: `passage ${i}: ${"a few words of a corpus ".repeat(9)}` })));
    const stats = stack.standin.stats();
    const upstream = stats.byCredential[key]!;
    console.log(`[providers] openai embeddings: ${n} in ${run.makespanMs} ms, at most ${stats.peakInFlight} in flight; ${upstream.rateLimited} of ${upstream.attempts} refused`);
    expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    expect(upstream.rateLimited / upstream.attempts, `${upstream.rateLimited} of ${upstream.attempts} attempts refused`).toBeLessThanOrEqual(0.02);
    // Charged 256 more each, at most 2 went at once (2.2 s for the 48); charged their input, 9 to 13 (2.0 s).
    expect(stats.peakInFlight, "requests in flight upstream at once").toBeGreaterThanOrEqual(6);
  });

  it("Groq's flex tier: 498 capacity refusals retried, every request answered, its streams metered exactly", async () => {
    const key = credential("groq-flex");
    const model = `groq-flex-${key.slice(-6)}`;
    const since = Date.now() - 60_000;
    stack.standin.configure({ faults: { "498": 0.3 } });
    const before = stack.standin.stats();
    try {
      const client = openaiOf(stack, "groq", key);
      const ask = { model, service_tier: "flex", messages: [{ role: "user" as const, content: "flex please" }] };
      const run = await fleet(16, 8, async (i) => {
        if (i % 2 === 0) return statusOf(client.chat.completions.create(ask as Parameters<typeof client.chat.completions.create>[0]));
        const stream = await client.chat.completions.create({ ...(ask as object), stream: true } as Parameters<typeof client.chat.completions.create>[0]);
        for await (const _ of stream as AsyncIterable<unknown>);
        return 200;
      });
      expect(run.sent.map((s) => s.status).filter((s) => s !== 200), "caller-visible failures").toEqual([]);
    } finally {
      stack.standin.configure({ faults: {} });
    }
    const after = stack.standin.stats();
    expect(after.faults["498"] ?? 0, "the stand-in refused some").toBeGreaterThan(before.faults["498"] ?? 0);
    const row = (await ledger(stack, since, { [model]: 16 }))[model];
    expect(row).toMatchObject({ requests: 16, unknownUsage: 0 });
    expect(row!.outputTokens).toBe(after.usage.output - before.usage.output);
    expect(row!.inputTokens).toBe(after.usage.input - before.usage.input);
  });
});
