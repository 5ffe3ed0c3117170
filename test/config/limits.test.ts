import { describe, expect, it } from "vitest";
import { ConfigError, gatewayConfigFromEnv, limiterConfigFromEnv } from "../../src/config/env";
import { DEFAULT_GATEWAY, GATEWAY_RULES, LIMITER_RULES, parseOverride } from "../../src/config/limits";
import type { Env } from "../../src/env";

const toVar = (f: string) => f.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();
const envOk = (field: string, v: number) => {
  try {
    limiterConfigFromEnv({ MAX_CONCURRENCY: "100000", [toVar(field)]: String(v) } as unknown as Env);
    return true;
  } catch (err) {
    if (err instanceof ConfigError) return false;
    throw err;
  }
};

describe("one table of ranges", () => {
  // Each bound, and just past it: the variable and the admin API must agree on every one.
  const cases = Object.entries(LIMITER_RULES).flatMap(([field, r]) => {
    const step = r.int ? 1 : 0.001;
    return [r.lo, r.hi, r.lo - step, r.hi + step].map((v) => [field, v] as const);
  });

  it.each(cases)("%s = %s: the env var and the admin API agree", (field, v) => {
    expect(parseOverride({ [field]: v }).ok).toBe(envOk(field, v));
  });

  it("the admin API refuses what the variables refuse (scaleUpPercent 0, decreaseFactor 0.995)", () => {
    expect(parseOverride({ scaleUpPercent: 0 }).ok).toBe(false);
    expect(parseOverride({ decreaseFactor: 0.995 }).ok).toBe(false);
  });

  it("UPSTREAM_TIMEOUT_MS and STREAM_IDLE_MS have defaults, are read, and are checked", () => {
    expect(gatewayConfigFromEnv({} as Env)).toMatchObject({ upstreamTimeoutMs: DEFAULT_GATEWAY.upstreamTimeoutMs, streamIdleMs: DEFAULT_GATEWAY.streamIdleMs });
    expect(gatewayConfigFromEnv({ UPSTREAM_TIMEOUT_MS: "2500", STREAM_IDLE_MS: "900" } as Env)).toMatchObject({ upstreamTimeoutMs: 2500, streamIdleMs: 900 });
    expect(GATEWAY_RULES.upstreamTimeoutMs.lo).toBe(1);
    expect(() => gatewayConfigFromEnv({ UPSTREAM_TIMEOUT_MS: "0" } as Env)).toThrow(/UPSTREAM_TIMEOUT_MS/);
    expect(() => gatewayConfigFromEnv({ STREAM_IDLE_MS: "soon" } as Env)).toThrow(/STREAM_IDLE_MS/);
  });
});
