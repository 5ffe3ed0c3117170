// Shared by the provider-batch tests: the job's state file, and the stand-in's batches as its own API lists them.
import { existsSync, readFileSync } from "node:fs";
import type { Standin } from "../../support/standin/index.ts";
import { KEY } from "./helpers.ts";

/** The events of `<out>.batches.jsonl`. */
export function journal(out: string): { e: string; chunk?: string; batchId?: string; why?: string }[] {
  const path = `${out}.batches.jsonl`;
  if (!existsSync(path)) return [];
  return readFileSync(path, "utf8").split("\n").filter((l) => l.trim() !== "").flatMap((l) => {
    try {
      return [JSON.parse(l)];
    } catch {
      return [];
    }
  });
}

export const countEvents = (out: string, e: string) => journal(out).filter((x) => x.e === e).length;

export interface ListedBatch {
  id: string;
  status: string;
  metadata: Record<string, string> | null;
  errors: { data: { code: string }[] } | null;
  request_counts: { total: number; completed: number; failed: number };
}

/** Every OpenAI batch the credential has at the stand-in (its list endpoint, page by page). */
export async function standinBatches(s: Standin, key = KEY): Promise<ListedBatch[]> {
  const all: ListedBatch[] = [];
  for (let after = ""; ; ) {
    const res = await fetch(`${s.url}/v1/batches?limit=100${after ? `&after=${after}` : ""}`, { headers: { authorization: `Bearer ${key}` } });
    const page = (await res.json()) as { data: ListedBatch[]; has_more: boolean };
    all.push(...page.data);
    if (!page.has_more) return all;
    after = page.data.at(-1)!.id;
  }
}

/** Batches that ran (not refused at validation), by the chunk their metadata names. */
export function ranByChunk(batches: ListedBatch[]): Map<string, ListedBatch[]> {
  const m = new Map<string, ListedBatch[]>();
  for (const b of batches) {
    if (b.status === "failed") continue;
    const chunk = b.metadata?.slotgate_chunk ?? "?";
    m.set(chunk, [...(m.get(chunk) ?? []), b]);
  }
  return m;
}

/** Synchronous generations at the stand-in: chat completions and messages that succeeded. */
export const syncAnswers = (s: Standin) => s.stats().log.filter((a) => a.outcome === "success" && /\/(chat\/completions|messages)$/.test(a.path)).length;

export const FAST_BATCHES = { latencyMs: 5, batchValidatingMs: 50, batchFinalizingMs: 50 };
