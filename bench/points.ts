// `npm run points [-- --variants a,b,... --in-flight 1,48 --rounds 6 --seconds 3] [--write DIR]`: where the
// probe's time goes, by cutting the request path short at named points. Each variant is the probe
// of this tree (bench/trees.ts: its acquires granted in the Worker) with one change written over a
// copy, never into src/; all run under wrangler dev beside the plain pass-through Worker
// (bench/passthrough), against the stand-in at latency 0, in alternated rounds (each round in a new
// order), from client processes sending plain fetch (bench/client.ts `raw`). Printed: each one's
// p50 and throughput against the plain Worker's in the same rounds. `--write DIR`: the variants'
// trees written to DIR/<variant> instead, for the instructions mode of `npm run profile`.
//
// Variants:
//   probe          the probe as it is
//   after:<stage>  the probe, answering right after <stage> of src/routes/proxy.ts's list with the
//                  caller's request passed to the stand-in as the plain Worker passes it
//   native         the probe, a plain answer passed on as it comes (`new Response(res.body, ...)`):
//                  not read whole, not metered, not settled (what the contract rules out)
//   tee            the probe, a plain answer passed on as it comes and a copy of it read, metered
//                  and settled after the answer (no retry of an answer that breaks off, no tier read
//                  from its body: also ruled out by the contract)
//   read-then-tee  as tee, but the copy is read to its end before the answer goes: the read whole's
//                  wait with none of its other work
//   array-buffer   the probe, a plain answer read whole by the runtime (`res.arrayBuffer()`) rather
//                  than by a JavaScript reader loop with its idle timer
import { cpSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Gateway, startGateway } from "../test/support/gateway.ts";
import { gatewayProviders, startStandin } from "../test/support/standin/index.ts";
import { MODEL, PROMPT } from "./context.ts";
import { runFleet } from "./fleet.ts";
import { rotation } from "./side-by-side.ts";
import { percentile } from "./stats.ts";
import { VARIANTS, variantTree } from "./variants.ts";

/** The p50 as every scenario takes it (nearest rank). */
const median = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      variants: { type: "string", default: VARIANTS.join(",") },
      "in-flight": { type: "string", default: "1,48" },
      rounds: { type: "string", default: "6" },
      seconds: { type: "string", default: "3" },
      write: { type: "string" },
    },
  });
  const variants = values.variants!.split(",").filter(Boolean);
  const inFlight = values["in-flight"]!.split(",").map(Number);
  const rounds = Number(values.rounds);
  const durationMs = Number(values.seconds) * 1000;
  const trees = variants.map(variantTree);
  if (values.write) {
    // For `npm run profile -- --mode instructions --only-beside --against <dir>/<variant> ...`: counted, not timed.
    for (const t of trees) {
      const to = join(resolve(values.write), t.name.replace(/[^\w.-]/g, "-"));
      rmSync(to, { recursive: true, force: true });
      cpSync(t.root, to, { recursive: true, verbatimSymlinks: true });
      t.remove();
      console.log(to);
    }
    return;
  }
  const standin = await startStandin({ logLimit: 1000 });
  standin.configure({ rpm: 0, tpm: 0, itpm: null, otpm: null, rpd: 0, monthlyTokens: 0, maxConcurrent: 0, latencyMs: 0, heldMs: 0, jitterMs: 0, faults: {} });
  const started: Gateway[] = [];
  try {
    const plain = await startGateway({ root: resolve(import.meta.dirname, "passthrough"), vars: { UPSTREAM: standin.url } });
    started.push(plain);
    for (const t of trees) started.push(await startGateway({ root: t.root, providers: gatewayProviders(standin.url), vars: { ADMIN_TOKEN: "points", POINTS_UPSTREAM: standin.url } }));
    const targets = [{ name: "plain Worker", url: plain.url }, ...trees.map((t, i) => ({ name: t.name, url: started[i + 1]!.url }))];
    const run = (url: string, concurrency: number, ms: number) =>
      runFleet(concurrency > 1 ? 2 : 1, { baseURL: `${url}/openai/v1`, apiKey: "sk-bench-points", model: MODEL, prompt: PROMPT, maxTokens: 16, maxRetries: 0, raw: true, requests: 1e9, durationMs: ms, concurrency: Math.max(1, concurrency / 2) });
    for (const t of targets) await run(t.url, 4, 1_000); // warm each
    for (const c of inFlight) {
      const got = new Map(targets.map((t) => [t.name, { ok: 0, seconds: 0, latency: [] as number[] }]));
      for (let r = 0; r < rounds; r++)
        for (const t of rotation(targets, r)) {
          const f = await run(t.url, c, durationMs);
          const g = got.get(t.name)!;
          g.ok += f.ok;
          g.seconds += f.makespan / 1000;
          g.latency.push(...f.latency);
        }
      const base = got.get("plain Worker")!;
      const baseP50 = median(base.latency);
      const baseRate = base.ok / base.seconds;
      console.log(`\n${c} in flight (${rounds} rounds of ${values.seconds} s each, alternated):`);
      for (const t of targets) {
        const g = got.get(t.name)!;
        const p50 = median(g.latency);
        const rate = g.ok / g.seconds;
        console.log(`  ${t.name.padEnd(22)} p50 ${p50.toFixed(2)} ms (${t === targets[0] ? "" : `${p50 - baseP50 >= 0 ? "+" : ""}${(p50 - baseP50).toFixed(2)} ms`})`.padEnd(58) + `${rate.toFixed(0)}/s = ${(rate / baseRate).toFixed(2)}x`);
      }
    }
  } finally {
    await Promise.all(started.map((g) => g.close()));
    for (const t of trees) t.remove();
    await standin.close();
  }
}

await main();
