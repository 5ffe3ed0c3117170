// The price a budget reserves at (budget/dearest.ts): the dearest any target may be charged at.
import { describe, expect, it } from "vitest";
import { type Chargeable, dearestPrice } from "../../src/budget/dearest";
import { priceOf, priceTable } from "../../src/usage/prices";

const builtIn = priceTable(undefined);
const asked = { provider: "anthropic", model: "claude-haiku-4-5" };
const ant: Chargeable = { tiered: true };
const aws = (model = "us.anthropic.claude-haiku-4-5-20251001-v1:0"): Chargeable => ({ priceAs: { provider: "bedrock", model }, tiered: false });
const gcp: Chargeable = { priceAs: { provider: "vertex", model: "claude-haiku-4-5@20251001" }, tiered: false };
const std = ["standard"] as const;
const BOUNDS = { context: 200_000, maxOutput: 64_000 };

describe("dearestPrice", () => {
  it("one target: the request's own price", () => {
    expect(dearestPrice(builtIn, asked, [ant], std, undefined)).toEqual({ price: { input: 1, output: 5, cached: 0.1, cacheWrite: 1.25, ...BOUNDS }, noPrice: null, unlisted: null });
  });

  it("a cross-cloud pool: each member at its own provider and model, the dearest in every rate (Bedrock's regional profile, 10% over the list)", () => {
    const { price } = dearestPrice(builtIn, asked, [ant, aws(), gcp], std, undefined);
    expect(price).toEqual({ input: 1.1, output: 5.5, cached: 0.11, cacheWrite: 1.375, ...BOUNDS });
    // Whichever member serves, the reservation covers its price.
    for (const m of [priceOf(builtIn, "anthropic", "claude-haiku-4-5"), priceOf(builtIn, "bedrock", "us.anthropic.claude-haiku-4-5-20251001-v1:0"), priceOf(builtIn, "vertex", "claude-haiku-4-5@20251001")])
      for (const k of ["input", "output", "cached", "cacheWrite"] as const) expect(price![k]).toBeGreaterThanOrEqual(m![k]!);
  });

  it("the order of the members does not matter; each rate is the highest of any member's, not one member's whole price", () => {
    const table = priceTable({ "vertex:claude-haiku-4-5": { input: 0.5, output: 9, cached: 0.05 } });
    const one = dearestPrice(table, asked, [gcp, aws(), ant], std, undefined).price;
    expect(one).toEqual(dearestPrice(table, asked, [ant, gcp, aws()], std, undefined).price);
    expect(one).toMatchObject({ input: 1.1, output: 9, cached: 0.11 });
  });

  it("Bedrock's global profile is at the list price, by id or by ARN; a geographic profile's ARN at the regional", () => {
    expect(dearestPrice(builtIn, asked, [ant, aws("global.anthropic.claude-haiku-4-5-20251001-v1:0")], std, undefined).price).toMatchObject({ input: 1, output: 5 });
    expect(dearestPrice(builtIn, asked, [aws("arn:aws:bedrock:us-east-1:111122223333:inference-profile/global.anthropic.claude-haiku-4-5-20251001-v1:0")], std, undefined).price).toMatchObject({ input: 1, output: 5 });
    expect(dearestPrice(builtIn, asked, [aws("arn:aws:bedrock:us-east-1:111122223333:inference-profile/us.anthropic.claude-haiku-4-5-20251001-v1:0")], std, undefined).price).toMatchObject({ input: 1.1, output: 5.5 });
  });

  it("a member whose id has no price is named (its provider and id): nothing may go where nothing would be charged", () => {
    expect(dearestPrice(builtIn, asked, [ant, aws("us.anthropic.claude-haiku-9-v1:0"), gcp], std, undefined)).toEqual({ price: null, noPrice: null, unlisted: "bedrock:us.anthropic.claude-haiku-9-v1:0" });
    // The request's own model with no price: left for the stage to name as the request names it.
    expect(dearestPrice(builtIn, { provider: "anthropic", model: "claude-nine" }, [ant], std, undefined)).toEqual({ price: null, noPrice: null, unlisted: null });
  });

  it("tiers: a member whose dialect sells them at each tier the request may be served at; one that sells none at standard", () => {
    const table = priceTable({ "anthropic:claude-haiku-4-5": { input: 1, output: 5, priority: { input: 3, output: 15 } } });
    expect(dearestPrice(table, asked, [ant, aws()], ["priority", "standard"], undefined).price).toMatchObject({ input: 3, output: 15 });
    // Flex at half the price (the route's ratio) is cheaper than Bedrock's standard: Bedrock's holds.
    expect(dearestPrice(builtIn, asked, [ant, aws()], ["flex"], { flex: 0.5 }).price).toMatchObject({ input: 1.1, output: 5.5 });
    expect(dearestPrice(builtIn, asked, [ant], ["flex"], { flex: 0.5 }).price).toMatchObject({ input: 0.5, output: 2.5 });
    // A tier with no price and no ratio is named.
    expect(dearestPrice(builtIn, asked, [ant, aws()], ["priority"], undefined)).toEqual({ price: null, noPrice: "priority", unlisted: null });
  });

  it("the bounds are the widest of the members' (a model's context and maxOutput), and left out where one member has none (a request must then bound itself)", () => {
    const table = priceTable({ "vertex:claude-tuned": { input: 1, output: 5 }, "bedrock:tuned-claude": { input: 1, output: 5, maxOutput: 128_000 } });
    const tuned = (provider: string, model: string): Chargeable => ({ priceAs: { provider, model }, tiered: false });
    expect(dearestPrice(table, asked, [ant, aws()], std, undefined).price).toMatchObject(BOUNDS);
    expect(dearestPrice(table, asked, [ant, tuned("bedrock", "tuned-claude")], std, undefined).price).toMatchObject({ maxOutput: 128_000 });
    const open = dearestPrice(table, asked, [ant, tuned("vertex", "claude-tuned@20250101")], std, undefined).price!;
    expect(open).not.toHaveProperty("maxOutput");
    expect(open).not.toHaveProperty("context");
  });
});
