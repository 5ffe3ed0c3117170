// Shared by the provider matrix (providers*.test.ts): a gateway with every built-in provider pointed
// at its dialect in the stand-in, the clients each provider's users have (the openai SDK on its
// OpenAI-style route, AzureOpenAI, plain fetch for Gemini's native API), a fleet that sends n
// requests c at a time, and the ledger read per model.
import OpenAI, { AzureOpenAI } from "openai";
import { expect } from "vitest";
import { gatewayProviders, OPENAI_SDK_PATHS } from "../support/standin/index.ts";
import type { OpenAiStyle, StandinOptions } from "../support/standin/index.ts";
import { ADMIN_TOKEN, type Stack, type StackOptions, useStack } from "./setup.ts";

/** A stack whose gateway reaches every built-in provider's dialect, with the admin API and a quick ledger. */
export function useProviderStack(standin: Partial<StandinOptions>, vars: StackOptions["vars"] = {}): Stack {
  return useStack({
    admin: true,
    standin,
    providers: (url) => gatewayProviders(url),
    vars: (url) => ({ USAGE_FLUSH_MS: "200", ...(typeof vars === "function" ? vars(url) : vars) }),
  });
}

/** The openai SDK on a provider's OpenAI-style route through the gateway, its own retries off. */
export const openaiOf = (stack: Stack, provider: OpenAiStyle, apiKey: string) =>
  new OpenAI({ apiKey, baseURL: `${stack.gateway.url}/${provider}${OPENAI_SDK_PATHS[provider]}`, maxRetries: 0, timeout: 60_000 });

/** AzureOpenAI through the gateway's `/azure/<resource>` route. */
export const azureOf = (stack: Stack, apiKey: string, deployment: string, apiVersion = "2024-10-21", resource = "myres") =>
  new AzureOpenAI({ endpoint: `${stack.gateway.url}/azure/${resource}`, apiKey, apiVersion, deployment, maxRetries: 0, timeout: 60_000 });

/** Gemini's native API through the gateway, with plain fetch: `verb` generateContent or streamGenerateContent (with `?alt=sse`). */
export function geminiNative(stack: Stack, apiKey: string, model: string, verb: "generateContent" | "streamGenerateContent", text: string): Promise<Response> {
  const sse = verb === "streamGenerateContent" ? "?alt=sse" : "";
  return fetch(`${stack.gateway.url}/gemini/v1beta/models/${model}:${verb}${sse}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": apiKey },
    body: JSON.stringify({ contents: [{ role: "user", parts: [{ text }] }], generationConfig: { maxOutputTokens: 16 } }),
  });
}

export interface Sent {
  status: number;
  /** ms from the fleet's start to this answer's end. */
  at: number;
}

/** Sends `n` requests `c` at a time; each `send` resolves to an HTTP status (an SDK error's, or 200). */
export async function fleet(n: number, c: number, send: (i: number) => Promise<number>): Promise<{ sent: Sent[]; makespanMs: number }> {
  const start = Date.now();
  const sent: Sent[] = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const status = await send(i).catch((e: unknown) => (e as { status?: number }).status ?? 0);
      sent.push({ status, at: Date.now() - start });
    }
  };
  await Promise.all(Array.from({ length: c }, worker));
  return { sent, makespanMs: Math.max(...sent.map((s) => s.at)) };
}

/** The status an SDK call ends with: 200, or its error's status (0: no answer). */
export const statusOf = (p: PromiseLike<unknown>) => Promise.resolve(p).then(() => 200, (e: unknown) => (e as { status?: number }).status ?? 0);

export type Figures = { requests: number; inputTokens: number; outputTokens: number; unknownUsage: number };

/** The ledger per model since `since`, polled until `models` all hold `requests` rows each (rollups are written every USAGE_FLUSH_MS). */
export async function ledger(stack: Stack, since: number, expected: Record<string, number>): Promise<Record<string, Figures>> {
  let got: Record<string, Figures> = {};
  const end = Date.now() + 20_000;
  while (Date.now() < end) {
    const res = await fetch(`${stack.gateway.url}/admin/usage?since=${since}&by=model`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.status).toBe(200);
    got = {};
    for (const r of ((await res.json()) as { rows: (Figures & { model: string })[] }).rows) {
      const o = (got[r.model] ??= { requests: 0, inputTokens: 0, outputTokens: 0, unknownUsage: 0 });
      for (const k of ["requests", "inputTokens", "outputTokens", "unknownUsage"] as const) o[k] += r[k];
    }
    if (Object.entries(expected).every(([m, n]) => (got[m]?.requests ?? 0) >= n)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return got;
}
