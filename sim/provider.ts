// A simulated provider on the virtual clock. Its limits, headers, error bodies and faults are the
// stand-in's own (test/support/standin), so the simulator and the end-to-end runs face one model.
import type { Dialect, DialectName } from "../test/support/standin/dialect.ts";
import { Dice } from "../test/support/standin/faults.ts";
import { retryAfter } from "../test/support/standin/handle.ts";
import { Account, countedApart } from "../test/support/standin/limits.ts";
import { DEFAULT_OPTIONS, type StandinOptions } from "../test/support/standin/options.ts";
import { parseRequest } from "../test/support/standin/request.ts";
import { STANDIN_DIALECTS } from "../test/support/standin/route.ts";
import type { Clock } from "./clock.ts";

export interface Shape extends Partial<StandinOptions> {
  /** The dialect it speaks: its headers, windows, refusals and retry hints are the stand-in's for that provider. */
  flavour: DialectName;
  /** Buckets start empty (the key has just been busy) instead of full. */
  drained?: boolean;
  /** One-way network time between the gateway (or a direct client) and the provider. */
  netMs?: number;
  /** Option changes at a time after the start: a limit halved or doubled mid-run. */
  changes?: { atMs: number; set: Partial<StandinOptions> }[];
}

export const NET_MS = 20;

export interface ProviderLog {
  /** Times the provider accepted a request (faults included: they used the quota). */
  admitted: number[];
  /** Times it answered 429. */
  refused: number[];
  faults: number;
  attempts: number;
}

export class SimProvider {
  readonly options: StandinOptions;
  readonly log: ProviderLog = { admitted: [], refused: [], faults: 0, attempts: 0 };
  private account = new Account();
  private dice: Dice;
  private dialect: Dialect;
  private netMs: number;
  private clock: Clock;

  constructor(clock: Clock, shape: Shape, seed: number) {
    const { flavour, drained, netMs, changes, ...opts } = shape;
    this.clock = clock;
    this.options = { ...DEFAULT_OPTIONS, rpm: 0, tpm: 0, latencyMs: 300, outputTokens: 16, ...opts, seed };
    this.dice = new Dice(seed);
    this.dialect = STANDIN_DIALECTS[flavour];
    this.netMs = netMs ?? NET_MS;
    if (drained) this.account.drain(countedApart(this.dialect, this.options), clock.now);
    for (const c of changes ?? []) clock.after(c.atMs, () => Object.assign(this.options, c.set));
  }

  readonly fetch = async (_url: unknown, init?: RequestInit): Promise<Response> => {
    const raw = new TextDecoder().decode(init?.body as Uint8Array);
    const req = parseRequest(raw);
    if (typeof req === "string") throw new Error(`simulated client sent a bad body: ${req}`);
    await this.clock.sleep(this.netMs);
    const now = this.clock.now;
    const d = this.dialect;
    // As the stand-in counts it (handle.ts): a dialect that limits input and output apart has no bucket of both.
    const o = countedApart(d, this.options);
    this.log.attempts++;
    const limits = () => (o.headers ? d.limitHeaders(this.account.snapshot(o, now), now) : {});
    if (o.maxConcurrent > 0 && this.account.inFlight >= o.maxConcurrent) {
      this.log.refused.push(now);
      return this.respond(429, d.stamp(d.tooManyConcurrent(req.model, o.organization).body, {}), { ...limits(), ...retryAfter(o, 1000, now, d.retryHeaders) });
    }
    // Gemini's TPM counts input alone (the stand-in's `inputTpm`).
    const admission = this.account.admit(o, { input: req.promptTokens, output: d.inputTpm ? 0 : (req.maxTokens ?? o.outputTokens) }, now);
    if (!admission.ok) {
      this.log.refused.push(now);
      return this.respond(429, d.stamp(d.rateLimited(admission, req.model, o.organization).body, {}), { ...limits(), ...retryAfter(o, admission.waitMs, now, d.retryHeaders) });
    }
    this.log.admitted.push(now);
    const fault = this.dice.fault(o.faults);
    const headers = limits(); // as they stand at admission, like the real providers
    // A held answer (DeepSeek's keep-alive) takes its hold before its latency; its headers come at once, its body after both.
    const totalMs = o.heldMs + o.latencyMs + this.dice.jitter(o.jitterMs);
    this.account.inFlight++;
    if (fault) this.log.faults++;
    // 503 and 529 come back at once; a 500, a 524 and an answer take the whole latency.
    await this.clock.sleep(fault === "503" || fault === "529" ? 0 : totalMs);
    this.account.inFlight--;
    if (fault === "524") return this.respond(524, "<html>A Timeout Occurred</html>", {});
    if (fault) return this.respond(Number(fault), d.stamp(d.fault(Number(fault) as 498 | 500 | 503 | 529).body, {}), headers);
    return this.respond(200, { id: "sim", choices: [{ index: 0, message: { role: "assistant", content: "ok" } }] }, headers);
  };

  private async respond(status: number, body: unknown, headers: Record<string, string>): Promise<Response> {
    await this.clock.sleep(this.netMs);
    const text = typeof body === "string" ? body : JSON.stringify(body);
    return new Response(text, { status, headers: { "content-type": typeof body === "string" ? "text/html" : "application/json", ...headers } });
  }
}
