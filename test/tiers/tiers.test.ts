// Service tiers as pure decisions (issue 35): the rows' tiers column read from each provider's
// documented shapes, which tier policy chooses, the body written only where the row takes it,
// the tier an answer says served it, a refusal read by the tier it went at, the wait at the tier
// and the way back to standard, the key's outlook of a shed tier, and the price of each tier.
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/error";
import { refusal } from "../../src/policy/classify";
import { TIERS, type Tier } from "../../src/providers/dialect";
import { DIALECTS } from "../../src/providers/dialects";
import { bodyTier, offered, servedTier, withTier } from "../../src/tiers/body";
import { chooseTier, laneTiers, tierAsk } from "../../src/tiers/choose";
import { afterRefusal, newOutlook, noteTierTry, PROBE_MS, TIER_TRIES, tiersToTry, worthTrying } from "../../src/tiers/fallback";
import { tierBody, tierMeta, type TierPlan } from "../../src/tiers/plan";
import { priceTable, tierPrice } from "../../src/usage/prices";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const dec = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));
const CHAT = "/v1/chat/completions";

describe("the rows' tiers column", () => {
  it("names only tiers we know, and each tier refusal's tier is one the row sells", () => {
    for (const [name, d] of Object.entries(DIALECTS)) {
      if (!d.tiers) continue;
      for (const t of Object.values(d.tiers.names)) expect(TIERS, name).toContain(t);
      for (const r of d.tiers.refusals) expect(d.tiers.values[r.tier], `${name} ${r.tier}`).toBeDefined();
      for (const t of d.tiers.own ?? []) expect(d.tiers.values[t], name).toBeDefined();
    }
    // Azure's deployment names say nothing of the model, and an unsupported model is refused, not served at standard.
    expect(DIALECTS.azure.tiers).toBeUndefined();
  });

  it("offers a tier where the provider sells it for the model and route, and standard everywhere", () => {
    const openai = DIALECTS.openai.tiers;
    expect(offered(openai, "flex", "gpt-5-mini", CHAT)).toBe(true);
    expect(offered(openai, "flex", "o4-mini", "/v1/responses")).toBe(true);
    expect(offered(openai, "flex", "gpt-4o-mini", CHAT)).toBe(false); // not a flex model
    expect(offered(openai, "flex", "gpt-5-mini", "/v1/embeddings")).toBe(false);
    expect(offered(openai, "priority", "gpt-4.1", CHAT)).toBe(true);
    expect(offered(DIALECTS.anthropic.tiers, "flex", "claude-haiku-4-5", "/v1/messages")).toBe(false); // no flex at Anthropic
    expect(offered(DIALECTS.groq.tiers, "flex", "llama-3.1-8b-instant", "/openai/v1/chat/completions")).toBe(true);
    expect(offered(DIALECTS.gemini.tiers, "flex", "gemini-2.5-flash", "/v1beta/models/gemini-2.5-flash:generateContent")).toBe(true);
    expect(offered(DIALECTS.gemini.tiers, "flex", "gemini-2.0-flash", "/v1beta/models/gemini-2.0-flash:generateContent")).toBe(false);
    expect(offered(DIALECTS.gemini.tiers, "flex", "gemini-2.5-flash", "/v1beta/openai/chat/completions")).toBe(false);
    expect(offered(DIALECTS.mistral.tiers, "standard", "m", CHAT)).toBe(true);
    expect(offered(DIALECTS.mistral.tiers, "flex", "m", CHAT)).toBe(false);
  });

  it("reads the caller's own field and each provider's names for a tier", () => {
    expect(bodyTier(DIALECTS.openai.tiers, { service_tier: "flex" }, CHAT)).toBe("flex");
    expect(bodyTier(DIALECTS.openai.tiers, { service_tier: "default" }, CHAT)).toBe("standard");
    expect(bodyTier(DIALECTS.openai.tiers, { service_tier: "scale" }, CHAT)).toBeNull();
    expect(bodyTier(DIALECTS.openai.tiers, { service_tier: "flex" }, "/v1/embeddings")).toBeNull();
    expect(bodyTier(DIALECTS.groq.tiers, { service_tier: "on_demand" }, CHAT)).toBe("standard");
    expect(bodyTier(DIALECTS.anthropic.tiers, { service_tier: "standard_only" }, "/v1/messages")).toBe("standard");
    expect(bodyTier(DIALECTS.gemini.tiers, { service_tier: "FLEX" }, "/v1beta/models/gemini-2.5-pro:generateContent")).toBe("flex");
    expect(bodyTier(DIALECTS.gemini.tiers, { service_tier: "SERVICE_TIER_PRIORITY" }, "/v1beta/models/gemini-2.5-pro:generateContent")).toBe("priority");
    expect(bodyTier(undefined, { service_tier: "flex" }, CHAT)).toBeNull();
  });

  it("tells the tier that served from the answer: the body, Anthropic's usage, a stream's message_start, Gemini's header", () => {
    expect(servedTier(DIALECTS.openai.tiers, new Headers(), { service_tier: "flex" })).toBe("flex");
    expect(servedTier(DIALECTS.openai.tiers, new Headers(), { service_tier: "default" })).toBe("standard");
    expect(servedTier(DIALECTS.openai.tiers, null, { type: "response.completed", response: { service_tier: "priority" } })).toBe("priority");
    expect(servedTier(DIALECTS.groq.tiers, null, { service_tier: "on_demand" })).toBe("standard");
    expect(servedTier(DIALECTS.anthropic.tiers, null, { usage: { input_tokens: 1, service_tier: "priority" } })).toBe("priority");
    expect(servedTier(DIALECTS.anthropic.tiers, null, { type: "message_start", message: { usage: { service_tier: "standard" } } })).toBe("standard");
    expect(servedTier(DIALECTS.gemini.tiers, new Headers({ "x-gemini-service-tier": "standard" }), { usageMetadata: {} })).toBe("standard");
    expect(servedTier(DIALECTS.openai.tiers, new Headers(), { choices: [] })).toBeNull();
  });
});

describe("a tier by policy", () => {
  it("the header, and the fallback (standard unless none); anything else is refused with its reason", () => {
    expect(tierAsk(new Headers())).toEqual({ fallback: "standard" });
    expect(tierAsk(new Headers({ "x-slotgate-tier": "Flex", "x-slotgate-tier-fallback": "none" }))).toEqual({ tier: "flex", fallback: "none" });
    expect(tierAsk(new Headers({ "x-slotgate-tier": "cheap" }))).toMatch(/x-slotgate-tier must be flex, standard or priority/);
    expect(tierAsk(new Headers({ "x-slotgate-tier-fallback": "later" }))).toMatch(/x-slotgate-tier-fallback must be standard or none/);
  });

  it("TIERS maps lanes to tiers; anything else is a config error naming it", () => {
    expect(laneTiers(undefined)).toEqual({});
    expect(laneTiers('{"low":"flex","high":"priority"}')).toEqual({ low: "flex", high: "priority" });
    for (const bad of ["{", '{"slow":"flex"}', '{"low":"cheap"}', "[]"]) expect(() => laneTiers(bad), bad).toThrow(ConfigError);
    expect(() => laneTiers('{"low":"cheap"}')).toThrow(/TIERS must be a JSON object of lane/);
  });

  it("the caller's body wins, then its header, its virtual key's, its lane's; none: nothing chosen", () => {
    const lanes = { low: "flex" as Tier };
    expect(chooseTier({ body: "priority", header: "flex", key: "flex", lane: "low", lanes })).toEqual({ tier: "priority", by: "body" });
    expect(chooseTier({ body: null, header: "standard", key: "flex", lane: "low", lanes })).toEqual({ tier: "standard", by: "header" });
    expect(chooseTier({ body: null, key: "priority", lane: "low", lanes })).toEqual({ tier: "priority", by: "key" });
    expect(chooseTier({ body: null, key: null, lane: "low", lanes })).toEqual({ tier: "flex", by: "lane" });
    expect(chooseTier({ body: null, lane: "high", lanes })).toBeNull();
    expect(chooseTier({ body: null, lanes })).toBeNull();
  });

  it("writes the row's field where the row takes it, keeps the caller's own body, and touches nothing else", () => {
    // The plan carries the body's JSON (the request's one parse); the bytes are what goes when nothing is written.
    const plan = (by: TierPlan["by"], json: unknown, asked: Tier = "flex"): TierPlan => ({ asked, by, fallback: "standard", model: "gpt-5-mini", route: CHAT, json });
    const own = { model: "gpt-5-mini", messages: [], service_tier: "flex" };
    const base = enc(own);
    const bodies = new Map<string, Uint8Array>();
    expect(tierBody(plan("body", own), bodies, base, DIALECTS.openai, "flex")).toBe(base);
    expect(dec(tierBody(plan("body", own), bodies, base, DIALECTS.openai, "standard")).service_tier).toBe("default");
    expect(dec(tierBody(plan("header", { model: "x" }), new Map(), enc({ model: "x" }), DIALECTS.groq, "flex"))).toEqual({ model: "x", service_tier: "flex" });
    expect(dec(tierBody({ ...plan("header", { model: "x" }, "priority"), route: "/v1/messages" }, new Map(), enc({ model: "x" }), DIALECTS.anthropic, "priority"))).toEqual({ model: "x", service_tier: "auto" });
    // A route that takes no tier (embeddings), and a provider with none, get the body as it came.
    const input = { model: "gpt-5-mini", input: "hi" };
    const embed = enc(input);
    expect(tierBody({ ...plan("header", input), route: "/v1/embeddings" }, new Map(), embed, DIALECTS.openai, "standard")).toBe(embed);
    expect(tierBody(plan("header", input), new Map(), embed, DIALECTS.mistral, "standard")).toBe(embed);
    // A tier the row has no word for is no field at all; a body that is not JSON goes as it came.
    const shed = { service_tier: "flex", a: 1 };
    expect(dec(withTier(shed, enc(shed), { ...DIALECTS.groq.tiers!, values: {} }, "standard"))).toEqual({ a: 1 });
    const text = new TextEncoder().encode("not json");
    expect(withTier(null, text, DIALECTS.openai.tiers!, "flex")).toBe(text);
    // Gemini's camelCase spelling is read, and replaced by the field the gateway writes (issue 39).
    const camel = { contents: [], serviceTier: "priority" };
    const gemini = DIALECTS.gemini.tiers!;
    expect(bodyTier(gemini, camel, "/v1beta/models/gemini-2.5-flash:generateContent")).toBe("priority");
    expect(dec(withTier(camel, enc(camel), gemini, "flex"))).toEqual({ contents: [], service_tier: "flex" });
  });

  it("a tier with limits of its own has a limit key of its own, in the same credential's scope", () => {
    expect(tierMeta({ key: "groq:llama-3.1-8b-instant:0123456789abcdef", provider: "groq", model: "llama-3.1-8b-instant" }, "flex"))
      .toEqual({ key: "groq:llama-3.1-8b-instant@flex:0123456789abcdef", provider: "groq", model: "llama-3.1-8b-instant@flex" });
    expect(DIALECTS.groq.tiers!.own).toEqual(["flex"]);
    expect(DIALECTS.openai.tiers!.own).toBeUndefined();
  });
});

describe("a refusal is read by the tier it went at", () => {
  const resourceUnavailable = { error: { message: "Resource Unavailable", type: "server_error", param: null, code: "resource_unavailable" } };
  const rateLimited = { error: { message: "Rate limit reached for gpt-5-mini", type: "requests", param: null, code: "rate_limit_exceeded" } };
  const spent = { error: { message: "You exceeded your current quota", type: "insufficient_quota", param: null, code: "insufficient_quota" } };

  it("OpenAI: a 429 at flex is the tier's unless it is the key's rate limit or spent money; at standard it stays a rate limit", () => {
    expect(refusal(429, resourceUnavailable, DIALECTS.openai, undefined, "flex").cls).toBe("capacity");
    expect(refusal(429, resourceUnavailable, DIALECTS.openai, undefined, "standard").cls).toBe("rate_limit");
    expect(refusal(429, resourceUnavailable, DIALECTS.openai).cls).toBe("rate_limit");
    expect(refusal(429, rateLimited, DIALECTS.openai, undefined, "flex").cls).toBe("rate_limit");
    expect(refusal(429, spent, DIALECTS.openai, undefined, "flex").cls).toBe("hard_quota");
  });

  it("Gemini's shed flex (503) is the tier's; at standard a 503 is transient; Groq's 498 is capacity", () => {
    const overloaded = { error: { code: 503, message: "The model is overloaded. Please try again later.", status: "UNAVAILABLE" } };
    expect(refusal(503, overloaded, DIALECTS.gemini, undefined, "flex").cls).toBe("capacity");
    expect(refusal(503, overloaded, DIALECTS.gemini, undefined, "standard").cls).toBe("transient");
    expect(refusal(498, { error: { message: "Flex tier capacity exceeded", code: "capacity_exceeded" } }, DIALECTS.groq, undefined, "flex").cls).toBe("capacity");
  });
});

describe("after a tier's capacity refusal", () => {
  const retry = (delayMs: number) => ({ retry: true as const, delayMs });
  const base = { refusals: 1, tries: TIER_TRIES, fallback: "standard" as const, retry: retry(500), attempt: 1, maxAttempts: 8, now: 1_000, started: 0, deadline: 120_000 };

  it("waits at the tier while its tries, attempts and share of the time allow, then goes at standard at once", () => {
    expect(afterRefusal(base)).toEqual({ go: "again", delayMs: 500 });
    expect(afterRefusal({ ...base, refusals: TIER_TRIES })).toEqual({ go: "standard" });
    expect(afterRefusal({ ...base, attempt: 7 })).toEqual({ go: "standard" }); // one attempt kept for standard
    expect(afterRefusal({ ...base, now: 59_600 })).toEqual({ go: "standard" }); // past half the time to the deadline
    expect(afterRefusal({ ...base, retry: { retry: false, reason: "hint_past_deadline" } })).toEqual({ go: "standard" });
    expect(afterRefusal({ ...base, attempt: 8 })).toEqual({ go: "stop" });
    expect(afterRefusal({ ...base, now: 120_000 })).toEqual({ go: "stop" });
  });

  it("with fallback none, it waits through as many refusals as with standard, over its whole time, then the refusal comes back: never another tier (issue 39)", () => {
    const none = { ...base, fallback: "none" as const };
    expect(afterRefusal(none)).toEqual({ go: "again", delayMs: 500 });
    // No attempt or time is kept for standard: its last attempt and the second half of its time are the tier's.
    expect(afterRefusal({ ...none, attempt: 7 })).toEqual({ go: "again", delayMs: 500 });
    expect(afterRefusal({ ...none, now: 59_600 })).toEqual({ go: "again", delayMs: 500 });
    // Past its tries (not 8 attempts and 45 s of refusals), its attempts, its deadline, or when the retry policy gives up: the refusal back.
    expect(afterRefusal({ ...none, refusals: TIER_TRIES })).toEqual({ go: "stop" });
    expect(afterRefusal({ ...none, attempt: 8 })).toEqual({ go: "stop" });
    expect(afterRefusal({ ...none, now: 119_600 })).toEqual({ go: "stop" });
    expect(afterRefusal({ ...none, retry: { retry: false, reason: "attempts_exhausted" } })).toEqual({ go: "stop" });
  });

  it("a tier that sheds everything is probed once a second, not tried by every request, and is tried again once it answers", () => {
    const o = newOutlook();
    for (let i = 0; i < 6; i++) noteTierTry(o, i % 3 === 0); // a third shed: worth it
    expect(worthTrying(o, 0)).toBe(true);
    expect(tiersToTry(o)).toBe(TIER_TRIES);
    for (let i = 0; i < 40; i++) noteTierTry(o, true);
    expect(tiersToTry(o)).toBe(1);
    expect(worthTrying(o, 10_000)).toBe(true); // the probe
    expect(worthTrying(o, 10_001)).toBe(false);
    expect(worthTrying(o, 10_000 + PROBE_MS - 1)).toBe(false);
    expect(worthTrying(o, 10_000 + PROBE_MS)).toBe(true);
    for (let i = 0; i < 3; i++) noteTierTry(o, false); // it came back
    expect(worthTrying(o, 10_000 + PROBE_MS + 1)).toBe(true);
    expect(tiersToTry(o)).toBe(TIER_TRIES);
  });
});

describe("a tier's price", () => {
  const table = priceTable('{"gpt-5-mini":{"input":0.25,"output":2,"cached":0.025,"batch":{"input":0.1,"output":1}},"m":{"input":1,"output":4,"priority":{"input":3,"output":9}}}');

  it("standard's, the tier's own from PRICES, else the row's ratio (OpenAI's flex: the batch price), else none", () => {
    const mini = table.get("gpt-5-mini")!;
    expect(tierPrice(mini, "standard", undefined)).toBe(mini);
    expect(tierPrice(mini, "flex", DIALECTS.openai.tiers!.ratio.flex)).toEqual({ input: 0.1, output: 1 });
    expect(tierPrice({ input: 1, output: 4, cached: 0.5 }, "flex", "batch")).toEqual({ input: 0.5, output: 2, cached: 0.25 });
    expect(tierPrice({ input: 1, output: 4 }, "priority", DIALECTS.openai.tiers!.ratio.priority)).toEqual({ input: 2, output: 8 });
    expect(tierPrice({ input: 1, output: 4 }, "flex", DIALECTS.groq.tiers!.ratio.flex)).toEqual({ input: 1, output: 4 }); // Groq: flex at on-demand prices
    expect(tierPrice(table.get("m")!, "priority", undefined)).toEqual({ input: 3, output: 9 });
    expect(tierPrice({ input: 3, output: 15 }, "priority", DIALECTS.anthropic.tiers!.ratio.priority)).toBeNull(); // sold by commitment: no price
  });

  it("PRICES may give flex and priority; a malformed one is refused naming them", () => {
    expect(priceTable('{"x":{"input":1,"output":2,"flex":{"input":0.4,"output":0.8}}}').get("x")!.flex).toEqual({ input: 0.4, output: 0.8 });
    expect(() => priceTable('{"y":{"input":1,"output":2,"flex":{"input":"cheap"}}}')).toThrow(/batch, flex and priority/);
  });
});
