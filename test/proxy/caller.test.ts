import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/config/env";
import { checkWeights, whoIsAsking } from "../../src/proxy/caller";

const h = (o: Record<string, string>) => new Headers(o);

describe("whoIsAsking", () => {
  it("nothing sent: the key's default caller, normal lane", async () => {
    expect(await whoIsAsking(h({}), undefined)).toEqual({});
  });

  it("takes a label and a lane", async () => {
    expect(await whoIsAsking(h({ "x-slotgate-caller": "alice@team/evals-1", "x-slotgate-priority": "low" }), undefined)).toEqual({ caller: "alice@team/evals-1", priority: "low" });
    expect(await whoIsAsking(h({ "x-slotgate-priority": "HIGH" }), undefined)).toEqual({ priority: "high" });
  });

  it.each([
    [{ "x-slotgate-caller": "" }, /x-slotgate-caller/],
    [{ "x-slotgate-caller": "a b" }, /x-slotgate-caller/],
    [{ "x-slotgate-caller": "x".repeat(129) }, /x-slotgate-caller/],
    [{ "x-slotgate-caller": "(default)" }, /x-slotgate-caller/],
    [{ "x-slotgate-priority": "urgent" }, /x-slotgate-priority must be high, normal or low/],
    [{ "x-slotgate-priority": "" }, /x-slotgate-priority/],
  ])("refuses %j", async (headers, reason) => {
    expect(await whoIsAsking(h(headers), undefined)).toMatch(reason);
  });

  it("with GATEWAY_TOKENS, a caller with no label is its token, as a hash that never shows the token", async () => {
    const a = await whoIsAsking(h({ "x-slotgate-token": "tok-secret-1" }), "tok-secret-1,tok-2");
    const b = await whoIsAsking(h({ "x-slotgate-token": "tok-2" }), "tok-secret-1,tok-2");
    expect(a).toEqual({ caller: expect.stringMatching(/^token:[0-9a-f]{16}$/) });
    expect(JSON.stringify(a)).not.toContain("tok-secret-1");
    expect(a).not.toEqual(b);
    expect(await whoIsAsking(h({ "x-slotgate-token": "tok-secret-1" }), "tok-secret-1,tok-2")).toEqual(a);
    // A label names a caller within its token, never another token's identity (issue 33); without GATEWAY_TOKENS a stray token names nobody.
    const tok2 = (await whoIsAsking(h({ "x-slotgate-token": "tok-2" }), "tok-2")) as { caller: string };
    expect(await whoIsAsking(h({ "x-slotgate-token": "tok-2", "x-slotgate-caller": "ci" }), "tok-2")).toEqual({ caller: `${tok2.caller}/ci` });
    expect(await whoIsAsking(h({ "x-slotgate-caller": "ci" }), "tok-2")).toEqual({ caller: "ci" });
    expect(await whoIsAsking(h({ "x-slotgate-token": "tok-2" }), undefined)).toEqual({});
    expect(await whoIsAsking(h({ "x-slotgate-token": "tok-2" }), " , ")).toEqual({});
  });
});

describe("checkWeights", () => {
  it("passes good weights and throws a ConfigError naming PRIORITY_WEIGHTS for bad ones", () => {
    expect(() => checkWeights(undefined)).not.toThrow();
    expect(() => checkWeights("8:4:1")).not.toThrow();
    expect(() => checkWeights("8:4")).toThrow(ConfigError);
    expect(() => checkWeights("8:4")).toThrow(/PRIORITY_WEIGHTS/);
  });
});
