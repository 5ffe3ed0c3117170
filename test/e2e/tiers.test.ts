// Service tiers through `wrangler dev` with the official openai SDK (issue 35): a caller's own
// `service_tier` passes and the answer says the tier that served; a flex request the stand-in sheds
// (OpenAI's own 429) is waited through and answered at standard; the ledger's cost per tier is the
// stand-in's charge per tier.
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, credential, openaiVia, useStack } from "./setup.ts";

const MODEL = "gpt-5-mini";
// The built-in price of gpt-5-mini (src/usage/prices.ts): the stand-in charges the same list.
const PRICES = { [MODEL]: { input: 0.25, output: 2 } };
const stack = useStack({ standin: { latencyMs: 20, prices: PRICES }, vars: { BASE_BACKOFF_MS: "20", USAGE_FLUSH_MS: "200" }, admin: true });
const user = [{ role: "user" as const, content: "a patient question" }];

describe("service tiers through wrangler dev", () => {
  it("the caller's service_tier passes; a shed flex request is answered at standard; the ledger per tier is the stand-in's charge", async () => {
    const since = Date.now() - 60_000;
    stack.standin.configure({ flexShed: 0 });
    stack.standin.resetStats();
    const client = openaiVia(stack, credential("tiers"));
    const { data: flex, response } = await client.chat.completions.create({ model: MODEL, messages: user, service_tier: "flex", max_tokens: 8 }).withResponse();
    expect(flex.service_tier).toBe("flex");
    expect(response.headers.get("x-slotgate-tier")).toBe("flex");
    expect(response.headers.get("x-slotgate-tier-refusals")).toBe("0");

    stack.standin.configure({ flexShed: 1 });
    const { data: shed, response: fell } = await client.chat.completions
      .create({ model: MODEL, messages: user, max_tokens: 8 }, { headers: { "x-slotgate-tier": "flex" } })
      .withResponse();
    expect(shed.service_tier).toBe("default");
    expect(fell.headers.get("x-slotgate-tier")).toBe("standard");
    expect(Number(fell.headers.get("x-slotgate-tier-refusals"))).toBeGreaterThanOrEqual(1);
    const st = stack.standin.stats();
    expect(st.tiers.flex.shed).toBe(Number(fell.headers.get("x-slotgate-tier-refusals")));
    expect([st.tiers.flex.answers, st.tiers.standard.answers]).toEqual([1, 1]);

    // The ledger, by the tier that served: what the stand-in charged at each.
    const ledger = async () => {
      const res = await fetch(`${stack.gateway.url}/admin/usage?by=tier&since=${since}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      return ((await res.json()) as { rows: { tier: string; requests: number; costUsd: number }[] }).rows;
    };
    let rows = await ledger();
    for (let i = 0; i < 50 && rows.reduce((a, r) => a + r.requests, 0) < 2; i++) rows = (await new Promise((r) => setTimeout(r, 100)), await ledger());
    const cost = (tier: string) => rows.filter((r) => r.tier === tier).reduce((a, r) => a + r.costUsd, 0);
    expect(cost("flex")).toBeCloseTo(st.tiers.flex.usd, 12);
    expect(cost("standard")).toBeCloseTo(st.tiers.standard.usd, 12);
    expect(st.tiers.flex.usd).toBeCloseTo(st.tiers.standard.usd / 2, 12);
  });
});
