// The batches every account has made (OpenAI's and Anthropic's alike), and their lines' answers,
// made when the clock says each line ends, once: a line is generated at most one time whatever
// reads it, so the stats count what a provider would bill.
import { createHash } from "node:crypto";
import { anthropic } from "./anthropic.ts";
import { type BatchStatus, type Clock, isEnded, type Progress, progress } from "./batch-clock.ts";
import type { Dialect } from "./dialect.ts";
import { openai } from "./openai.ts";
import type { StandinOptions } from "./options.ts";
import { hex, makeReply } from "./reply.ts";
import { parseRequest } from "./request.ts";
import type { StatsRecorder } from "./stats.ts";

/** One request of a batch: its id, its endpoint (`/chat/completions`, `/embeddings`, `/responses`, `/messages`) and body. */
export interface BatchLine {
  customId: string;
  endpoint: string;
  body: Record<string, unknown>;
}

/** One line's outcome. `kind` says why it has no answer: failed at the provider, expired, cancelled. */
export interface LineResult {
  customId: string;
  kind: "succeeded" | "failed" | "expired" | "cancelled";
  status: number;
  body: unknown;
  requestId: string;
}

export interface StoredBatch {
  id: string;
  api: "openai" | "anthropic";
  credential: string;
  clock: Clock;
  lines: BatchLine[];
  /** Tokens it holds against the enqueued-token limit while it runs. */
  tokens: number;
  model: string;
  /** Answers made so far, in line order. */
  results: LineResult[];
  /** Set once the batch ended: the lines that never ran are filled in as expired or cancelled. */
  closed: boolean;
  /** OpenAI's: the batch's request and its validation errors. */
  endpoint: string;
  inputFileId: string;
  metadata: Record<string, string> | null;
  errors: { code: string; message: string; param: string | null; line: number | null }[];
  outputFileId: string | null;
  errorFileId: string | null;
}

export interface BatchBook {
  batches: Map<string, StoredBatch>;
  stats: StatsRecorder;
}

/** A request's cost against the enqueued-token limit: prompt tokens plus its output limit for every answer, as the TPM buckets count it. */
export function lineTokens(line: BatchLine, o: StandinOptions): number {
  const req = parseRequest(JSON.stringify(line.body));
  if (typeof req === "string") return 0;
  return req.promptTokens + (line.endpoint === "/embeddings" ? 0 : (req.maxTokens ?? o.outputTokens) * req.choices);
}

/** Tokens of the account's batches of `model` still running: what the enqueued-token limit counts. */
export function enqueued(book: BatchBook, credential: string, model: string, now: number): number {
  let sum = 0;
  for (const b of book.batches.values()) if (b.credential === credential && b.model === model && !isEnded(progress(b.clock, now).status)) sum += b.tokens;
  return sum;
}

/** A seeded draw per line, so which lines fail depends on the seed and the custom_id, not on who reads first. */
function fails(o: StandinOptions, id: string, customId: string): boolean {
  if (o.batchFailRate <= 0) return false;
  const h = createHash("sha256").update(`${o.seed}\n${id}\n${customId}`).digest();
  return h.readUInt32BE(0) / 2 ** 32 < o.batchFailRate;
}

const DIALECT: Record<StoredBatch["api"], Dialect> = { openai, anthropic };

/** Makes one line's answer, as the synchronous endpoint would, and counts its usage as a batch generation. */
function runLine(book: BatchBook, b: StoredBatch, line: BatchLine, o: StandinOptions): LineResult {
  const dialect = DIALECT[b.api];
  const ids = dialect.requestId();
  const requestId = Object.values(ids)[0] ?? `req_${hex(24)}`;
  const refuse = (status: number, body: unknown): LineResult => {
    book.stats.batchLine("failed");
    return { customId: line.customId, kind: "failed", status, body: dialect.stamp(body, ids), requestId };
  };
  const req = parseRequest(JSON.stringify(line.body));
  if (typeof req === "string") return refuse(400, dialect.invalid(req).body);
  const bad = dialect.check({ "anthropic-version": "2023-06-01" }, req, line.endpoint);
  if (bad) return refuse(bad.status, bad.body);
  if (o.models && !o.models.includes(req.model)) return refuse(404, dialect.unknownModel(req.model).body);
  if (fails(o, b.id, line.customId)) return refuse(500, dialect.fault(500).body);
  const endpoint = dialect.endpoints[line.endpoint];
  if (!endpoint) return refuse(400, dialect.invalid(`unsupported url ${line.endpoint}`).body);
  const reply = makeReply(req, o);
  const result = endpoint({ ...req, stream: false }, reply);
  const output = line.endpoint === "/embeddings" ? 0 : reply.outputTokens;
  book.stats.batchLine("succeeded", reply.inputTokens, output);
  return { customId: line.customId, kind: "succeeded", status: 200, body: "json" in result ? result.json : null, requestId };
}

/** Where the batch stands now; makes the answers of the lines that have ended since the last look. */
export function advance(book: BatchBook, b: StoredBatch, o: StandinOptions, now: number): Progress {
  const p = progress(b.clock, now);
  while (b.results.length < p.ended) b.results.push(runLine(book, b, b.lines[b.results.length]!, o));
  if (isEnded(p.status) && !b.closed) {
    b.closed = true;
    const kind = p.status === "cancelled" ? "cancelled" : "expired";
    if (p.status === "expired" || p.status === "cancelled") {
      for (const line of b.lines.slice(b.results.length)) {
        book.stats.batchLine(kind);
        b.results.push({ customId: line.customId, kind, status: 0, body: null, requestId: "" });
      }
    }
  }
  return p;
}

/** Lines by outcome, as the APIs' request counts report them. */
export function counts(b: StoredBatch): Record<LineResult["kind"], number> {
  const c = { succeeded: 0, failed: 0, expired: 0, cancelled: 0 };
  for (const r of b.results) c[r.kind] += 1;
  return c;
}

export const unixSeconds = (ms: number | null): number | null => (ms === null ? null : Math.floor(ms / 1000));

/** The batches of one account and API, newest first, for the list endpoints. */
export function listOf(book: BatchBook, api: StoredBatch["api"], credential: string): StoredBatch[] {
  return [...book.batches.values()].filter((b) => b.api === api && b.credential === credential).reverse();
}

/** A page of `items` after the one with id `after` (none: from the start), `limit` long. */
export function page<T extends { id: string }>(items: T[], after: string | null, limit: number): { data: T[]; hasMore: boolean } {
  const from = after === null ? 0 : items.findIndex((i) => i.id === after) + 1;
  const data = items.slice(from, from + limit);
  return { data, hasMore: from + limit < items.length };
}

export type { BatchStatus };
