import { createInterface } from "node:readline/promises";
import { parseArgs } from "node:util";
import { type BatchOptions, runBatch } from "./batch";
import { JobStopped } from "./job/api";
import { UsageError } from "./input";
import { formatSummary } from "./progress";
import { commandName, shellWord, thisInvocation } from "./invoked";
import { HELP } from "./help";


const OPTIONS = {
  out: { type: "string" },
  gateway: { type: "string" },
  provider: { type: "string" },
  concurrency: { type: "string" },
  resume: { type: "boolean" },
  caller: { type: "string" },
  priority: { type: "string" },
  "max-attempts": { type: "string" },
  "base-url": { type: "string" },
  mode: { type: "string" },
  deadline: { type: "string" },
  poll: { type: "string" },
  "batch-lines": { type: "string" },
  "batch-bytes": { type: "string" },
  cancel: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function positiveInt(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new UsageError(`${flag} must be a positive integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** `90m`, `2h`, `30s`, `1d` from `now`, or an ISO 8601 time: epoch ms. */
export function parseDeadline(raw: string, now: number): number {
  const m = /^(\d+(?:\.\d+)?)(s|m|h|d)$/.exec(raw.trim());
  if (m) return now + Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
  const t = /^\d{4}-\d{2}-\d{2}/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (!Number.isFinite(t)) throw new UsageError(`--deadline must be a duration (90m, 2h, 30s) or an ISO time, got ${JSON.stringify(raw)}`);
  return t;
}

/** Parses `batch ...` arguments into runner options; UsageError on anything wrong. */
export function parseBatchArgs(args: string[], now = Date.now()): BatchOptions {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { values: v, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError("batch needs exactly one input file: slotgate batch requests.jsonl --out results.jsonl");
  if (!v.out) throw new UsageError("--out FILE is required");
  if (v.gateway && v["base-url"]) throw new UsageError("--base-url is for direct mode; with --gateway the gateway picks the upstream");
  const maxAttempts = positiveInt(v["max-attempts"], "--max-attempts");
  if (!v.gateway && (v.caller !== undefined || v.priority !== undefined)) throw new UsageError("--caller and --priority are for --gateway: they tell the gateway who is asking");
  if (v.priority !== undefined && !["high", "normal", "low"].includes(v.priority)) throw new UsageError("--priority must be high, normal or low");
  const mode = v.mode ?? (v.cancel ? "provider" : "sync");
  if (!["sync", "flex", "provider", "auto"].includes(mode)) throw new UsageError("--mode must be sync, flex, provider or auto");
  const batchOnly = ["deadline", "poll", "batch-lines", "batch-bytes", "cancel"] as const;
  const misplaced = batchOnly.find((f) => v[f] !== undefined);
  if ((mode === "sync" || mode === "flex") && misplaced) throw new UsageError(`--${misplaced} is for --mode provider or auto`);
  const poll = positiveInt(v.poll, "--poll");
  return {
    mode: mode as BatchOptions["mode"],
    cancel: v.cancel ?? false,
    deadline: v.deadline === undefined ? undefined : parseDeadline(v.deadline, now),
    pollMs: poll === undefined ? undefined : poll * 1000,
    batchLines: positiveInt(v["batch-lines"], "--batch-lines"),
    batchBytes: positiveInt(v["batch-bytes"], "--batch-bytes"),
    input: positionals[0]!,
    out: v.out,
    provider: v.provider,
    gateway: v.gateway,
    baseUrl: v["base-url"],
    concurrency: positiveInt(v.concurrency, "--concurrency"),
    resume: v.resume ?? false,
    caller: v.caller,
    priority: v.priority as BatchOptions["priority"],
    retry: maxAttempts === undefined ? undefined : { maxAttempts },
  };
}

/**
 * The command line again, with `flag` (--resume: what to run to finish the job; --cancel: to cancel
 * its batches), as it runs when pasted where the user is (invoked.ts: `slotgate` where their shell
 * finds this command by that name, else `node <this file>`). Paths stay as typed: the same folder.
 */
function commandWith(bin: string, args: string[], flag: "--resume" | "--cancel"): string {
  const quoted = args.filter((a) => a !== "--resume" && a !== "--cancel").map(shellWord);
  return `${commandName(thisInvocation(bin))} batch ${quoted.join(" ")} ${flag}`;
}

/**
 * " (with OPENAI_API_KEY set as for this run)": a printed command carries no credential (it would
 * show in a terminal's scrollback), so a key given on the run's own command line must be given again.
 */
function withCredentials(vars: string[]): string {
  return vars.length === 0 ? "" : ` (with ${vars.join(" and ")} set as for this run)`;
}

/** A yes/no question on the terminal; undefined when there is none to ask on. */
function terminalConfirm(): ((q: string) => Promise<boolean>) | undefined {
  if (!process.stdin.isTTY) return undefined;
  return async (q) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr });
    try {
      return /^y(es)?$/i.test((await rl.question(q)).trim());
    } finally {
      rl.close();
    }
  };
}

/** Ctrl-C once: stop sending (provider batches are left running). Twice: abort what is in flight (and offer to cancel the batches). */
function interrupts(err: NodeJS.WriteStream) {
  const stop = new AbortController();
  const abort = new AbortController();
  const onSigint = () => {
    if (!stop.signal.aborted) {
      stop.abort();
      err.write("\n[slotgate] stopping: nothing new is sent or submitted, provider batches are left running; waiting for requests in flight (Ctrl-C again to abort them)\n");
    } else if (!abort.signal.aborted) {
      abort.abort();
      err.write("\n[slotgate] aborting requests in flight; they are recorded as interrupted\n");
    }
  };
  process.on("SIGINT", onSigint);
  return { stop: stop.signal, abort: abort.signal, dispose: () => process.off("SIGINT", onSigint) };
}

/** `bin`: this command's file, for the hints it prints (bin/slotgate.mjs passes its own). */
export async function main(argv: string[], bin: string = process.argv[1] ?? "slotgate"): Promise<number> {
  const out = process.stdout;
  const err = process.stderr;
  const [command, ...rest] = argv;
  if (command === undefined || command === "--help" || command === "-h" || command === "help" || (command === "batch" && rest.some((a) => a === "--help" || a === "-h"))) {
    out.write(`${HELP}\n`);
    return command === undefined ? 2 : 0;
  }
  if (command !== "batch") {
    err.write(`slotgate: unknown command ${JSON.stringify(command)}\n\n${HELP}\n`);
    return 2;
  }
  const signals = interrupts(err);
  try {
    const options = parseBatchArgs(rest);
    const summary = await runBatch({ ...options, stop: signals.stop, abort: signals.abort, progress: { stream: err, tty: Boolean(err.isTTY) }, confirm: terminalConfirm() });
    out.write(`${formatSummary(summary)}\n`);
    if (options.cancel) return 0;
    const creds = withCredentials(summary.credentials);
    if (summary.notDone > 0 || summary.retryable > 0) err.write(`\nTo finish, run${creds}:\n  ${commandWith(bin, rest, "--resume")}\n`);
    if (summary.batches?.running.length) err.write(`To cancel the batches still running instead${creds}:\n  ${commandWith(bin, rest, "--cancel")}\n`);
    if (summary.stopped) return 130;
    return summary.failed > 0 || summary.notDone > 0 ? 1 : 0;
  } catch (e) {
    if (e instanceof UsageError) {
      err.write(`slotgate batch: ${e.message}\n`);
      return e.exitCode;
    }
    if (e instanceof JobStopped) {
      err.write(`slotgate batch: ${e.message}\nWhat was made is in the state file; once that is fixed, run (with the credentials set as for this run):\n  ${commandWith(bin, rest, "--resume")}\n`);
      return 1;
    }
    err.write(`slotgate batch: ${(e as Error)?.stack ?? String(e)}\n`);
    return 1;
  } finally {
    signals.dispose();
  }
}
