// Spawns K client processes (bench/client.ts), starts them together, and merges what they report.
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import type { ClientResult, ClientSpec } from "./client.ts";

const CLIENT = resolve(import.meta.dirname, "client.ts");

export interface Fleet {
  requests: number;
  ok: number;
  /** Answers the callers saw that were not 2xx, by status (0: no answer at all). */
  failures: Record<string, number>;
  failed: number;
  latency: number[];
  /** Per request, in the same order as latency: the status the caller saw. */
  status: number[];
  /** Per request: when it was sent (epoch ms) and its x-slotgate-queue-ms. */
  sentAt: number[];
  queueMs: number[];
  /** First "go" to the last answer, ms; the first "go" and the last answer's time (epoch ms). */
  makespan: number;
  start: number;
  end: number;
  gatewayAttempts: number;
  key: string | null;
}

function startClient(spec: ClientSpec): { child: ChildProcess; ready: Promise<void>; result: Promise<ClientResult> } {
  const child = spawn(process.execPath, [CLIENT, JSON.stringify(spec)], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  let onReady!: () => void;
  const exited = new Promise<never>((_, fail) => child.once("close", (code) => fail(new Error(`bench client exited (${code}) before reporting`))));
  exited.catch(() => {});
  const ready = Promise.race([new Promise<void>((r) => (onReady = r)), exited]);
  const report = new Promise<ClientResult>((ok) => lines.on("line", (line) => (line === "ready" ? onReady() : ok(JSON.parse(line) as ClientResult))));
  return { child, ready, result: Promise.race([report, exited]) };
}

/** Runs K clients with one spec; `beforeGo` runs once every process is loaded and waiting. */
export async function runFleet(k: number, spec: ClientSpec, beforeGo?: () => Promise<void>, timeoutMs = 300_000): Promise<Fleet> {
  return (await runFleets([{ k, spec }], beforeGo, timeoutMs))[0]!;
}

/** Several groups of clients, each with its own spec, all started by the same "go"; one Fleet per group. */
export async function runFleets(groups: { k: number; spec: ClientSpec }[], beforeGo?: () => Promise<void>, timeoutMs = 300_000): Promise<Fleet[]> {
  const clients = groups.map((g) => Array.from({ length: g.k }, () => startClient(g.spec)));
  const all = clients.flat();
  const timer = setTimeout(() => all.forEach((c) => c.child.kill("SIGKILL")), timeoutMs);
  try {
    await Promise.all(all.map((c) => c.ready));
    await beforeGo?.();
    for (const c of all) c.child.stdin!.end("go\n");
    return await Promise.all(clients.map(async (group) => merge(await Promise.all(group.map((c) => c.result)))));
  } finally {
    clearTimeout(timer);
  }
}

function merge(parts: ClientResult[]): Fleet {
  const status = parts.flatMap((p) => p.status);
  const failures: Record<string, number> = {};
  for (const s of status) if (s < 200 || s > 299) failures[s] = (failures[s] ?? 0) + 1;
  const ok = status.length - Object.values(failures).reduce((a, b) => a + b, 0);
  return {
    requests: status.length,
    ok,
    failures,
    failed: status.length - ok,
    latency: parts.flatMap((p) => p.latency),
    status,
    sentAt: parts.flatMap((p) => p.sentAt),
    queueMs: parts.flatMap((p) => p.queueMs),
    makespan: Math.max(...parts.map((p) => p.end)) - Math.min(...parts.map((p) => p.start)),
    start: Math.min(...parts.map((p) => p.start)),
    end: Math.max(...parts.map((p) => p.end)),
    gatewayAttempts: parts.reduce((a, p) => a + p.gatewayAttempts, 0),
    key: parts.find((p) => p.key)?.key ?? null,
  };
}
