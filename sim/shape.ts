// One scenario of the caller's choosing, for the benchmark to put the simulator's figure beside
// the measured one: `tsx sim/shape.ts '{"shape": {...}, "fleet": {...}, "via": "gateway"}'`.
import { type Scenario, simulate } from "./scenario.ts";

const spec = JSON.parse(process.argv[2] ?? "{}") as Scenario & { via: "gateway" | "direct" };
const result = await simulate({ ...spec, name: spec.name ?? "shape", family: spec.family ?? "quota" }, spec.via ?? "gateway");
console.log(JSON.stringify(result));
