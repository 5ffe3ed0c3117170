// Simulated caller processes: each sends its share of the requests with a fixed number in flight,
// through the gateway (its SDK's own retries off, as the README advises) or straight to the
// provider with the openai SDK's default retries.
import type { Clock } from "./clock.ts";
import type { SimRequest } from "./gateway.ts";

export interface Fleet {
  /** Client processes, all starting at once. */
  k: number;
  /** Requests each process keeps in flight. */
  c: number;
  /** Requests in all. */
  n: number;
  maxTokens: number;
  /** Prompt length in characters. */
  promptChars: number;
}

export interface Answer {
  status: number;
  at: number;
}

export function request(f: Fleet, i: number): SimRequest {
  const json = { model: "model", max_tokens: f.maxTokens, messages: [{ role: "user", content: `${i} `.padEnd(f.promptChars, "x") }] };
  return { json, body: new TextEncoder().encode(JSON.stringify(json)) };
}

export type Send = (r: SimRequest) => Promise<Response>;

/** Runs the fleet; resolves with every answer once all processes are done. `perProcess` wraps the transport in one process's own client logic. */
export async function runFleet(f: Fleet, send: Send, clock: Clock, perProcess?: (send: Send, p: number) => Send): Promise<Answer[]> {
  const answers: Answer[] = [];
  const counts = Array.from({ length: f.k }, (_, p) => Math.floor(f.n / f.k) + (p < f.n % f.k ? 1 : 0));
  let next = 0;
  const processes = counts.map(async (count, p) => {
    const mine = Array.from({ length: count }, () => next++);
    const sendOne = perProcess ? perProcess(send, p) : send;
    const worker = async () => {
      for (let i = mine.shift(); i !== undefined; i = mine.shift()) {
        const res = await sendOne(request(f, i));
        await res.arrayBuffer();
        answers.push({ status: res.status, at: clock.now });
      }
    };
    await Promise.all(Array.from({ length: Math.min(f.c, count) }, worker));
  });
  await Promise.all(processes);
  return answers;
}

const RETRYABLE = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;

/** The openai SDK's retry loop (maxRetries 2): its hint when under a minute, else 0.5 s x 2^n, up to 8 s, less up to 25% jitter. */
export function directSender(clock: Clock, fetch: (u: unknown, i: RequestInit) => Promise<Response>, random: () => number, maxRetries = 2) {
  return async (req: SimRequest): Promise<Response> => {
    for (let retries = 0; ; retries++) {
      const res = await fetch("https://provider.invalid/v1/chat/completions", { method: "POST", body: req.body });
      if (res.ok || !RETRYABLE(res.status) || retries >= maxRetries) return res;
      await res.arrayBuffer();
      const ms = Number(res.headers.get("retry-after-ms") ?? Number(res.headers.get("retry-after") ?? NaN) * 1000);
      const wait = ms >= 0 && ms < 60_000 ? ms : Math.min(0.5 * 2 ** retries, 8) * 1000 * (1 - random() * 0.25);
      await clock.sleep(wait);
    }
  };
}
