// What a batch or file request asks (by flavour, method and path), what a batch object says, and
// what one result line used. Pure: the providers' published shapes (their rows' `batches`
// column, providers/batches.ts) read by small readers.
import type { BatchOpKind, BatchRoutes } from "../providers/flavour";
import { FLAVOURS, type FlavourName } from "../providers/table";
import { type Tokens, usageIn } from "../usage/tokens";

/** A request on the batch or file endpoints. `id`: the batch or file it names. */
export type Op =
  | { k: Extract<BatchOpKind, "upload" | "files" | "create" | "list"> }
  | { k: Exclude<BatchOpKind, "upload" | "files" | "create" | "list">; id: string };

/** Each tracked family's routes as `[method, path pattern, op]`; Azure's and Gemini's are not tracked, and are left to the scopes. */
const ROUTES = Object.fromEntries(
  Object.entries(FLAVOURS).flatMap(([flavour, f]) =>
    f.batches
      ? [[flavour, f.batches.ops.split(";").map((row) => {
          const [method, path, k] = row.split(" ") as [string, string, Op["k"]];
          return [method, RegExp(`^${f.batches!.prefix}${path.replace("{id}", "([^/]+)")}$`), k] as const;
        })]]
      : [],
  ),
) as Partial<Record<FlavourName, (readonly [string, RegExp, Op["k"]])[]>>;

/** The families whose batches (and files) the gateway keeps to the key that made them, as a refusal names them. */
const tracked = Object.values(FLAVOURS).filter((f) => f.batches);
export const TRACKED = {
  batches: tracked.map((f) => f.title).join(" and "),
  files: tracked.flatMap((f) => (f.batches!.files ? [`${f.title}'s ${f.batches!.files}`] : [])).join(" and "),
};

/** The batch routes of `flavour`'s row, where its batches are tracked. */
export const batchRoutes = (flavour: FlavourName): BatchRoutes | undefined => FLAVOURS[flavour].batches;

/** A read path of the routes (`{id}`, `{output}`) filled in, encoded; null when a value it names is missing. */
export function readPath(template: string, values: Record<string, string | null>): string | null {
  let missing = false;
  const path = template.replace(/\{(\w+)\}/g, (_, k: string) => {
    const v = values[k];
    if (v == null) missing = true;
    return encodeURIComponent(v ?? "");
  });
  return missing ? null : path;
}

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
