// A plain answer's token counts from its headers, as its dialect row names them (Bedrock's
// InvokeModel tells every model's counts there: X-Amzn-Bedrock-Input-Token-Count,
// -Output-Token-Count, and -Cache-Read-/-Cache-Write-Input-Token-Count under prompt caching). Pure.
import type { UsageHeaders } from "../providers/dialect";
import type { Tokens } from "./tokens";

const count = (h: Headers, name: string | undefined): number | null => {
  const v = name ? h.get(name) : null;
  return v === null || !/^\d+$/.test(v.trim()) ? null : Number(v);
};

/** The counts `names` say, or null when the answer carries none; the cache's reads and writes are added to the input, as Anthropic's are. */
export function headerUsage(h: Headers, names: UsageHeaders): Tokens | null {
  const input = count(h, names.input);
  const output = count(h, names.output);
  if (input === null && output === null) return null;
  const cached = count(h, names.cached) ?? 0;
  const cacheWrite = count(h, names.cacheWrite) ?? 0;
  return { input: (input ?? 0) + cached + cacheWrite, output: output ?? 0, cached, cacheWrite };
}
