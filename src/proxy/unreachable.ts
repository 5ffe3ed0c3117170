// Why an attempt got no whole answer, in words a caller may read, and what the 502 says when none
// ever came. The error's own text is never passed on: a fetch error may hold the URL, and Gemini's
// URL holds its key (`?key=`). Pure: steps.ts (unreachable) does the acting.
import { UpstreamTimeout } from "./attempt-timer";

/** What stopped it: our own time limit, a refused or dropped connection, a name or certificate, a cut answer, or something else. */
export type Cause = "timeout" | "connection" | "dns_or_tls" | "broken" | "other";

export interface Why {
  cause: Cause;
  /** The cause in words, safe to show: built here, never copied from the error. */
  words: string;
}

/**
 * workerd's fetch throws these (seen under wrangler dev with wrangler 4.164's workerd): a refused or
 * reset connection is "Network connection lost."; a name that does not resolve and a TLS handshake
 * that fails are both an "internal error" with a reference, the real reason being in the runtime's
 * own log under that reference (the Worker is not told which of the two it was).
 */
const LOST = /^Network connection lost\.?$/;
const INTERNAL = /^internal error; reference = ([a-z0-9]{1,64})$/;

/**
 * `err`: what the fetch (or the body's read, `midBody`) threw; `limit`: the attempt's own time
 * limit when it ran out (attempt-timer.ts), whose message names the variable.
 */
export function whyUnreachable(err: unknown, limit: unknown, midBody: boolean): Why {
  if (limit instanceof UpstreamTimeout) return { cause: "timeout", words: limit.message };
  const message = err instanceof Error ? err.message : "";
  const internal = INTERNAL.exec(message);
  if (midBody) return { cause: "broken", words: `the answer broke off before its end${LOST.test(message) ? " (the connection was lost)" : ""}` };
  if (LOST.test(message)) return { cause: "connection", words: "the connection was refused or lost (nothing listening at that address, or it hung up)" };
  if (internal)
    return { cause: "dns_or_tls", words: `the host name did not resolve, or the TLS handshake failed (the runtime's log says which, under reference ${internal[1]})` };
  const name = err instanceof Error && /^[A-Za-z]{1,40}$/.test(err.name) ? err.name : "an error";
  return { cause: "other", words: `the request failed before any answer came (${name})` };
}

/**
 * The 502's message. A caller's own provider is named by its host (the caller chose the route); a
 * pool's member is not (its host may name the operator's account): the operator's log line and
 * metrics say which.
 */
export function unreachableMessage(why: Why, attempts: number, host: string | null): string {
  const where = host === null ? "the pool's member" : `the provider at ${host}`;
  const what = why.cause === "timeout" ? "did not answer in time" : "could not be reached";
  return `${where} ${what} (${attempts} attempt${attempts === 1 ? "" : "s"}): ${why.words}`;
}
