// A pool on the virtual clock: one simulated provider account and one real limiter (LimiterCore
// driven as the Durable Object drives it) per member, the real retry loop (src/proxy/run.ts) and
// the real router (src/pools/route.ts), with one router view per simulated Worker isolate.
import { DEFAULT_GATEWAY } from "../src/config/limits";
import type { Seen } from "../src/pools/choose";
import { PoolRoute } from "../src/pools/route";
import { estimate } from "../src/policy/estimate";
import { run } from "../src/proxy/run";
import { openai } from "../test/support/standin/openai.ts";
import { type Answer, type Fleet, runFleet, type Send } from "./clients.ts";
import { Clock } from "./clock.ts";
import { RPC_MS, SimLimiter, SimObject, type SimRequest } from "./gateway.ts";
import { SimProvider, type Shape } from "./provider.ts";
import { idealMs } from "./scenario.ts";
import { mulberry32 } from "../test/support/standin/faults.ts";

export interface PoolMemberShape {
  name: string;
  rpm: number;
  /** Every request answered `insufficient_quota` (the key's org has no credit). */
  exhausted?: boolean;
}

export interface PoolScenario {
  members: PoolMemberShape[];
  /** What every member's account shares: latency, burst, headers. */
  shape: Omit<Shape, "rpm">;
  fleet: Fleet;
  /** Worker isolates the callers' requests land on, each with its own view of the members. */
  isolates: number;
  /** First out length (POOL_OUT_MS). */
  outMs?: number;
  seed?: number;
}

export interface PoolResult {
  makespanMs: number;
  /** The ideal for one key with the members' limits added up. */
  idealMs: number;
  failed: number;
  attempts: number;
  upstream429: number;
  /** Successes per member. */
  served: Record<string, number>;
  /** Attempts per member. */
  tried: Record<string, number>;
}

export async function simulatePool(sc: PoolScenario): Promise<PoolResult> {
  const clock = new Clock();
  const start = clock.now;
  const seed = sc.seed ?? 1;
  const random = mulberry32(seed ^ 0x5bd1e995);
  const served: Record<string, number> = {};
  const tried: Record<string, number> = {};
  let upstream429 = 0;
  const members = sc.members.map((m, i) => {
    const provider = new SimProvider(clock, { ...sc.shape, rpm: m.rpm } as Shape, seed + i);
    const obj = new SimObject(clock);
    served[m.name] = 0;
    tried[m.name] = 0;
    return { shape: m, provider, obj, url: new URL(`https://member-${i}.invalid/v1/chat/completions`) };
  });
  const byHost = new Map(members.map((m) => [m.url.host, m]));
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const m = byHost.get(new URL(String(input)).host)!;
    tried[m.shape.name]!++;
    let res: Response;
    if (m.shape.exhausted) {
      await clock.sleep(40);
      const e = openai.quotaExhausted("");
      res = new Response(JSON.stringify(e.body), { status: e.status, headers: { "content-type": "application/json" } });
    } else res = await m.provider.fetch(input, init);
    if (res.status === 429) upstream429++;
    if (res.ok) served[m.shape.name]!++;
    return res;
  };
  const deps = { fetch: fetch as typeof globalThis.fetch, now: () => clock.now, random, sleep: (ms: number) => clock.sleep(ms) };
  const isolates = Array.from({ length: Math.max(1, sc.isolates) }, () => {
    const views = new Map<string, Seen>();
    const targets = members.map((m, i) => ({
      name: m.shape.name,
      credential: `sk-sim-member-${i}`,
      target: {
        url: m.url,
        headers: new Headers({ "content-type": "application/json" }),
        key: { key: `sim:model:member-${i}`, provider: "sim", model: "model" },
        limiter: new SimLimiter(clock, m.obj, RPC_MS),
      },
    }));
    return (req: SimRequest) => {
      const route = new PoolRoute("sim", targets, sc.outMs ?? 10_000, random, views);
      return run(
        {
          url: targets[0]!.target.url, method: "POST", headers: targets[0]!.target.headers, body: req.body, key: targets[0]!.target.key,
          // The estimate and its output allowance, as proxy/request.ts: each member splits them by its row.
          who: { caller: "sim-vk" }, ...estimate(req.json, req.body.byteLength), deadline: clock.now + DEFAULT_GATEWAY.deadlineMs,
          maxAttempts: DEFAULT_GATEWAY.maxAttempts, gateway: DEFAULT_GATEWAY, signal: new AbortController().signal, waitUntil: () => {}, route,
        },
        targets[0]!.target.limiter,
        deps,
      );
    };
  });
  const perProcess = (_send: Send, p: number): Send => isolates[p % isolates.length]!;
  const done = runFleet(sc.fleet, isolates[0]!, clock, perProcess);
  await clock.run();
  const answers: Answer[] = await done;
  const rpm = sc.members.filter((m) => !m.exhausted).reduce((sum, m) => sum + m.rpm, 0);
  return {
    makespanMs: Math.max(0, ...answers.map((a) => a.at)) - start,
    idealMs: idealMs({ ...sc.shape, rpm } as Shape, sc.fleet),
    failed: answers.filter((a) => a.status >= 400).length,
    attempts: Object.values(tried).reduce((a, b) => a + b, 0),
    upstream429,
    served,
    tried,
  };
}
