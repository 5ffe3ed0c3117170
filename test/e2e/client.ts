// One client process of the shared-key tests, run with plain `node test/e2e/client.ts '<spec JSON>'`.
// It sends `requests` chat completions through the gateway with the official openai SDK (its own
// retries off, so any 429 the gateway lets through surfaces), `concurrency` at a time, starting at
// `startAt`, and prints one JSON result per request on stdout.
import OpenAI from "openai";

export interface ClientSpec {
  baseURL: string;
  apiKey: string;
  model: string;
  requests: number;
  concurrency: number;
  /** Epoch ms at which every process starts sending. */
  startAt: number;
  label?: string;
}

export interface ClientResult {
  /** HTTP status the SDK saw; 0 for a connection failure, -1 for a 2xx whose body did not parse. */
  status: number;
  attempts: number | null;
  queueMs: number | null;
  key: string | null;
  /** The error body's type (or the thrown error) when the request failed. */
  error: string | null;
  sentAt: number;
  ms: number;
}

function stamp(h: Headers | undefined): Pick<ClientResult, "attempts" | "queueMs" | "key"> {
  const num = (name: string) => (h?.has(name) ? Number(h.get(name)) : null);
  return { attempts: num("x-slotgate-attempts"), queueMs: num("x-slotgate-queue-ms"), key: h?.get("x-slotgate-key") ?? null };
}

async function main(spec: ClientSpec): Promise<ClientResult[]> {
  const client = new OpenAI({ apiKey: spec.apiKey, baseURL: spec.baseURL, maxRetries: 0, timeout: 90_000 });
  const send = async (i: number): Promise<ClientResult> => {
    const sentAt = Date.now();
    const done = (r: Omit<ClientResult, "sentAt" | "ms">): ClientResult => ({ ...r, sentAt, ms: Date.now() - sentAt });
    try {
      const { data, response } = await client.chat.completions
        .create({ model: spec.model, max_tokens: 16, messages: [{ role: "user", content: `${spec.label} request ${i}` }] })
        .withResponse();
      const ok = typeof data.choices[0]?.message.content === "string" && data.choices[0].message.content.length > 0;
      return done({ status: ok ? response.status : -1, error: null, ...stamp(response.headers) });
    } catch (e) {
      if (e instanceof OpenAI.APIError) return done({ status: e.status ?? 0, error: e.type ?? e.message, ...stamp(e.headers) });
      return done({ status: 0, error: String(e), ...stamp(undefined) });
    }
  };

  await new Promise((r) => setTimeout(r, Math.max(0, spec.startAt - Date.now())));
  const results: ClientResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < spec.requests) {
      const i = next++;
      results[i] = await send(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(spec.concurrency, spec.requests) }, worker));
  return results;
}

if (import.meta.main) {
  const spec = JSON.parse(process.argv[2] ?? "") as ClientSpec;
  process.stdout.write(JSON.stringify(await main(spec)));
}
