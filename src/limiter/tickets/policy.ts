// Tickets (issue 36): admissions a key's object grants an isolate ahead of its requests while the
// key has room to spare, so a request arriving there goes upstream without a call and its ops go
// back afterwards, off its path. A ticket is a grant made early: it holds a slot and its cost in
// every quota window from the moment it is issued, so the object's view stays exact. It is used
// (the isolate says so after), given back, or lapses and is counted as used.
// This file is the policy: when and how many. The rest of the folder: what they do to the key's
// state (effects.ts), the ones out (book.ts), what a restart holds back (mark.ts), the order of
// their epochs (epoch.ts), and an isolate's own (isolate.ts). Pure: time is passed in.

/** How long after it asked an isolate may use a ticket (measured from its send, before the issue). */
export const TICKET_VALID_MS = 1_000;
/** After this, a ticket nothing was heard of is counted as used: its use may still be on its way. */
export const TICKET_LAPSE_MS = 2_000;
/** Most tickets one isolate holds for one key. */
export const TICKETS_PER_ISOLATE = 8;
/** Tickets out never hold more than this share of a key's free slots or of what a window holds. */
export const TICKET_SHARE = 0.5;

/** What an isolate asks for: `want` more tickets, each good for a request of up to `cost` tokens (and `out` of output). */
export interface Ask {
  want: number;
  cost: number;
  out?: number;
}

/** What the tickets out hold of each window. */
export interface Reserved {
  requests: number;
  tokens: number;
  output: number;
}

/** What the key's object knows when it answers an ask. */
export interface KeyRoom {
  /** Waiters in line, and retries holding a claim on a refill. */
  queued: number;
  claims: number;
  gateOpen: boolean;
  /** A new key is learning or opening (timing.ts): its limit is not yet its own. */
  opening: boolean;
  limit: number;
  /** Slots held, tickets not yet used among them. */
  busy: number;
  idle: number;
  /** What each window holds now (null: no window known), and what the tickets out reserve of it. */
  requests: number | null;
  tokens: number | null;
  /** The generated tokens' window, where the key has one. */
  output?: number | null;
  reserved: Reserved;
}

/**
 * How many tickets to give an isolate that asks. None while anyone waits (or a refused request's
 * retry is owed a refill), the gate is shut, or a new key is still finding its limit; otherwise
 * what it asks, up to TICKETS_PER_ISOLATE, while every ticket out stays within TICKET_SHARE of the
 * slots the key's requests leave free and of what each quota window holds. A key that is busy, or
 * short in a window, hands out none: its requests go through the queue as before.
 */
export function ticketsFor(k: KeyRoom, ask: Ask): number {
  if (k.queued > 0 || k.claims > 0 || !k.gateOpen || k.opening || !(Number.isFinite(ask.cost) && ask.cost >= 0)) return 0;
  const cost = ask.cost;
  let n = Math.min(Math.floor(ask.want) || 0, TICKETS_PER_ISOLATE);
  n = Math.min(n, Math.floor((k.limit - (k.busy - k.idle)) * TICKET_SHARE) - k.idle);
  if (k.requests !== null) n = Math.min(n, Math.floor(k.requests * TICKET_SHARE - k.reserved.requests));
  if (k.tokens !== null && cost > 0) n = Math.min(n, Math.floor((k.tokens * TICKET_SHARE - k.reserved.tokens) / cost));
  const out = ask.out ?? 0;
  if (k.output != null && out > 0) n = Math.min(n, Math.floor((k.output * TICKET_SHARE - k.reserved.output) / out));
  return Math.max(0, n);
}

/** The most tickets a key with `limit` slots can have out at once (ticketsFor's share of its free slots). */
export const ticketsAtMost = (limit: number) => Math.floor(limit * TICKET_SHARE);

/**
 * How many more tickets an isolate asks for: about as many requests as it sent the key in the last
 * TICKET_VALID_MS (before this one), up to TICKETS_PER_ISOLATE, less what it holds. An isolate that
 * sent nothing lately asks for none, so a key used now and then costs what it did before.
 */
export function askFor(recent: number, held: number): number {
  return Math.max(0, Math.min(TICKETS_PER_ISOLATE, recent) - held);
}

/**
 * A reading below what the model held by a request's worth or more (`unit`: 1 for requests, a
 * request's cost for tokens): someone the key cannot see drew on the window, or the model ran
 * ahead. The tickets out are taken back, as after a 429.
 */
export function fellBelow(before: number | null, after: number | null, unit: number): boolean {
  return before !== null && after !== null && after <= before - Math.max(1, unit);
}
