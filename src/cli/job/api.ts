// What the job needs of a provider's batch API, whoever it is: create a chunk's batch, look at it,
// cancel it, read its answers, find what was made lately. openai.ts and anthropic.ts fill it in.
import type { SendContext } from "../exchange";
import type { Item } from "../input";
import type { OutputLine } from "../types";
import type { Counts, PlanEvent } from "./journal";
import { call, errorText, type Reply } from "./http";

/** Batches made before a crash are looked for this far before the time its create was recorded (clocks differ). */
const SKEW_MS = 120_000;

export interface BatchView {
  id: string;
  /** The provider's own word for its state (OpenAI's status, Anthropic's processing_status). */
  status: string;
  /** Over: nothing more will change. */
  ended: boolean;
  /** Ended without running anything: refused for queue room (`queue`), or for its input. */
  refused: { queue: boolean; code: string; message: string } | null;
  counts: Counts;
  /** Epoch ms. */
  createdAt: number;
  metadata: Record<string, unknown> | null;
  /** OpenAI: the output file, once there is one. */
  output?: string | null;
}

export type Created =
  | { kind: "created"; view: BatchView }
  /** No batch was made: `queue` (no room now), `error` (its lines go synchronously), `stop` (the key or its budget may not: the job stops). */
  | { kind: "refused"; why: "queue" | "error" | "stop"; code: string; message: string };

export interface ApiContext {
  ctx: SendContext;
  /** The provider's base URL, or the gateway's route for it. */
  base: string;
  headers: (url: string) => Record<string, string>;
}

export interface BatchApi {
  /**
   * Makes the chunk's batch of `items`, under `meta` where the API keeps metadata. OpenAI uploads
   * the lines first (`fileId`: a file an earlier attempt uploaded) and tells `noteFile` its id.
   */
  create(chunk: PlanEvent, items: Item[], meta: Record<string, string>, fileId: string | undefined, noteFile: (id: string) => void): Promise<Created>;
  get(id: string): Promise<BatchView>;
  cancel(id: string): Promise<BatchView>;
  /** An ended batch's answered lines as output lines, by custom_id; every other line of the chunk has none. */
  answers(view: BatchView, chunk: PlanEvent): Promise<Map<string, OutputLine>>;
  /** Batches made at `since` (epoch ms) or later, newest first: a batch whose create was not recorded (a crash) is found here. */
  recent(since: number): Promise<BatchView[]>;
}

/** A create whose answer says nothing of whether the batch was made (a 5xx): it is looked for before anything is sent again. */
export class Uncertain extends Error {}

/**
 * A create's refusal: 429 is no room yet; a 401, 402 or 403 says the key (its scopes, its budget)
 * may not make batches, which no line of the job would change; anything else sends them synchronously.
 */
export function refusal(r: Reply): Created {
  const { code, message } = errorText(r);
  if (r.status >= 500) throw new Uncertain(`create: HTTP ${r.status} ${code}: ${message}`);
  const why = r.status === 429 ? "queue" : r.status === 401 || r.status === 402 || r.status === 403 ? "stop" : "error";
  return { kind: "refused", why, code: r.headers.get("x-slotgate-error") ?? code, message };
}

/** The job cannot go on (the key may not make batches); what it recorded stands, and --resume goes on once that is fixed. */
export class JobStopped extends Error {}

/** A look that did not answer 2xx: the job cannot go on with this batch now. */
export class ApiError extends Error {
  constructor(what: string, r: Reply) {
    const { code, message } = errorText(r);
    super(`${what}: HTTP ${r.status} ${code}: ${message}`);
  }
}

export const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
export const num = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** Pages through a newest-first list of batches (`page(after)` names each page's URL) until they are older than `since`. */
export async function listSince(a: ApiContext, page: (after: string) => string, view: (b: Record<string, unknown>) => BatchView, since: number): Promise<BatchView[]> {
  const found: BatchView[] = [];
  for (let after = ""; ; ) {
    const url = page(after);
    const r = await call(a.ctx, "GET", `${a.base}${url}`, { headers: a.headers(url) });
    if (r.status >= 300 || !isObj(r.json) || !Array.isArray(r.json.data)) throw new ApiError("list batches", r);
    const views = r.json.data.filter(isObj).map(view);
    found.push(...views.filter((v) => v.createdAt >= since - SKEW_MS));
    if (!r.json.has_more || views.length === 0 || views.at(-1)!.createdAt < since - SKEW_MS) return found;
    after = views.at(-1)!.id;
  }
}

/** A call whose answer is one batch object, as `view` reads it; anything but a 2xx object is an ApiError. */
export function batchCall(a: ApiContext, view: (b: Record<string, unknown>) => BatchView) {
  return async (what: string, method: string, url: string, body?: string): Promise<BatchView> => {
    const r = await call(a.ctx, method, `${a.base}${url}`, { headers: { ...a.headers(url), "content-type": "application/json" }, body });
    if (r.status >= 300 || !isObj(r.json)) throw new ApiError(what, r);
    return view(r.json);
  };
}
