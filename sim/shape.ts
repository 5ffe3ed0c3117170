// One scenario of the caller's choosing, for the benchmark to put the simulator's figure beside
// the measured one: `tsx sim/shape.ts '{"shape": {...}, "fleet": {...}, "via": "gateway"}'`, or a
// fair-share one (sim/fair.ts): `tsx sim/shape.ts '{"fair": {"shape": ..., "batch": ..., "interactive": ...}}'`,
// or a pool (sim/pool.ts): `tsx sim/shape.ts '{"pool": {"members": [...], "shape": ..., "fleet": ..., "isolates": 1}}'`.
import { type FairScenario, simulateFair } from "./fair.ts";
import { type PoolScenario, simulatePool } from "./pool.ts";
import { type Scenario, simulate } from "./scenario.ts";

const spec = JSON.parse(process.argv[2] ?? "{}") as Scenario & { via: "gateway" | "direct"; fair?: FairScenario; pool?: PoolScenario };
const result = spec.fair
  ? await simulateFair({ ...spec.fair, name: spec.fair.name ?? "shape" })
  : spec.pool
  ? await simulatePool(spec.pool)
  : await simulate({ ...spec, name: spec.name ?? "shape", family: spec.family ?? "quota" }, spec.via ?? "gateway");
console.log(JSON.stringify(result));
