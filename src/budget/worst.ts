/**
 * @module The most one request can cost (issue 39: a budget is a cap). Its output: its limit,
 * else its model's maximum, times the answers it asks for. Its input: its body (a token is at
 * least a byte), or the model's whole context where it names content the gateway cannot see (a
 * stored response or file, a URL the provider fetches). Priced at the rates that bound brings
 * (a long-context band past its threshold). What cannot be bounded says why, and how to bound it.
 * Pure.
 */
import { choicesOf, outputLimit } from "../policy/estimate";
import { refsIn } from "../stored/refs";
import { costOf, type Price, ratesFor } from "../usage/prices";

export interface Bound {
  /** Prompt tokens at most. */
  input: number;
  /** Output tokens at most, every answer together: `perAnswer` x `answers`. */
  output: number;
  perAnswer: number;
  answers: number;
  /** What that costs at the price. */
  usd: number;
}

export type Worst = { bound: Bound } | { why: string };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const remoteUrl = (v: unknown) => typeof v === "string" && /^(?:https?|gs):\/\//i.test(v);

/**
 * Tools a provider runs itself that read content into the prompt (Anthropic's `web_fetch_*`,
 * Gemini's `urlContext`, OpenAI's remote `mcp`): billed as input, of a size only the provider knows.
 * (Tools billed per use are refused apart: priceable.ts.)
 */
const FETCHING_TOOL = /^(?:web_fetch|url_context|urlContext|mcp$)/;

/**
 * What a body names that the provider reads for it, beyond its own bytes: a stored object
 * (stored/refs.ts), a URL (OpenAI's `image_url` and `file_url`, Anthropic's `{"type":"url"}`
 * sources, Gemini's `fileData` URIs: files, YouTube, Cloud Storage), or a tool that fetches. null: nothing.
 */
export function namesRemote(json: unknown): string | null {
  const ref = refsIn(json, 1)[0];
  if (ref) return `a stored ${ref.kind.replace("_", " ")} (${ref.id.slice(0, 64)})`;
  if (isObj(json) && json.mcp_servers !== undefined) return "remote MCP servers (mcp_servers)";
  let found: string | null = null;
  const walk = (v: unknown, depth: number): void => {
    if (found || depth > 32) return;
    if (Array.isArray(v)) return v.forEach((x) => walk(x, depth + 1));
    if (!isObj(v)) return;
    const image = isObj(v.image_url) ? v.image_url.url : v.image_url;
    const file = v.fileData ?? v.file_data;
    if (remoteUrl(image) || remoteUrl(v.file_url) || (v.type === "url" && remoteUrl(v.url))) found = "content at a URL";
    else if (isObj(file) && (file.fileUri ?? file.file_uri) !== undefined) found = "a file by URI (fileData)";
    else if (typeof v.type === "string" && FETCHING_TOOL.test(v.type)) found = `the ${v.type.slice(0, 40)} tool`;
    else for (const [k, x] of Object.entries(v)) {
      if (FETCHING_TOOL.test(k) && depth > 0) return void (found = `the ${k} tool`);
      walk(x, depth + 1);
    }
  };
  walk(json, 0);
  return found;
}

/** The worst case of a parsed JSON body of `bytes` bytes at `price` (its tier's), or why it has none. */
export function worstCase(json: unknown, bytes: number, price: Price, model: string): Worst {
  const name = JSON.stringify(model.slice(0, 128));
  const remote = namesRemote(json);
  if (remote && price.context === undefined)
    return { why: `it names ${remote}, whose size only the provider knows, and model ${name} has no context in PRICES to bound it` };
  const input = remote ? price.context! : Math.min(bytes, price.context ?? bytes);
  const limit = outputLimit(json);
  const perAnswer = limit === null ? price.maxOutput : price.maxOutput === undefined ? limit : Math.min(limit, price.maxOutput);
  if (perAnswer === undefined)
    return { why: `it names no output limit and model ${name} has no maxOutput in PRICES: set one (max_tokens, max_completion_tokens, max_output_tokens, maxOutputTokens or Converse's inferenceConfig.maxTokens)` };
  const answers = choicesOf(json);
  const output = perAnswer * answers;
  return { bound: { input, output, perAnswer, answers, usd: costOf({ input, output, cached: 0, cacheWrite: 0 }, price) } };
}

/** The largest output limit (per answer) with which `b` would cost at most `roomUsd`; 0 when its prompt alone does not fit. */
export function outputThatFits(b: Bound, price: Price, roomUsd: number): number {
  const r = ratesFor(price, b.input);
  const left = roomUsd * 1e6 - b.input * r.input;
  if (left <= 0 || r.output <= 0) return 0;
  return Math.max(0, Math.floor(left / r.output / b.answers));
}

/** The field a route names its output limit in, for a message that says how to fit. */
export function outputField(rest: string): string {
  if (/\/responses$/.test(rest)) return "max_output_tokens";
  if (/\/chat\/completions$/.test(rest)) return "max_completion_tokens";
  if (/:(?:stream)?[gG]enerateContent$/.test(rest)) return "generationConfig.maxOutputTokens";
  if (/\/converse(?:-stream)?$/.test(rest)) return "inferenceConfig.maxTokens";
  return "max_tokens";
}
