// The first seconds of a run, attempt by attempt: `tsx sim/timeline.ts real-rpm [--until 2000] [--serial-ms 10] [--direct]`
// runs a real-client shape (bench/real/shapes.ts) in the simulator on the local network's delays,
// as the benchmark does, and prints when each attempt asked, was granted, was sent and answered,
// the remaining the provider reported, and the limit after it. Times in ms from the start.
// --direct: also the same callers straight at the provider with the SDK's own retries (the fault shape's baseline).
import { parseArgs } from "node:util";
import { local, realSpec } from "../bench/simulated.ts";
import { SHAPES } from "../bench/real/shapes.ts";
import { type Scenario, simulate } from "./scenario.ts";
import { Trace } from "./trace.ts";
import { EPOCH } from "./clock.ts";

const { values, positionals } = parseArgs({ allowPositionals: true, options: { until: { type: "string", default: "2000" }, "serial-ms": { type: "string", default: "0" }, direct: { type: "boolean", default: false } } });
const shape = SHAPES.find((s) => s.name === positionals[0]);
if (!shape) throw new Error(`name a shape: ${SHAPES.map((s) => s.name).join(", ")}`);
const spec = local(realSpec(shape, "gateway", Number(values["serial-ms"])));
const trace = new Trace();
const r = await simulate({ ...(spec as unknown as Scenario), name: shape.name, family: "quota" }, "gateway", trace);
console.log(trace.table(EPOCH, Number(values.until)));
console.log(`\n${shape.name}: makespan ${r.makespanMs} ms, ideal ${Math.round(r.idealMs)} ms (${(r.makespanMs / r.idealMs).toFixed(3)}x), ${r.upstream429} of ${r.attempts} attempts 429`);
if (values.direct) {
  const d = await simulate({ ...(local(realSpec(shape, "direct")) as unknown as Scenario), name: shape.name, family: "faults" }, "direct");
  console.log(`direct SDK: makespan ${d.makespanMs} ms (gateway ${(r.makespanMs / d.makespanMs).toFixed(3)}x), ${d.failed} of ${d.n} failed`);
}
