// One isolate's tickets for one key (the isolate's side of tickets; policy.ts says when and how many):
// admissions its object granted ahead, used by the requests that arrive here while the key has room,
// given back when they pass their time or the key's epoch changes. Kept in the isolate's channel to
// the key (src/proxy/channel.ts).
import { adopts } from "./epoch";
import { type Ask, askFor, TICKET_VALID_MS, TICKETS_PER_ISOLATE } from "./policy";
import type { ExchangeReply, Pacing } from "../types";

interface Ticket {
  id: string;
  cost: number;
  /** The output allowance the object reserved (absent: it reserved none). */
  out?: number;
  /** Isolate time after which it is not used (counted from the batch's send, before the issue). */
  until: number;
  epoch: number | undefined;
}

/** What a request going on a ticket needs: its id at the object, and what a grant would have said. */
export type Redeemed = { id: string; leaseTtlMs: number } & Pacing;

export class HeldTickets {
  #held: Ticket[] = [];
  /** The key's epoch: the newest its object said (epoch.ts). */
  #epoch: number | undefined;
  /** Answers heard, and how many had been heard once the current epoch was taken: a batch sent since is answered later. */
  #answers = 0;
  #adoptedAt = 0;
  /** When this isolate's last requests for the key came, and what they cost (the sizing of its asks). */
  #times: number[] = [];
  #costs: number[] = [];
  #outs: number[] = [];
  #grant: { leaseTtlMs: number } & Pacing = { leaseTtlMs: 0, limit: 0 };

  get size(): number {
    return this.#held.length;
  }

  /**
   * A request of `cost` (and `out` of output) asks for a slot: a ticket it may go on (its epoch the
   * key's last, its time not passed, its cost enough), or null. Counted for the next asks either way.
   */
  take(cost: number, now: number, out = 0): Redeemed | null {
    this.#times.push(now);
    this.#costs.push(cost);
    this.#outs.push(out);
    if (this.#times.length > TICKETS_PER_ISOLATE + 1) this.#times.shift(), this.#costs.shift(), this.#outs.shift();
    const i = this.#held.findIndex((t) => t.epoch === this.#epoch && t.until > now && cost <= t.cost && (t.out === undefined || out <= t.out));
    if (i < 0) return null;
    const [t] = this.#held.splice(i, 1);
    return { id: t!.id, ...this.#grant };
  }

  /** What a batch leaving now asks for: about what this isolate sent in the last ticket period. */
  ask(now: number): Ask | undefined {
    const recent = this.#times.filter((t) => now - t < TICKET_VALID_MS).length - 1;
    const want = askFor(recent, this.#held.length);
    if (want <= 0) return undefined;
    // An output allowance only where requests named one (a key whose row limits generated tokens apart).
    const out = Math.max(...this.#outs);
    return { want, cost: Math.max(...this.#costs), ...(out > 0 && { out }) };
  }

  /** What a batch leaving now carries back to `heard`: how many answers had been heard when it left. */
  get mark(): number {
    return this.#answers;
  }

  /**
   * An answer from the key's object: its epoch, and the tickets it brought (`sentAt`: when its
   * batch left; `mark`: `mark` then, by default now). An answer that crossed a newer one on its way
   * brings its epoch back only if it is newer (epoch.ts). Returns the ids to give back: those of an
   * epoch not the newest, the late answer's own among them.
   */
  heard(reply: Pick<ExchangeReply, "epoch" | "tickets">, sentAt: number, mark = this.#answers): string[] {
    this.#answers++;
    if (reply.epoch !== undefined && adopts(this.#epoch, reply.epoch, mark >= this.#adoptedAt)) {
      this.#epoch = reply.epoch;
      this.#adoptedAt = this.#answers;
    }
    const t = reply.tickets;
    if (t) {
      this.#grant = { leaseTtlMs: t.leaseTtlMs, limit: t.limit, ...(t.ratePerMin !== undefined && { ratePerMin: t.ratePerMin }) };
      for (const id of t.ids) this.#held.push({ id, cost: t.cost, ...(t.out !== undefined && { out: t.out }), until: sentAt + TICKET_VALID_MS, epoch: reply.epoch });
    }
    return this.#drop((x) => x.epoch !== this.#epoch);
  }

  /** The ids of tickets past their time, to give back. */
  expired(now: number): string[] {
    return this.#drop((t) => t.until <= now);
  }

  #drop(gone: (t: Ticket) => boolean): string[] {
    const out = this.#held.filter(gone);
    if (out.length > 0) this.#held = this.#held.filter((t) => !gone(t));
    return out.map((t) => t.id);
  }
}
