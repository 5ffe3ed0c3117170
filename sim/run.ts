// npm run sim: runs the policy matrix on the virtual clock and prints one row a scenario.
//   npm run sim -- --only cap          scenarios whose name contains "cap"
//   npm run sim -- --set startConcurrency=8 --set decreaseFactor=0.7   limiter config overrides
//   npm run sim -- --json sim/results.json
//   npm run sim -- --isolates 4 --no-tickets   the gateway's requests over 4 isolates; none takes tickets
import { writeFileSync } from "node:fs";
import type { LimiterConfig } from "../src/config/limits";
import { FAIR_HEADER, fairPass, fairRow, fairScenarios, simulateFair } from "./fair.ts";
import { matrix } from "./matrix.ts";
import { type Result, simulate } from "./scenario.ts";
import { ratio, share429, verdict } from "./verdict.ts";

function args() {
  const a = process.argv.slice(2);
  const config: Partial<Record<keyof LimiterConfig, number>> = {};
  let only: string | null = null;
  let json: string | null = null;
  const gateway: { isolates?: number; tickets?: boolean } = {};
  for (let i = 0; i < a.length; i++) {
    if (a[i] === "--only") only = a[++i] ?? null;
    else if (a[i] === "--isolates") gateway.isolates = Number(a[++i]);
    else if (a[i] === "--no-tickets") gateway.tickets = false;
    else if (a[i] === "--json") json = a[++i] ?? null;
    else if (a[i] === "--set") {
      const [k, v] = (a[++i] ?? "").split("=");
      config[k as keyof LimiterConfig] = Number(v);
    } else throw new Error(`unknown argument ${a[i]} (see the top of sim/run.ts)`);
  }
  return { config, only, json, gateway };
}

const s = (ms: number | null) => (ms === null ? "never" : `${(ms / 1000).toFixed(1)} s`);
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function row(r: Result, direct?: Result): string {
  const v = verdict(r, direct);
  const vs = direct ? `${s(direct.makespanMs)} (${(r.makespanMs / direct.makespanMs).toFixed(2)}x)` : "";
  const change = r.family === "change" ? `last 429 +${s(r.last429AfterChangeMs)}, rate +${s(r.rateAfterChangeMs)}` : "";
  return `| ${r.name} | ${r.n} | ${r.failed} | ${s(r.makespanMs)} | ${s(r.idealMs)} | ${ratio(r).toFixed(2)}x | ${pct(share429(r))} | ${s(r.to90Ms)} | ${r.cuts} / ${r.limit} | ${vs}${change} | ${v.target} | ${v.pass ? "pass" : "MISS"} |`;
}

export const HEADER = [
  "| scenario | requests | caller errors | makespan | ideal | ratio | upstream 429 | to 90% rate | cuts / final limit | direct SDK or change | target | |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
];

async function main() {
  const { config, only, json, gateway: spread } = args();
  const t0 = performance.now();
  const rows = matrix().filter((sc) => only === null || sc.name.includes(only));
  const results: { gateway: Result; direct?: Result }[] = [];
  if (rows.length > 0) console.log(HEADER.join("\n"));
  for (const sc of rows) {
    const scenario = { ...sc, ...spread, config: { ...sc.config, ...config } };
    const gateway = await simulate(scenario, "gateway");
    const direct = sc.family === "faults" ? await simulate(scenario, "direct") : undefined;
    results.push({ gateway, direct });
    console.log(row(gateway, direct));
  }
  // Fair shares: a batch job's deep queue beside an interactive caller (sim/fair.ts).
  const fair = [];
  const shares = fairScenarios().filter((sc) => only === null || sc.name.includes(only));
  if (shares.length > 0) console.log(`\n${FAIR_HEADER.join("\n")}`);
  for (const sc of shares) {
    const r = await simulateFair({ ...sc, config: { ...sc.config, ...config } });
    fair.push(r);
    console.log(fairRow(r));
  }
  const passed = results.filter((r) => verdict(r.gateway, r.direct).pass).length + fair.filter(fairPass).length;
  console.log(`\n${passed} of ${results.length + fair.filter((r) => !r.contrast).length} scenarios meet their target; ${((performance.now() - t0) / 1000).toFixed(1)} s of wall time.`);
  if (json) writeFileSync(json, JSON.stringify({ config, results, fair }, null, 2));
}

await main();
