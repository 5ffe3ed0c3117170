// Errors, as the official SDKs surface them through the gateway (their own retries off): a hard
// quota comes back at once after one attempt, an unknown provider is the gateway's 404, and a
// request that finds no slot before its deadline gets the gateway's 429 with retry-after.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import {
  ANTHROPIC_MODEL, OPENAI_MODEL, anthropicVia, attemptsOf, credential, openaiVia, rejection, stamped, until, useStack,
} from "./setup.ts";

const LATENCY_MS = 1_500;
const QUOTA_KEY = credential("no-quota");
const stack = useStack({
  standin: { latencyMs: LATENCY_MS, quotaExhaustedKeys: [QUOTA_KEY] },
  // One slot per key: a second request on a busy key has to queue.
  vars: { START_CONCURRENCY: "1", MAX_CONCURRENCY: "1" },
});

const chat = (text = "hi") => ({ model: OPENAI_MODEL, messages: [{ role: "user" as const, content: text }] });
const message = { model: ANTHROPIC_MODEL, max_tokens: 32, messages: [{ role: "user" as const, content: "hi" }] };

describe("hard quota: returned at once, one upstream attempt, never retried", () => {
  it("openai insufficient_quota: the SDK raises RateLimitError with code insufficient_quota", async () => {
    const err = await rejection(openaiVia(stack, QUOTA_KEY).chat.completions.create(chat()));
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.status).toBe(429);
    expect(e.code).toBe("insufficient_quota");
    expect(e.type).toBe("insufficient_quota");
    expect(e.headers.get("x-slotgate-error")).toBeNull(); // the provider's answer, not one the gateway made
    expect(stamped(new Response(null, { headers: e.headers }), "openai", OPENAI_MODEL).attempts).toBe(1);
    expect(stack.standin.stats().perCredential[QUOTA_KEY]).toBe(1);
    // Not waited on: one attempt (above) means no backoff, and the gateway spent no time queueing it.
  });

  it("anthropic credit balance too low: the SDK raises BadRequestError after one attempt", async () => {
    const apiKey = QUOTA_KEY; // quota-exhausted credentials are refused on both providers' paths
    const before = stack.standin.stats().perCredential[apiKey] ?? 0;
    const err = await rejection(anthropicVia(stack, apiKey).messages.create(message));
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    const e = err as InstanceType<typeof Anthropic.BadRequestError>;
    expect(e.apiMessage).toMatch(/credit balance is too low/);
    expect(e.headers.get("x-slotgate-attempts")).toBe("1");
    expect(stack.standin.stats().perCredential[apiKey]).toBe(before + 1);
  });
});

describe("unknown provider: the gateway's own 404", () => {
  it("openai SDK with baseURL /nope/v1 raises NotFoundError carrying the gateway's error body", async () => {
    const apiKey = credential("nope");
    const err = await rejection(openaiVia(stack, apiKey, "nope").chat.completions.create(chat()));
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect(e.status).toBe(404);
    expect(e.type).toBe("unknown_provider");
    expect(e.error).toMatchObject({ type: "unknown_provider", message: expect.stringContaining("nope") });
    expect(e.headers.get("x-slotgate-error")).toBe("unknown_provider");
    expect(stack.standin.stats().perCredential[apiKey]).toBeUndefined(); // nothing went upstream
  });

  it("anthropic SDK with baseURL /nope raises NotFoundError with type unknown_provider", async () => {
    const err = await rejection(anthropicVia(stack, credential("nope"), "nope").messages.create(message));
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.NotFoundError>).type).toBe("unknown_provider");
  });
});

describe("queue timeout: no slot before the request's deadline", () => {
  it("the SDK surfaces the gateway's 429 queue_timeout with retry-after; the busy request still succeeds", async () => {
    const apiKey = credential("busy");
    const client = openaiVia(stack, apiKey);
    const first = client.chat.completions.create(chat("first")).withResponse();
    // The key's only slot is taken once the stand-in holds the first request.
    await until("the first request to reach the stand-in", () => attemptsOf(stack.standin.stats(), apiKey).length === 1);

    let firstDone = false;
    void first.then(() => (firstDone = true), () => (firstDone = true));
    const started = performance.now();
    const err = await rejection(client.chat.completions.create(chat("second"), { headers: { "x-slotgate-deadline-ms": "300" } }));
    const waited = performance.now() - started;
    const firstDoneAtRefusal = firstDone;
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    const e = err as InstanceType<typeof OpenAI.RateLimitError>;
    expect(e.status).toBe(429);
    expect(e.type).toBe("queue_timeout");
    expect(e.headers.get("x-slotgate-error")).toBe("queue_timeout");
    expect(e.headers.get("retry-after")).toMatch(/^[1-9]\d*$/);
    expect(e.headers.get("x-slotgate-attempts")).toBe("0");
    // It waited for its own deadline, not for the slot to come free.
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(firstDoneAtRefusal, "refused before the busy request ended, not when its slot came free").toBe(false);

    const { data, response } = await first;
    expect(data.choices[0]?.message.content).toBeTruthy();
    expect(stamped(response, "openai", OPENAI_MODEL).key).toBe(e.headers.get("x-slotgate-key"));
    expect(attemptsOf(stack.standin.stats(), apiKey)).toHaveLength(1); // the timed-out one never went upstream
  });
});
