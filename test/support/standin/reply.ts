// The generated answer, independent of provider: its text, its pieces for streaming, its usage.
import { randomBytes } from "node:crypto";
import type { StandinOptions } from "./options.ts";
import type { ParsedRequest } from "./request.ts";

export interface Reply {
  model: string;
  text: string;
  /** Stream deltas; joined they give `text`. */
  pieces: string[];
  inputTokens: number;
  /** Of `inputTokens`, read from and written to the provider's prompt cache (prompt-cache.ts). */
  cacheRead: number;
  cacheWrite: number;
  /** Every answer's together (usage counts them all). */
  outputTokens: number;
  /** How many answers (OpenAI's `n`), each the same text. */
  choices: number;
  /** True when the request's max tokens cut the answer short. */
  truncated: boolean;
  /** Unix seconds. */
  created: number;
}

const WORDS = ["The", "stand-in", "provider", "answers", "with", "a", "few", "plain", "words", "so", "tests", "can", "count", "them"];

/** Splits words into `n` groups of near-equal size; each group keeps its leading space. */
function split(words: string[], n: number): string[] {
  const count = Math.max(1, Math.min(n, words.length));
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    const group = words.slice(Math.floor((i * words.length) / count), Math.floor(((i + 1) * words.length) / count));
    pieces.push((i === 0 ? "" : " ") + group.join(" "));
  }
  return pieces;
}

export function makeReply(req: ParsedRequest, o: StandinOptions): Reply {
  const cap = req.maxTokens ?? Infinity;
  let words: string[];
  if (o.echo) {
    words = req.lastUserText.split(/\s+/).filter(Boolean);
  } else {
    words = Array.from({ length: Math.max(1, o.outputTokens) }, (_, i) => WORDS[i % WORDS.length]!);
  }
  const truncated = words.length > cap;
  if (truncated) words = words.slice(0, Math.max(1, cap));
  const text = words.join(" ");
  return {
    model: req.model,
    text,
    pieces: split(words, o.streamChunks),
    inputTokens: req.promptTokens,
    cacheRead: 0,
    cacheWrite: 0,
    outputTokens: words.length * req.choices,
    choices: req.choices,
    truncated,
    created: Math.floor(Date.now() / 1000),
  };
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Random base62 string, for ids in the providers' own formats. */
export function base62(length: number): string {
  const bytes = randomBytes(length);
  let s = "";
  for (const b of bytes) s += ALPHABET[b % 62];
  return s;
}

export function hex(length: number): string {
  return randomBytes(Math.ceil(length / 2)).toString("hex").slice(0, length);
}
