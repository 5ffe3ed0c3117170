// The cap stage of the request path: a virtual key with `maxConcurrency` holds one of its slots
// (slots.ts, in its KeySlots object) from before its first attempt until its answer's body has
// ended, whichever members and models the request goes to. A key without a cap never calls it.
import { renewEvery } from "../limiter/core";
import { streamBack } from "../proxy/answer";
import { gatewayError, retryAfterSeconds } from "../proxy/errors";
import type { Env } from "../env";
import { keySlotsOf, type SlotAnswer } from "./slots-object";

/** A slot's lease; renewed every third of it while the request runs, so a dead Worker's slot comes back within it. */
export const SLOT_TTL_MS = 60_000;
/** Beyond the request's deadline, how long the object may take to answer before the request gives up on it. */
const GRACE_MS = 2_000;

export interface Capped {
  name: string;
  createdAt: string;
  maxConcurrency: number | null;
}

export interface GateRequest {
  env: Env;
  vk: Capped | undefined;
  deadline: number;
  /** The caller left, or its key was revoked: stop waiting. */
  signal: AbortSignal;
  waitUntil: (p: Promise<unknown>) => void;
  now: () => number;
}

/** The caller is gone; never seen, but the runtime wants a Response (proxy/run.ts answers the same). */
const GONE = () => new Response(null, { status: 499 });

/** `forward` with one of the key's slots held around it, or the refusal (429 at the deadline, 503 when the cap cannot be checked). */
export async function gateStage(g: GateRequest, forward: () => Promise<Response>): Promise<Response> {
  const cap = g.vk?.maxConcurrency;
  if (!g.vk || !cap) return forward();
  const stub = keySlotsOf(g.env, g.vk);
  const id = crypto.randomUUID();
  const asked = g.now();
  const answer = await waitForSlot(stub, id, cap, g);
  if (answer === "gone") return GONE();
  if (answer === "unreachable")
    return gatewayError("limiter_unavailable", `the concurrency cap of virtual key ${g.vk.name} could not be checked`, { "retry-after": "1" });
  if (!answer.granted)
    return gatewayError("queue_timeout", `virtual key ${g.vk.name} already has ${cap} requests in flight (its maxConcurrency), and none ended before this request's deadline`, {
      "retry-after": retryAfterSeconds(answer.retryAfterMs),
    });
  const waited = g.now() - asked;
  const renewing = setInterval(() => g.waitUntil(stub.renew(id, cap, SLOT_TTL_MS).catch(() => {})), renewEvery(SLOT_TTL_MS));
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    clearInterval(renewing);
    g.waitUntil(stub.release(id).catch(() => {}));
  };
  let res: Response;
  try {
    res = await forward();
  } catch (err) {
    release();
    throw err;
  }
  return held(res, waited, g.waitUntil, release);
}

/** The slot, a refusal, or why there is no answer. A caller that leaves while waiting gives its place up. */
async function waitForSlot(stub: ReturnType<typeof keySlotsOf>, id: string, cap: number, g: GateRequest): Promise<SlotAnswer | "gone" | "unreachable"> {
  if (g.signal.aborted) return "gone";
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<"gone" | "unreachable">((resolve) => {
    timer = setTimeout(() => resolve("unreachable"), Math.max(0, g.deadline - g.now()) + GRACE_MS);
    onAbort = () => resolve("gone");
    g.signal.addEventListener("abort", onAbort);
  });
  try {
    const got = await Promise.race([stub.acquire(id, cap, Math.max(0, g.deadline - g.now()), SLOT_TTL_MS), stopped]);
    if (typeof got === "string") g.waitUntil(stub.release(id).catch(() => {}));
    return got;
  } catch {
    // Granted after all, perhaps: never leave the slot to its lease's expiry.
    g.waitUntil(stub.release(id).catch(() => {}));
    return "unreachable";
  } finally {
    clearTimeout(timer);
    if (onAbort) g.signal.removeEventListener("abort", onAbort);
  }
}

/** The answer with the slot held until its body has ended (or the caller left), and the wait counted as queueing. */
function held(res: Response, waitedMs: number, waitUntil: (p: Promise<unknown>) => void, release: () => void): Response {
  const headers = new Headers(res.headers);
  const queued = headers.get("x-slotgate-queue-ms");
  if (queued !== null) headers.set("x-slotgate-queue-ms", String(Math.round(Number(queued) + waitedMs)));
  return streamBack(res.body, { status: res.status, statusText: res.statusText, headers }, waitUntil, release);
}
