// `npm run demo`: Slotgate without a provider key. Starts a local stand-in provider (test/support/standin/,
// which answers like OpenAI and Anthropic, with their rate-limit headers and 429s) and the gateway
// (wrangler dev) with its openai and anthropic providers pointed at it, an admin token for the
// dashboard and a pool of two stand-in keys for virtual keys; prints how to call it; Ctrl-C stops
// both. Runs on Node 24 (scripts/with-node.mjs fetches it on an older Node).
//
//   npm run demo                      # the gateway on http://127.0.0.1:8787
//   npm run demo -- --port 8788       # another port
//   npm run demo -- --traffic         # and two callers sending requests for a minute, for the dashboard
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { shellWord } from "../src/cli/invoked.ts";
import { startGateway } from "../test/support/gateway.ts";
import { startStandin } from "../test/support/standin/index.ts";

export const ADMIN_TOKEN = "demo-admin";
/** Virtual keys' own HMAC key: never the admin token's value (a key's holder could test guesses of it). */
const VIRTUAL_KEY_SECRET = "demo-virtual-key-secret";
/** Per key, like a small paid plan: low enough that a burst meets the limits, which the dashboard then shows. */
const LIMITS = { rpm: 120, tpm: 40_000, maxConcurrent: 8, latencyMs: 400, jitterMs: 300, outputTokens: 24 };
const MEMBERS = { DEMO_KEY_A: "sk-demo-member-a", DEMO_KEY_B: "sk-demo-member-b" };
const POOLS = { demo: { provider: "openai", members: [{ name: "member-a", secret: "DEMO_KEY_A" }, { name: "member-b", secret: "DEMO_KEY_B" }] } };

const { values } = parseArgs({ options: { port: { type: "string", default: "8787" }, traffic: { type: "boolean", default: false }, verbose: { type: "boolean", default: false } } });
const port = Number(values.port);
if (!Number.isInteger(port) || port < 1 || port > 65_535) {
  console.error(`--port must be a port number, not ${values.port}`);
  process.exit(2);
}

const standin = await startStandin(LIMITS);
let gateway: Awaited<ReturnType<typeof startGateway>>;
try {
  gateway = await startGateway({
    port,
    providers: { openai: { baseUrl: standin.url }, anthropic: { baseUrl: standin.url } },
    vars: { ADMIN_TOKEN, VIRTUAL_KEY_SECRET, POOLS: JSON.stringify(POOLS), ...MEMBERS },
    verbose: values.verbose,
    logLevel: values.verbose ? "log" : "warn",
  });
} catch (err) {
  await standin.close();
  console.error(`The gateway did not start: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
}
const url = gateway.url;
/** A file of this clone, as a shell word: the printed commands run from any folder. */
const here = (path: string) => shellWord(fileURLToPath(new URL(path, import.meta.url)));

console.log(`
Slotgate demo: the gateway is on ${url}, and no provider key is needed.
Its openai and anthropic providers go to a local stand-in (${standin.url}) that answers as they do,
accepts any key, and allows each key ${LIMITS.rpm} requests and ${LIMITS.tpm.toLocaleString("en-US")} tokens a minute, ${LIMITS.maxConcurrent} at once.

  dashboard    ${url}/admin        admin token: ${ADMIN_TOKEN}
  curl         curl ${url}/openai/v1/chat/completions -H "authorization: Bearer sk-my-key" \\
                 -H "content-type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}' -i
  OpenAI SDK   new OpenAI({ baseURL: "${url}/openai/v1", apiKey: "sk-my-key", maxRetries: 0 })
  virtual key  curl -H "authorization: Bearer ${ADMIN_TOKEN}" -H "content-type: application/json" \\
                 -d '{"name":"my-job","pool":"demo"}' ${url}/admin/virtual-keys
               (pool "demo": two stand-in keys; use the "key" it answers, sgk-..., as the API key)
  batch        OPENAI_API_KEY=sk-my-key node ${here("../bin/slotgate.mjs")} batch ${here("../examples/requests.jsonl")} \\
                 --out results.jsonl --gateway ${url}
               (three example lines; results.jsonl is written in the folder you run it from)

Ctrl-C stops the gateway and the stand-in.${values.traffic ? "\nSending traffic for a minute: two callers, 24 requests in flight together (watch the dashboard)." : ""}
`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await Promise.allSettled([gateway.close(), standin.close()]);
  process.exit(0);
};
// wrangler runs under a supervisor tied to this process (support/owned.ts): however this one ends, it
// ends too; on these signals both are closed first, so the stand-in's port is freed at once.
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, stop);

if (values.traffic) void traffic(url);

/** Two callers on one key for a minute: one interactive, one a batch job in the low lane, more than the stand-in's cap together. */
async function traffic(base: string): Promise<void> {
  const end = Date.now() + 60_000;
  const body = JSON.stringify({ model: "gpt-4o-mini", max_tokens: 24, messages: [{ role: "user", content: "Say something short." }] });
  const caller = async (name: string, lane: string) => {
    while (!stopping && Date.now() < end) {
      const headers = { authorization: "Bearer sk-demo-traffic", "content-type": "application/json", "x-slotgate-caller": name, "x-slotgate-priority": lane };
      await fetch(`${base}/openai/v1/chat/completions`, { method: "POST", headers, body }).then((r) => r.arrayBuffer(), () => undefined);
    }
  };
  await Promise.all([...Array.from({ length: 4 }, () => caller("alice", "normal")), ...Array.from({ length: 20 }, () => caller("batch-job", "low"))]);
  if (!stopping) console.log("Traffic done; the gateway is still up.");
}
