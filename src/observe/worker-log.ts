import type { Env } from "../env";
import { EventLog } from "./emit";
import { gatewayErrorEvent } from "./events";
import { consoleSink, parseLevel } from "./log";

/** Worker-made errors about a key that no limiter sees (the limiter counts its own queue_timeouts). */
const LOGGED = new Set(["limiter_unavailable", "upstream_unreachable"]);

/** One log per Worker isolate: its own rate bound, since isolates share nothing. */
let log: EventLog | null = null;

/**
 * After the proxy has its answer: a `gateway:error` line when the gateway itself failed the
 * request in a way that concerns the key. Reads two headers run() already set; no I/O.
 */
export function logGatewayError(env: Env, key: string, res: Response, now: number = Date.now()): void {
  const type = res.headers.get("x-slotgate-error");
  if (type === null || !LOGGED.has(type)) return;
  log ??= new EventLog(parseLevel(env.LOG_LEVEL), consoleSink, now);
  log.emit(key, [gatewayErrorEvent(type, res.status, Number(res.headers.get("x-slotgate-attempts") ?? 0))], now);
}
