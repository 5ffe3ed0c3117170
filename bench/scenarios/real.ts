// The real-client matrix (issue 17): each shape of bench/real/shapes.ts through wrangler dev with
// its real client (openai SDK, @anthropic-ai/sdk, the Vercel AI SDK, the promptfoo CLI), the
// simulator's figure for the same shape beside it. `--only real` runs them all; `--only real-promptfoo` one.
import type { Ctx, Scenario } from "../context.ts";
import { measure } from "../real/measure.ts";
import { rows } from "../real/report.ts";
import { quick, type RealShape, SHAPES } from "../real/shapes.ts";
import { realSpec, simulateShape } from "../simulated.ts";

/** The simulator's run of the shape: same provider options, fleet, limit changes and client. */
const simulated = (s: RealShape, via: "gateway" | "direct", serialMs = 0) => simulateShape(realSpec(s, via, serialMs));

function scenario(base: RealShape): Scenario {
  return {
    name: base.name,
    real: true,
    async run(ctx: Ctx) {
      const s = ctx.opts.quick ? quick(base) : base;
      const direct = s.direct ? await measure(ctx, s, "direct") : null;
      const gateway = await measure(ctx, s, "gateway");
      // The machine's own cost, measured in this run, goes into the simulator's gateway (sim/machine.ts).
      const sim = simulated(s, "gateway", gateway.serialMs ?? 0);
      const simDirect = s.direct ? simulated(s, "direct") : null;
      const simFree = gateway.serialMs ? simulated(s, "gateway") : undefined;
      const r = rows({ shape: s, idealMs: sim.idealMs, gateway, direct, sim, simDirect, simFree });
      return { rows: r.rows, matrix: r.line, data: { shape: s, idealMs: sim.idealMs, serialMs: gateway.serialMs, gateway, direct, sim, simDirect } };
    },
  };
}

export const real: Scenario[] = SHAPES.map(scenario);
