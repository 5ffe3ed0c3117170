/**
 * @module One request on its way through the stages (routes/proxy.ts): the record each stage reads
 * and fills, as Hono's context is for its handlers. Built once per request; its body is parsed at
 * most once (`json`), and dropped before the request waits in a queue. It is also the retry loop's
 * Plan (plan.ts): what the loop reads of a request, it reads here.
 */
import type { BudgetHandle } from "../budget/stage";
import { countUpstream } from "../directory/upstream";
import type { Env } from "../env";
import type { KeyMeta } from "../limiter/types";
import type { RequestSpan } from "../observe/spans";
import type { Found } from "../pools/admit";
import type { KeyStage } from "../pools/stage";
import type { Pool } from "../pools/config";
import type { Dialect, Tier } from "../providers/dialect";
import type { TierAsk } from "../tiers/choose";
import type { TierPlan } from "../tiers/plan";
import type { Meter } from "../usage/meter";
import type { Tags } from "../usage/types";
import type { Asked } from "./asked";
import type { Who } from "./caller";
import { parseJson } from "./forward";
import { LimiterClient } from "./limiter-client";
import type { Plan } from "./plan";
import type { Described } from "./request";
import type { Settings } from "./settings";
import type { Route } from "./target";

/** A virtual key's request: its key, its pool and the reference its revocation is watched by. */
export type Pooled = Extract<KeyStage, { kind: "pool" }>;

/** A stage of the request path: answers itself, or hands on to `next` and does its after-work on what comes back. */
export type Stage = (call: Call, next: () => Promise<Response>) => Promise<Response>;

const UNREAD = Symbol("unread");

export class Call implements Plan {
  // The request as it came.
  readonly env: Env;
  readonly req: Request;
  readonly incoming: URL;
  readonly start: number;
  readonly waitUntil: (p: Promise<unknown>) => void;
  readonly signal: AbortSignal;

  // What the first stages learn: who may call (door), the settings, what is asked, its span.
  found?: Found;
  settings!: Settings;
  asked!: Asked;
  /** Its GenAI operation (`chat`, `embeddings`, ...); null: none. */
  op: string | null = null;
  trace?: RequestSpan;

  // Who asks (caller): the caller and lane its key's limiter files it under, the tier its headers ask for, its virtual key.
  who: Who = {};
  ask!: TierAsk;
  pooled: Pooled | null = null;

  // Its body (body), whether its credential has proven the identity its path names (proven), and what it says (described).
  bytes: Uint8Array = new Uint8Array(0);
  proven?: (credentialHash: string, identity: string) => boolean;
  #json: unknown = UNREAD;
  read!: Described;
  dialect!: Dialect;
  /** The key it counts against (a pool's members each bring their own). */
  key!: KeyMeta;
  /** What goes upstream: the caller's headers without the gateway's own. */
  headers!: Headers;
  tier?: TierPlan;
  /** Every tier an answer may come at (tiers/plan.ts): what a budget reserves at the dearest of. */
  servedAt: readonly Tier[] = ["standard"];

  // Where it goes and what it may spend: the pool narrowed to a member (batches, stored objects), its route, its budget.
  pool?: Pool;
  /** A provider batch's or file's own call (src/batches/): no answer to meter. */
  batch = false;
  route?: Route;
  charges?: BudgetHandle;
  meter?: Meter;
  /** Its virtual key was revoked: stop waiting. */
  stop?: AbortSignal;

  #tags?: Tags;

  constructor(env: Env, req: Request, waitUntil: (p: Promise<unknown>) => void, start: number) {
    this.env = env;
    this.req = req;
    this.incoming = new URL(req.url);
    this.start = start;
    this.waitUntil = waitUntil;
    this.signal = req.signal;
  }

  /** The body's JSON, parsed on first use and only then (null: not JSON). */
  get json(): unknown {
    if (this.#json === UNREAD) this.#json = parseJson(this.bytes);
    return this.#json;
  }

  /** Before the request waits: only its bytes stay held, never their parsed copy. */
  dropJson(): void {
    this.#json = UNREAD;
  }

  // The retry loop's Plan, read off the record.
  get url(): URL {
    return this.asked.url;
  }
  get method(): string {
    return this.asked.method;
  }
  get body(): Uint8Array | null {
    return this.asked.hasBody ? this.read.sent.bytes : null;
  }
  get cost(): number {
    return this.read.cost;
  }
  get out(): number | undefined {
    return this.read.out;
  }
  get unsure(): boolean {
    return this.read.unsure === true;
  }
  get stream(): boolean {
    return this.read.stream;
  }
  get deadline(): number {
    return this.asked.deadline;
  }
  get maxAttempts(): number {
    return this.asked.maxAttempts;
  }
  get gateway() {
    return this.settings.gw;
  }
  get tags(): Tags {
    return (this.#tags ??= { caller: this.who.caller, virtualKey: this.pooled?.vk.name, pool: this.pooled?.pool.name });
  }
  get operation(): Plan["operation"] {
    return this.op ? { op: this.op, model: this.read.model, start: this.start } : undefined;
  }

  /** A limiter for a key: the request's own, a tier's, a pool member's. */
  limiterFor = (m: KeyMeta) => new LimiterClient(this.env.LIMITER, m, { waitUntil: this.waitUntil, location: this.settings.location });

  /** Hears what each attempt got from the provider it went to (the gateway's counts, directory/upstream.ts). */
  upstream = (provider: string, status: number | null) => countUpstream(this.env.DIRECTORY, this.waitUntil, provider, status, this.settings.statsMs);
}

/**
 * Runs `stages` in order over `call`, as Hono's compose runs its handlers: each gets a `next` that
 * runs the rest; the last stage must answer. A stage's work after the answer is written after
 * `await next()` in the same stage.
 */
export function pipeline(stages: readonly Stage[]): (call: Call) => Promise<Response> {
  return (call) => {
    const dispatch = (i: number): Promise<Response> => {
      const stage = stages[i];
      if (!stage) throw new Error("the request path's last stage did not answer");
      return stage(call, () => dispatch(i + 1));
    };
    return dispatch(0);
  };
}
