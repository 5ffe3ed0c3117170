import type { Tier } from "../providers/dialect";
import { DEFAULT_CALLER } from "./callers";
import { DEFAULT_WEIGHTS, isLane, type Lane, LANES, type LaneWeights } from "./lanes";

export { DEFAULT_CALLER } from "./callers";

/** Someone waiting for a slot. `retry` waiters were already first in their line once. */
export interface Waiter {
  id: string;
  cost: number;
  /** Its output allowance: what a window of generated tokens is charged (absent: none). */
  out?: number;
  deadline: number;
  retry: boolean;
  enqueuedAt: number;
  /** Who asked (see callers.ts); absent: the default caller. */
  caller?: string;
  /** Absent: normal. */
  lane?: Lane;
  /** A pooled request (see membership.ts). */
  pooled?: boolean;
  /** The service tier it asks to go at, when not standard: its grant says whether the key's outlook has it shed. */
  tier?: Tier;
}

/** One caller's line in one lane: its retries, then its fresh arrivals, each in arrival order. */
interface Line<W> {
  retries: W[];
  fresh: W[];
  /** Virtual time at which this caller's last grant's share ends. */
  finish: number;
}

interface LaneState<W> {
  name: Lane;
  /** Virtual time (the queue's clock) at which this lane's last grant's share ends. */
  finish: number;
  /** The lane's own virtual clock, which its callers' lines are tagged against. */
  clock: number;
  lines: Map<string, Line<W>>;
  size: number;
}

interface Entry<W> {
  w: W;
  seq: number;
  lane: Lane;
  caller: string;
}

interface Choice<W> {
  lane: LaneState<W>;
  line: Line<W>;
  laneStart: number;
  lineStart: number;
}

const lineSize = (l: Line<unknown>) => l.retries.length + l.fresh.length;
/** What a grant counts for in the shares: its tokens, at least 1 (a free request is not free). */
const units = (cost: number) => (Number.isFinite(cost) && cost > 1 ? cost : 1);

/**
 * Fair shares between the callers of one key: start-time fair queueing in two levels. Lanes share
 * by their weights, the callers within a lane equally, both counted in tokens (a request's cost).
 * A line's next request starts at the later of its lane's virtual clock and the end of the line's
 * previous share; the smallest start goes first (ties: the earlier arrival). So a backlogged
 * caller gets its share and no more, and a caller with one request waiting goes at the next turn
 * rather than behind everyone else's backlog. Each line is FIFO with its retries at its head.
 *
 * A line that empties keeps its finish (refilling it must not jump the others) until its lane's
 * clock passes it; a lane with nobody left forgets its callers, and an empty queue forgets all.
 * With one caller in one lane (everyone who sends no header) this is the old FIFO exactly.
 */
export class WaitQueue<W extends Waiter = Waiter> {
  weights: LaneWeights;
  #clock = 0;
  #lanes: Record<Lane, LaneState<W>>;
  #byId = new Map<string, Entry<W>>();
  #seq = 0;
  /** A lower bound on the earliest deadline: no pump scans the queue before it passes. */
  #soonest = Infinity;

  constructor(weights: LaneWeights = DEFAULT_WEIGHTS) {
    this.weights = weights;
    const lane = (name: Lane): LaneState<W> => ({ name, finish: 0, clock: 0, lines: new Map(), size: 0 });
    this.#lanes = { high: lane("high"), normal: lane("normal"), low: lane("low") };
  }

  get size(): number {
    return this.#byId.size;
  }

  push(w: W): void {
    const lane = isLane(w.lane) ? w.lane : "normal";
    const caller = w.caller ?? DEFAULT_CALLER;
    const l = this.#lanes[lane];
    let line = l.lines.get(caller);
    if (!line) l.lines.set(caller, (line = { retries: [], fresh: [], finish: 0 }));
    (w.retry ? line.retries : line.fresh).push(w);
    l.size++;
    this.#byId.set(w.id, { w, seq: ++this.#seq, lane, caller });
    if (w.deadline < this.#soonest) this.#soonest = w.deadline;
  }

  /** Who goes next, if anyone may: the head of the line with the smallest start. */
  peek(): W | undefined {
    const c = this.#choose();
    return c ? (c.line.retries[0] ?? c.line.fresh[0]) : undefined;
  }

  shift(): W | undefined {
    const c = this.#choose();
    if (!c) return undefined;
    const w = (c.line.retries.shift() ?? c.line.fresh.shift())!;
    const u = units(w.cost);
    this.#clock = c.laneStart;
    c.lane.finish = c.laneStart + u / this.#weight(c.lane.name);
    c.lane.clock = c.lineStart;
    c.line.finish = c.lineStart + u;
    this.#byId.delete(w.id);
    c.lane.size--;
    this.#tidy(c.lane);
    return w;
  }

  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The waiter queued under `id`, left in place. */
  peekId(id: string): W | undefined {
    return this.#byId.get(id)?.w;
  }

  remove(id: string): W | undefined {
    const e = this.#byId.get(id);
    if (!e) return undefined;
    const l = this.#lanes[e.lane];
    const line = l.lines.get(e.caller)!;
    for (const list of [line.retries, line.fresh]) {
      const i = list.indexOf(e.w);
      if (i >= 0) list.splice(i, 1);
    }
    this.#byId.delete(id);
    l.size--;
    this.#tidy(l);
    return e.w;
  }

  /** Removes and returns, in queue order, every waiter whose deadline is at or before `now`. */
  takeExpired(now: number): W[] {
    if (now < this.#soonest) return [];
    const out: W[] = [];
    this.#soonest = Infinity;
    const keep = (list: W[]) =>
      list.filter((w) => {
        if (w.deadline > now) {
          if (w.deadline < this.#soonest) this.#soonest = w.deadline;
          return true;
        }
        out.push(w);
        return false;
      });
    for (const name of LANES) {
      const l = this.#lanes[name];
      for (const line of l.lines.values()) {
        line.retries = keep(line.retries);
        line.fresh = keep(line.fresh);
      }
    }
    for (const w of out) {
      const e = this.#byId.get(w.id)!;
      this.#byId.delete(w.id);
      this.#lanes[e.lane].size--;
    }
    if (out.length > 0) for (const name of LANES) this.#tidy(this.#lanes[name]);
    return out;
  }

  /** The earliest deadline, or a moment a little before it (waking early only costs a pump). */
  earliestDeadline(): number | null {
    return this.size === 0 ? null : this.#soonest;
  }

  /** Empties the queue, returning everyone who was in it (lane by lane, caller by caller). */
  drain(): W[] {
    const all = [...this];
    for (const name of LANES) {
      this.#lanes[name].lines.clear();
      this.#lanes[name].size = 0;
    }
    this.#byId.clear();
    this.#tidyAll();
    return all;
  }

  /** Waiters queued per caller, over every lane. */
  queuedBy(): Map<string, number> {
    const out = new Map<string, number>();
    for (const name of LANES)
      for (const [caller, line] of this.#lanes[name].lines) if (lineSize(line) > 0) out.set(caller, (out.get(caller) ?? 0) + lineSize(line));
    return out;
  }

  /**
   * Where a caller stands in a lane: how many of its requests wait there, and the least share of
   * the grants it gets while every line with work waiting keeps its own (as if it were waiting too).
   */
  standing(caller: string = DEFAULT_CALLER, lane: Lane = "normal"): { ahead: number; share: number } {
    const l = this.#lanes[isLane(lane) ? lane : "normal"];
    const mine = l.lines.get(caller);
    let weights = 0;
    for (const name of LANES) if (name === l.name || this.#lanes[name].size > 0) weights += this.#weight(name);
    let others = 0;
    for (const line of l.lines.values()) if (line !== mine && lineSize(line) > 0) others++;
    return { ahead: mine ? lineSize(mine) : 0, share: this.#weight(l.name) / weights / (others + 1) };
  }

  *[Symbol.iterator](): IterableIterator<W> {
    for (const name of LANES)
      for (const line of this.#lanes[name].lines.values()) {
        yield* line.retries;
        yield* line.fresh;
      }
  }

  #weight(name: Lane): number {
    const w = this.weights[name];
    return Number.isFinite(w) && w > 0 ? w : DEFAULT_WEIGHTS[name];
  }

  /**
   * The lane, then the line within it, with the smallest start; ties go to the earlier lane, then
   * the earlier arrival.
   */
  #choose(): Choice<W> | null {
    let best: Choice<W> | null = null;
    for (const name of LANES) {
      const lane = this.#lanes[name];
      if (lane.size === 0) continue;
      const laneStart = Math.max(this.#clock, lane.finish);
      if (best && laneStart >= best.laneStart) continue;
      let line: Line<W> | null = null;
      let lineStart = Infinity;
      let first = Infinity;
      for (const x of lane.lines.values()) {
        const head = x.retries[0] ?? x.fresh[0];
        if (!head) continue;
        const s = Math.max(lane.clock, x.finish);
        const seq = this.#byId.get(head.id)!.seq;
        if (s < lineStart || (s === lineStart && seq < first)) [line, lineStart, first] = [x, s, seq];
      }
      if (line) best = { lane, line, laneStart, lineStart };
    }
    return best;
  }

  /** Empty lines whose share the lane's clock has passed say nothing more; nor does an empty lane. */
  #tidy(l: LaneState<W>): void {
    if (l.size === 0) {
      l.lines.clear();
      l.clock = 0;
    } else for (const [caller, line] of l.lines) if (lineSize(line) === 0 && line.finish <= l.clock) l.lines.delete(caller);
    if (this.#byId.size === 0) this.#tidyAll();
  }

  #tidyAll(): void {
    this.#clock = 0;
    for (const name of LANES) this.#lanes[name].finish = 0;
    this.#soonest = Infinity;
  }
}
