import { exports } from "cloudflare:workers";
import { vi } from "vitest";

/** A scripted provider: each call gets the next handler's answer; the calls are recorded. */
export function mockUpstream(handler: (req: Request, n: number) => Response | Promise<Response>) {
  const calls: { url: string; at: number; headers: Headers; body: string }[] = [];
  const spy = vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const req = new Request(input as RequestInfo, init as RequestInit);
    const body = req.body ? await req.clone().text() : "";
    calls.push({ url: req.url, at: Date.now(), headers: req.headers, body });
    return handler(req, calls.length);
  });
  return { calls, spy };
}

export const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });

export const CHAT = { id: "chatcmpl-1", object: "chat.completion", model: "gpt-4o-mini", choices: [{ index: 0, message: { role: "assistant", content: "hi" }, finish_reason: "stop" }] };
export const RATE_LIMITED = { error: { message: "Rate limit reached for gpt-4o-mini", type: "requests", param: null, code: "rate_limit_exceeded" } };

/** Calls the Worker as an OpenAI SDK would. */
export function chat(opts: { key?: string; model?: string; headers?: Record<string, string>; path?: string; body?: unknown } = {}) {
  return exports.default.fetch(`http://gateway${opts.path ?? "/openai/v1/chat/completions"}`, {
    method: "POST",
    headers: { authorization: `Bearer ${opts.key ?? "sk-test"}`, "content-type": "application/json", ...opts.headers },
    body: JSON.stringify(opts.body ?? { model: opts.model ?? "gpt-4o-mini", messages: [{ role: "user", content: "hello" }], max_tokens: 16 }),
  });
}
