// What a batch or file request asks (by flavour, method and path), what a batch object says, and
// what one result line used. Pure: the providers' published shapes, as data and small readers.
import type { FlavourName } from "../providers/table";
import { type Tokens, usageIn } from "../usage/tokens";

/** A request on the batch or file endpoints. `id`: the batch or file it names. */
export type Op =
  | { k: "upload" | "files" | "create" | "list" }
  | { k: "file" | "content" | "unfile" | "batch" | "cancel" | "results" | "unbatch"; id: string };

/**
 * `method path op` by API family; `{id}` is the batch or file named. OpenAI's `/v1` is optional as
 * in the endpoint table; Azure's paths (behind `/openai`) are not tracked, and are left to the scopes.
 */
const TABLE: Partial<Record<FlavourName, string>> = {
  openai:
    "POST /files upload;GET /files files;GET /files/{id} file;GET /files/{id}/content content;DELETE /files/{id} unfile;" +
    "POST /batches create;GET /batches list;GET /batches/{id} batch;POST /batches/{id}/cancel cancel",
  anthropic:
    "POST /messages/batches create;GET /messages/batches list;GET /messages/batches/{id} batch;" +
    "GET /messages/batches/{id}/results results;POST /messages/batches/{id}/cancel cancel;DELETE /messages/batches/{id} unbatch",
};

const ROUTES = Object.fromEntries(
  Object.entries(TABLE).map(([flavour, rows]) => [
    flavour,
    rows.split(";").map((row) => {
      const [method, path, k] = row.split(" ") as [string, string, Op["k"]];
      return [method, RegExp(`^${flavour === "openai" ? "(?:/v1)?" : "/v1"}${path.replace("{id}", "([^/]+)")}$`), k] as const;
    }),
  ]),
) as Partial<Record<FlavourName, (readonly [string, RegExp, Op["k"]])[]>>;

/** The batch or file operation a request is, or null (another endpoint, or a family whose batches are not tracked). */
export function opOf(flavour: FlavourName, method: string, rest: string): Op | null {
  for (const [m, re, k] of ROUTES[flavour] ?? []) {
    const hit = method.toUpperCase() === m ? re.exec(rest) : null;
    if (hit) return (hit[1] === undefined ? { k } : { k, id: decodeURIComponent(hit[1]) }) as Op;
  }
  return null;
}

const obj = (v: unknown): Record<string, unknown> | null => (typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
const str = (v: unknown): string | null => (typeof v === "string" && v !== "" ? v : null);

/** What a batch object tells the gateway: its id, whether it is over, the files it made (OpenAI), the lines its results hold. */
export interface BatchFacts {
  id: string;
  ended: boolean;
  /** OpenAI's output and error files (null: none yet, or Anthropic's, whose results are the batch's own). */
  output: string | null;
  error: string | null;
  /** Once it has ended: how many lines its results hold (OpenAI's output file: the completed requests; Anthropic's results: every request). */
  lines: number | null;
}

const count = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);

/** OpenAI's batch object or Anthropic's message_batch; null when `json` is neither. */
export function factsOf(json: unknown): BatchFacts | null {
  const b = obj(json);
  const id = str(b?.id);
  if (!b || !id) return null;
  const counts = obj(b.request_counts) ?? {};
  if (b.object === "batch") {
    const ended = ["completed", "failed", "expired", "cancelled"].includes(String(b.status));
    return { id, ended, output: str(b.output_file_id), error: str(b.error_file_id), lines: ended ? count(counts.completed) : null };
  }
  if (b.type === "message_batch") {
    const ended = b.processing_status === "ended";
    const lines = ended ? count(counts.succeeded) + count(counts.errored) + count(counts.canceled) + count(counts.expired) : null;
    return { id, ended, output: null, error: null, lines };
  }
  return null;
}

/** One line of a batch's results: its custom_id, and for an answered one its model and usage (tokens null: failed, expired, cancelled). */
export interface ResultLine {
  id: string;
  model: string | null;
  tokens: Tokens | null;
}

/**
 * A line of an OpenAI output file or of Anthropic's results, or null when it is not one (a line
 * cut by a range read, or no line at all). An answered line (a 2xx `response` with its body's
 * usage, Anthropic's `succeeded`) carries its tokens; any other has none.
 */
export function resultLine(text: string): ResultLine | null {
  let l: Record<string, unknown> | null;
  try {
    l = obj(JSON.parse(text));
  } catch {
    return null;
  }
  const id = str(l?.custom_id);
  if (!id) return null;
  const res = obj(l?.response);
  const result = obj(l?.result);
  const body = res && Number(res.status_code) < 300 ? res.body : result?.type === "succeeded" ? result.message : null;
  return { id, model: str(obj(body)?.model), tokens: usageIn(body) };
}
