import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { isProvider, knownUrl, knownUrls } from "./providers";

/** Wrong invocation or input that must stop the run before anything is sent (exit code 2). */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** One valid line of the input, in the OpenAI Batch API shape. */
export interface Item {
  line: number;
  customId: string;
  provider: string;
  url: string;
  body: Record<string, unknown>;
  /** The body as sent (JSON text), so its size is what the token estimate reads. */
  payload: string;
  /** For the limit key: body.model, or "*". */
  model: string;
}

/** A line that cannot be sent; it becomes an error line in the output and the run goes on. */
export interface BadLine {
  line: number;
  customId: string;
  message: string;
}

export type Parsed = { ok: true; item: Item } | { ok: false; bad: BadLine };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Lines of a file with their 1-based numbers, blank ones included (callers skip them). */
export async function* readLines(path: string): AsyncGenerator<{ line: number; text: string }> {
  const rl = createInterface({ input: createReadStream(path, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  for await (const raw of rl) {
    line += 1;
    yield { line, text: line === 1 ? raw.replace(/^\uFEFF/, "") : raw };
  }
}

/** Validates one non-blank line. `provider` is the --provider default; a line's own `provider` field wins. */
export function parseLine(text: string, line: number, provider: string): Parsed {
  const bad = (message: string, customId = `line-${line}`): Parsed => ({ ok: false, bad: { line, customId, message: `line ${line}: ${message}` } });
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return bad(`not valid JSON (${(err as Error).message})`);
  }
  if (!isObj(v)) return bad("not a JSON object");
  const id = v.custom_id;
  if (typeof id !== "string" || id === "") return bad("no custom_id (a non-empty string)");
  const p = v.provider ?? provider;
  if (typeof p !== "string" || !isProvider(p)) return bad(`unknown provider ${JSON.stringify(p)}`, id);
  if (v.method !== undefined && v.method !== "POST") return bad(`method must be "POST", got ${JSON.stringify(v.method)}`, id);
  if (typeof v.url !== "string" || !knownUrl(p, v.url))
    return bad(`unknown url ${JSON.stringify(v.url)} for provider ${p} (known: ${knownUrls(p).join(", ")})`, id);
  if (!isObj(v.body)) return bad("body must be a JSON object", id);
  if (v.body.stream === true) return bad("stream: true is not supported in a batch", id);
  const model = typeof v.body.model === "string" && v.body.model ? v.body.model : (/\/models\/([^/:]+)/.exec(v.url)?.[1] ?? "*");
  return { ok: true, item: { line, customId: id, provider: p, url: v.url, body: v.body, payload: JSON.stringify(v.body), model } };
}

export interface Scan {
  /** custom_id (or line-<n>) of every non-blank line, in order, with the provider of a valid line. */
  entries: { id: string; provider: string | null }[];
}

/**
 * First pass over the input: ids, providers, and duplicate custom_ids, which stop the run before
 * anything is sent (the output is keyed by custom_id; two lines with one id cannot both be answered).
 */
export async function scan(path: string, provider: string): Promise<Scan> {
  const seen = new Map<string, number[]>();
  const out: Scan = { entries: [] };
  for await (const { line, text } of readLines(path)) {
    if (text.trim() === "") continue;
    const p = parseLine(text, line, provider);
    const id = p.ok ? p.item.customId : p.bad.customId;
    out.entries.push({ id, provider: p.ok ? p.item.provider : null });
    const at = seen.get(id);
    if (at) at.push(line);
    else seen.set(id, [line]);
  }
  const dups = [...seen].filter(([, at]) => at.length > 1);
  if (dups.length > 0) {
    const shown = dups.slice(0, 20).map(([id, at]) => `  ${JSON.stringify(id)} on lines ${at.join(", ")}`);
    const more = dups.length > 20 ? [`  ... and ${dups.length - 20} more`] : [];
    throw new UsageError([`duplicate custom_id in ${path}; nothing was sent:`, ...shown, ...more].join("\n"));
  }
  return out;
}
