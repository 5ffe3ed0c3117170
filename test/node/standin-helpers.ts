// Shared by the stand-in's own tests: SDK clients pointed at it, raw requests, bodies.
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterEach } from "vitest";
import { startStandin } from "../support/standin/index.ts";
import type { Standin, StandinOptions } from "../support/standin/index.ts";

const running: Standin[] = [];

/** Starts a stand-in that is closed after the current test. */
export async function standin(options: Partial<StandinOptions> = {}): Promise<Standin> {
  const s = await startStandin({ latencyMs: 5, ...options });
  running.push(s);
  return s;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});

export function openaiClient(s: Standin, apiKey = "sk-test-openai"): OpenAI {
  return new OpenAI({ apiKey, baseURL: `${s.url}/v1`, maxRetries: 0 });
}

export function anthropicClient(s: Standin, apiKey = "sk-ant-test"): Anthropic {
  return new Anthropic({ apiKey, baseURL: s.url, maxRetries: 0 });
}

export const oaHeaders = (key = "sk-test-openai") => ({ authorization: `Bearer ${key}` });
export const anHeaders = (key = "sk-ant-test") => ({ "x-api-key": key, "anthropic-version": "2023-06-01" });

const USER = { role: "user" as const, content: "Say hello to the test suite" };

export const chatBody = <const T extends object = {}>(extra?: T) => ({
  model: "gpt-4o-mini",
  messages: [USER],
  ...(extra as T),
});

export const messagesBody = <const T extends object = {}>(extra?: T) => ({
  model: "claude-haiku-4-5",
  max_tokens: 64,
  messages: [USER],
  ...(extra as T),
});

export function post(s: Standin, path: string, body: unknown, headers: Record<string, string>): Promise<Response> {
  return fetch(`${s.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Reads an SSE body into [event name or null, parsed data or raw string] pairs. */
export async function readSse(res: Response): Promise<[string | null, unknown][]> {
  const text = await res.text();
  return text
    .split("\n\n")
    .filter((block) => block.trim())
    .map((block) => {
      const event = /^event: (.*)$/m.exec(block)?.[1] ?? null;
      const data = /^data: (.*)$/m.exec(block)?.[1] ?? "";
      return [event, data === "[DONE]" ? data : JSON.parse(data)];
    });
}
