// The overhead shape's figures for several gateways at once (this tree, `--against`, their
// probes), each set against the plain Worker measured in the same alternated rounds. Pure: the
// runs are bench/scenarios/overhead.ts's.
import type { Beside, Via } from "./context.ts";
import { goal, ms, perSec, type Row, share, type Spread, spread, times } from "./stats.ts";

/** One target's answers over all its rounds: how many, in how long, each one's latency, and the CPU its Worker's workerd used. */
export interface Pooled {
  ok: number;
  seconds: number;
  latency: number[];
  key: string | null;
  /** ms over all threads (bench/context.ts, workerdCpuMs); 0: not read. */
  cpuMs: number;
}

/**
 * Round `r`'s order: each round starts one place later, and every other round goes the other way
 * round, so no target always goes first, and none always runs right after the same one (in one
 * direction only, two rounds ran the tree beside this one right after it every time).
 */
export function rotation<T>(xs: readonly T[], r: number): T[] {
  const n = xs.length;
  if (n === 0) return [];
  const at = r % n;
  return Array.from({ length: n }, (_, i) => xs[(at + (r % 2 ? n - i : i)) % n]!);
}

/** A gateway in the comparison: how a client reaches it, the name its rows carry, and whether it is a probe. */
export interface Compared {
  via: Via;
  name: string;
  probe: boolean;
}

/** This tree's gateway first, then each beside it. Alone, its rows read as they always have (no name). */
export function compared(name: string | undefined, beside: readonly Pick<Beside, "name" | "probe">[] = []): Compared[] {
  return [{ via: "gateway", name: name ?? "this tree", probe: false }, ...beside.map((b) => ({ via: `beside:${b.name}` as Via, name: b.name, probe: b.probe }))];
}

/**
 * Issue 40's targets against the plain Worker: added p50 at 1 in flight; throughput at 48 in
 * flight, a whole gateway's and a probe's (a gateway that never asks its limiter).
 */
export const TARGETS = { addedP50Ms: 1.5, gateway: 0.75, probe: 0.9 } as const;

const rate = (p: Pooled) => share(p.ok, p.seconds);
const named = (g: Compared, all: readonly Compared[]) => (all.length > 1 ? ` [${g.name}]` : "");
const loaded = (load: number) => ` (load ${load.toFixed(1)})`;

/** At `c` in flight: each gateway's p50 / p99 beside the plain Worker's and the floor's, and what it adds. */
export function latencyRows(scenario: string, c: number, load: number, pooled: Record<string, Pooled>, gateways: readonly Compared[]): { rows: Row[]; data: Record<string, unknown> } {
  const [pt, fl] = [spread(pooled.passthrough!.latency), spread(pooled.floor!.latency)];
  const rows: Row[] = [];
  const data: Record<string, Spread | number> = { passthrough: pt, floor: fl, load };
  for (const g of gateways) {
    const gw = spread(pooled[g.via]!.latency);
    const [added50, added99] = [gw.p50 - pt.p50, gw.p99 - pt.p99];
    const n = named(g, gateways);
    rows.push({ scenario, metric: `${c} in flight: p50 / p99${n} (plain Worker + 1 empty object call: ${ms(fl.p50)} / ${ms(fl.p99)})${loaded(load)}`, baseline: `${ms(pt.p50)} / ${ms(pt.p99)}`, value: `${ms(gw.p50)} / ${ms(gw.p99)}` });
    rows.push(goal({ scenario, metric: `${c} in flight: added p50 / p99${n} (floor: ${ms(fl.p50 - pt.p50)} / ${ms(fl.p99 - pt.p99)})`, baseline: "0", value: `${ms(added50)} / ${ms(added99)}` }, `p50 <= +${TARGETS.addedP50Ms} ms`, added50 <= TARGETS.addedP50Ms));
    data[g.name] = gw;
  }
  return { rows, data };
}

/** At `inFlight`: each gateway's answers a second as a share of the plain Worker's, and the floor's beside. */
export function throughputRows(scenario: string, inFlight: number, load: number, pooled: Record<string, Pooled>, gateways: readonly Compared[]): { rows: Row[]; data: Record<string, unknown> } {
  const plain = rate(pooled.passthrough!);
  const floor = share(rate(pooled.floor!), plain);
  const rows: Row[] = [];
  const data: Record<string, number> = { passthrough: plain, floor: rate(pooled.floor!), load };
  for (const g of gateways) {
    const ratio = share(rate(pooled[g.via]!), plain);
    const target = g.probe ? TARGETS.probe : TARGETS.gateway;
    const what = g.probe ? "probe" : "gateway";
    rows.push(goal({ scenario, metric: `throughput at ${inFlight} in flight (${what} / plain Worker${named(g, gateways)}; plain + 1 object call: ${times(floor)})${loaded(load)}`, baseline: perSec(plain), value: `${perSec(rate(pooled[g.via]!))} = ${times(ratio)}` }, `>= ${target}x`, ratio >= target));
    data[g.name] = rate(pooled[g.via]!);
    data[`${g.name} ratio`] = ratio;
  }
  return { rows, data };
}

/** workerd CPU an answer (ms), or null where none was read. */
const cpuPerAnswer = (p: Pooled) => (p.cpuMs > 0 && p.ok > 0 ? p.cpuMs / p.ok : null);

/**
 * At `inFlight`: the CPU each gateway's workerd spent an answer, against the plain Worker's of the
 * same rounds and the floor's. A request's cost to the runtime, read from the kernel's count rather
 * than the clock; a Worker bound by its CPU answers about its inverse. It still rises with the
 * machine's load, so only the ratios of one run compare. None where the CPU could not be read (not Linux).
 */
export function cpuRows(scenario: string, inFlight: number, pooled: Record<string, Pooled>, gateways: readonly Compared[]): { rows: Row[]; data: Record<string, number> } {
  const [plain, floor] = [cpuPerAnswer(pooled.passthrough!), cpuPerAnswer(pooled.floor!)];
  if (plain === null) return { rows: [], data: {} };
  const rows: Row[] = [];
  const data: Record<string, number> = { passthrough: plain, ...(floor !== null && { floor }) };
  const floorSays = floor === null ? "" : `; plain + 1 object call: ${ms(floor)} = ${times(floor / plain)}`;
  for (const g of gateways) {
    const cpu = cpuPerAnswer(pooled[g.via]!);
    if (cpu === null) continue;
    rows.push({ scenario, metric: `workerd CPU an answer at ${inFlight} in flight (${g.probe ? "probe" : "gateway"} / plain Worker${named(g, gateways)}${floorSays})`, baseline: ms(plain), value: `${ms(cpu)} = ${times(cpu / plain)}` });
    data[g.name] = cpu;
  }
  return { rows, data };
}
