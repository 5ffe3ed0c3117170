// The Worker's own work per request by stage, and its key's object's, measured inside workerd
// (bench/workerd/hotpath.run.ts under vitest): what a plain request costs beside its upstream
// fetch. Rows only, no targets: the targets are the overhead scenario's, measured end to end.
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import type { Ctx, Scenario } from "../context.ts";
import type { Row } from "../stats.ts";

const ROOT = resolve(import.meta.dirname, "../..");

async function run(ctx: Ctx) {
  const scenario = "hot path by stage (inside workerd, µs a request)";
  let stdout: string;
  try {
    ({ stdout } = await promisify(execFile)("npx", ["vitest", "run", "--config", "bench/vitest.workerd.config.ts", "bench/workerd/hotpath.run.ts"], {
      cwd: ROOT,
      env: { ...process.env, HOTPATH_RUNS: ctx.opts.quick ? "1000" : "5000" },
      maxBuffer: 16 * 1024 * 1024,
    }));
  } catch (err) {
    return { rows: [{ scenario, metric: "vitest", baseline: "", value: `failed: ${String(err).split("\n")[0]}` }], data: null };
  }
  const table = stdout.split("\n").filter((l) => l.startsWith("| ") && !l.startsWith("| stage") && !l.startsWith("| ---"));
  const rows: Row[] = table.map((l) => {
    const [metric, value] = l.slice(2, -2).split(" | ");
    return { scenario, metric: metric!, baseline: "", value: value! };
  });
  return { rows, data: Object.fromEntries(rows.map((r) => [r.metric, Number(r.value)])) };
}

export const hotpath: Scenario = { name: "hotpath", run };
