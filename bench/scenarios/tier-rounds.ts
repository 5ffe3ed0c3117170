// A tier shed whole, met in rounds (issue 39): 48 chat requests in rounds of 6 at once, each round
// after the last has ended, at flex with fallback to standard while the stand-in sheds every flex
// attempt (OpenAI's own 429), beside the same 48 at standard. Each flex run is a new key, so it
// pays for learning that flex is shed: with the outlook kept in the key's object, the six refusals
// of its first round shed the tier for every request (and every isolate), and the rest go at
// standard at once but for one probe a second. Alternated, three runs of each.
import { randomBytes } from "node:crypto";
import { configure, type Ctx, PROMPT, type Scenario } from "../context.ts";
import { goal, secs, times, type Row } from "../stats.ts";

const MODEL = "gpt-5-mini";
const ROUNDS = 8;
const AT_ONCE = 6;

/** 48 requests in rounds of 6 with a fresh key; its wall time and the tier that served each. */
async function rounds(ctx: Ctx, tier: "flex" | "standard"): Promise<{ ms: number; served: Record<string, number>; failed: number }> {
  const key = `sk-bench-rounds-${randomBytes(6).toString("hex")}`;
  const body = JSON.stringify({ model: MODEL, max_tokens: 16, messages: [{ role: "user", content: PROMPT }] });
  const served: Record<string, number> = {};
  let failed = 0;
  const t = performance.now();
  for (let r = 0; r < ROUNDS; r++)
    await Promise.all(
      Array.from({ length: AT_ONCE }, async () => {
        const res = await fetch(`${ctx.gateway.url}/openai/v1/chat/completions`, {
          method: "POST", body, headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "x-slotgate-tier": tier },
        });
        await res.arrayBuffer();
        if (!res.ok) failed++;
        const at = res.headers.get("x-slotgate-tier") ?? "?";
        served[at] = (served[at] ?? 0) + 1;
      }),
    );
  return { ms: performance.now() - t, served, failed };
}

async function run(ctx: Ctx) {
  configure(ctx, { latencyMs: 100, flexShed: 1 });
  const scenario = "a tier shed whole, in rounds (48 requests, 6 at once, a new key each run)";
  await rounds(ctx, "standard"); // warm
  const runs: { flex: Awaited<ReturnType<typeof rounds>>; standard: Awaited<ReturnType<typeof rounds>> }[] = [];
  for (let i = 0; i < 3; i++) runs.push({ standard: await rounds(ctx, "standard"), flex: await rounds(ctx, "flex") });
  const sum = (k: "flex" | "standard") => runs.reduce((a, r) => a + r[k].ms, 0);
  const ratio = sum("flex") / sum("standard");
  const failed = runs.reduce((a, r) => a + r.flex.failed + r.standard.failed, 0);
  const shed = ctx.standin.stats().tiers.flex.shed;
  const rows: Row[] = [
    goal(
      {
        scenario, metric: "wall time: standard | flex with fallback, flex fully shed (three runs each, alternated)",
        baseline: runs.map((r) => secs(r.standard.ms)).join(" + "),
        value: `${runs.map((r) => secs(r.flex.ms)).join(" + ")} (${times(ratio)}; ${shed} flex refusals in ${runs.length * ROUNDS * AT_ONCE} requests; ${failed} failed)`,
      },
      "<= 1.25x, none failed", ratio <= 1.25 && failed === 0,
    ),
  ];
  return { rows, data: { runs, ratio, shed } };
}

export const tierRounds: Scenario = { name: "tier-rounds", run };
