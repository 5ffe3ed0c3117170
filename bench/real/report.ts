// A real-client shape's figures against its targets and beside the simulator's: rows for the main
// table, and one line of the compact "Real-client matrix" table run.ts prints after it.
import { goal, pct, type Row, secs, share, times } from "../stats.ts";
import type { SimResult } from "../simulated.ts";
import type { Measured } from "./measure.ts";
import { type RealShape, SIM_MAKESPAN, SIM_POINTS, targets } from "./shapes.ts";

export interface Figures {
  shape: RealShape;
  idealMs: number;
  gateway: Measured;
  direct: Measured | null;
  sim: SimResult;
  simDirect: SimResult | null;
  /** The simulator's gateway on a thread that costs nothing: the policy's own figure, without this machine's. */
  simFree?: SimResult;
}

export interface MatrixLine {
  shape: string;
  makespan: string;
  share429: string;
  callers: string;
  sim: string;
  agree: string;
  verdict: string;
}

const share429 = (m: { upstream429: number; attempts: number }) => share(m.upstream429, m.attempts);
const seen = (m: Measured) => Object.values(m.failures).reduce((a, b) => a + b, 0);
const seen429 = (m: Measured) => m.failures["429"] ?? 0;
const failures = (m: Measured) => {
  const parts = Object.entries(m.failures).map(([s, n]) => `${s === "0" ? "no answer" : s}×${n}`);
  return `${seen429(m)} / ${seen(m)}${parts.length ? ` (${parts.join(", ")})` : ""}`;
};

/** The makespan a shape is judged by: over the ideal, or over the direct SDK's for the fault shape. */
function ratio(f: Figures, m: { makespanMs: number }, direct: { makespanMs: number } | null): number {
  return f.shape.family === "faults" && direct ? m.makespanMs / direct.makespanMs : m.makespanMs / f.idealMs;
}

/** Where the simulator and the run part by more than the issue allows; empty when they agree. */
export function disagreement(f: Figures): string[] {
  const out: string[] = [];
  const off = f.sim.makespanMs / f.gateway.makespanMs - 1;
  if (Math.abs(off) > SIM_MAKESPAN) out.push(`makespan ${off > 0 ? "+" : ""}${(100 * off).toFixed(0)}%`);
  const points = share429(f.sim) - share429(f.gateway);
  if (Math.abs(points) > SIM_POINTS) out.push(`429 share ${points > 0 ? "+" : ""}${(100 * points).toFixed(1)} points`);
  if (f.shape.family === "promptfoo" && Math.abs(f.sim.generations / Math.max(1, f.gateway.generations) - 1) > SIM_MAKESPAN)
    out.push(`generations ${f.sim.generations} vs ${f.gateway.generations}`);
  return out;
}

export function rows(f: Figures): { rows: Row[]; line: MatrixLine; pass: boolean } {
  const { shape: s, gateway: gw, direct } = f;
  const t = targets(s.family);
  const scenario = `${s.name}: ${s.label}`;
  const over = s.family === "faults" ? "the direct SDK" : `ideal ${secs(f.idealMs)}`;
  const makespanText = (m: Measured | SimResult, d: { makespanMs: number } | null) => `${secs(m.makespanMs)} = ${times(ratio(f, m, d))}`;
  const goalText = s.family === "quota" ? `<= ${times(t.makespan)} (goal 1.05x)` : `<= ${times(t.makespan)}`;
  const makespanOk = ratio(f, gw, direct) <= t.makespan;
  const shareOk = share429(gw) <= t.share429;
  const callersOk = seen(gw) === 0 && gw.ok === gw.requests;
  const generationsOk = s.family !== "promptfoo" || gw.generations === gw.requests;
  const off = disagreement(f);
  const cost = f.gateway.serialMs === undefined ? "" : `, given the gateway's thread at ${f.gateway.serialMs} ms per request and per attempt, measured`;
  const simText = `${makespanText(f.sim, f.simDirect)}, ${pct(share429(f.sim))} 429${s.family === "promptfoo" ? `, ${f.sim.generations} generations` : ""}, ${f.sim.failed} failed${cost}`;
  const out: Row[] = [
    goal({ scenario, metric: `makespan / ${over}`, baseline: direct ? (s.family === "faults" ? secs(direct.makespanMs) : makespanText(direct, null)) : "", value: makespanText(gw, direct) }, goalText, makespanOk),
    goal({ scenario, metric: "upstream attempts, 429 share", baseline: direct ? `${direct.attempts}, ${pct(share429(direct))} 429` : "", value: `${gw.attempts}, ${pct(share429(gw))} 429` }, `<= ${pct(t.share429, 0)}`, shareOk),
    goal({ scenario, metric: "caller-visible 429s / errors", baseline: direct ? failures(direct) : "", value: failures(gw) }, "0 / 0, all answered", callersOk),
  ];
  if (s.family === "promptfoo") {
    out.push(goal({ scenario, metric: "upstream generations / tests run", baseline: direct ? `${direct.generations} / ${direct.requests}` : "", value: `${gw.generations} / ${gw.requests}` }, "equal", generationsOk));
    out.push({ scenario, metric: `promptfoo wall time (${s.k} CLIs, spawn to last exit)`, baseline: direct ? secs(direct.wallMs ?? 0) : "", value: secs(gw.wallMs ?? 0) });
    if (gw.errorSamples?.length) out.push({ scenario, metric: "promptfoo errors (first)", baseline: "", value: gw.errorSamples.join(" | ") });
  }
  out.push(goal(
    { scenario, metric: "simulator, same shape (makespan, 429s)", baseline: f.simDirect ? `${secs(f.simDirect.makespanMs)}, ${pct(share429(f.simDirect))} 429` : "", value: off.length ? `${simText}; SIM BUG: ${off.join(", ")}` : simText },
    `within ${pct(SIM_MAKESPAN, 0)} / ${SIM_POINTS * 100} points`, off.length === 0,
  ));
  if (f.simFree) {
    // Judged by the issue's goal where it is tighter than the measured row's target (quota: 1.05x).
    const free = ratio(f, f.simFree, f.simDirect);
    const aim = s.family === "quota" ? 1.05 : t.makespan;
    out.push(goal(
      { scenario, metric: "simulator, same shape, a gateway thread that costs nothing (the policy alone)", baseline: "", value: `${times(free)}, ${pct(share429(f.simFree))} 429` },
      `<= ${times(aim)}`, free <= aim,
    ));
  }
  const pass = makespanOk && shareOk && callersOk && generationsOk;
  const misses = [!makespanOk && "makespan", !shareOk && "429s", !callersOk && "callers", !generationsOk && "generations"].filter(Boolean);
  const line: MatrixLine = {
    shape: s.name,
    makespan: `${times(ratio(f, gw, direct))} ${s.family === "faults" ? "direct" : "ideal"} (${secs(gw.makespanMs)}${s.family === "faults" ? "" : ` / ${secs(f.idealMs)}`})`,
    share429: `${pct(share429(gw))} of ${gw.attempts}`,
    callers: `${seen429(gw)} / ${seen(gw)}${s.family === "promptfoo" ? `; ${gw.generations} generations for ${gw.requests} tests` : ""}`,
    sim: `${times(ratio(f, f.sim, f.simDirect))}, ${pct(share429(f.sim))}${s.family === "promptfoo" ? `, ${f.sim.generations} gen.` : ""}`,
    agree: off.length ? `SIM BUG: ${off.join(", ")}` : "agrees",
    verdict: pass ? "pass" : `MISS (${misses.join(", ")})`,
  };
  return { rows: out, line, pass };
}

export function matrixTable(lines: MatrixLine[]): string {
  const head = ["shape", "makespan / ideal", "upstream 429 share", "caller-visible 429s / errors", "simulator (makespan, 429 share)", "simulator vs real", "targets"];
  const line = (c: string[]) => `| ${c.map((x) => x.replaceAll("|", "\\|")).join(" | ")} |`;
  return [line(head), line(head.map(() => "---")), ...lines.map((l) => line([l.shape, l.makespan, l.share429, l.callers, l.sim, l.agree, l.verdict]))].join("\n");
}
