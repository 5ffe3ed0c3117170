// Command line: node test/support/standin/cli.ts --port 9100 --rpm 600 --latency 200 --fault 529=0.05
// Prints the URL on the first line of stdout, then serves until SIGINT/SIGTERM.
import { DEFAULT_OPTIONS, startStandin } from "./index.ts";
import type { StandinOptions } from "./index.ts";

const HELP = `stand-in LLM provider (OpenAI, Azure OpenAI and Anthropic shapes, rate limits, faults)

  --port N              0 = any free port (default 0)      --host H (default 127.0.0.1)
  --rpm N --tpm N       per-credential limits per minute; 0 = unlimited (defaults 500, 200000)
  --itpm N --otpm N     Anthropic input/output token limits (default: same as tpm)
  --burst F | JSON      bucket capacity: fraction of a minute, or '{"requests":5,"tokens":1000}'
  --max-concurrent N    429 beyond N in flight per credential; 0 = no cap
  --no-headers          send no rate-limit headers
  --retry-after MODE    exact | ms | date | absent | long (--long-retry-after-sec N)
  --latency MS --jitter MS --stream-chunks N --output-tokens N
  --fault STATUS=RATE   repeatable; STATUS is 500, 503, 524 or 529
  --seed N              PRNG seed for faults and jitter
  --key-limits JSON     limits of one credential's own: '{"sk-a":{"rpm":900},"sk-b":{"rpm":300}}'
  --quota-key KEY       repeatable; that credential gets insufficient_quota
  --api-key KEY         repeatable; only these credentials are valid
  --echo                reply with the last user message
  --config JSON         any options as JSON (applied first)
Control: GET /_stats, POST /_reset, GET|POST /_config`;

const ALIASES: Record<string, keyof StandinOptions> = {
  latency: "latencyMs",
  jitter: "jitterMs",
  fault: "faults",
  "quota-key": "quotaExhaustedKeys",
  "api-key": "apiKeys",
};

function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

export function parseCli(argv: string[]): Partial<StandinOptions> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith("--")) throw new Error(`unexpected argument ${arg}`);
    let [name, value] = arg.slice(2).split(/=(.*)/s) as [string, string | undefined];
    if (name === "config") {
      Object.assign(out, JSON.parse(value ?? argv[++i] ?? "{}"));
      continue;
    }
    if (name.startsWith("no-")) {
      out[camel(name.slice(3))] = false;
      continue;
    }
    const key = ALIASES[name] ?? (camel(name) as keyof StandinOptions);
    if (!(key in DEFAULT_OPTIONS)) throw new Error(`unknown option --${name}`);
    const def = DEFAULT_OPTIONS[key];
    const next = argv[i + 1];
    if (typeof def === "boolean") {
      if (value === undefined && next !== undefined && /^(true|false)$/.test(next)) value = argv[++i];
      out[key] = value === undefined ? true : value !== "false";
      continue;
    }
    value ??= argv[++i];
    if (value === undefined) throw new Error(`--${name} needs a value`);
    if (key === "faults") {
      const [status, rate] = value.split("=");
      out.faults = { ...(out.faults as object), [status!]: Number(rate) };
    } else if (key === "quotaExhaustedKeys" || key === "apiKeys") {
      out[key] = [...((out[key] as string[] | undefined) ?? []), ...value.split(",")];
    } else if (key === "keyLimits") {
      out.keyLimits = JSON.parse(value);
    } else if (key === "burst") {
      out.burst = value.trim().startsWith("{") ? JSON.parse(value) : Number(value);
    } else {
      out[key] = typeof def === "string" ? value : Number(value);
    }
  }
  return out as Partial<StandinOptions>;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes("--help") || argv.includes("-h")) {
    console.log(HELP);
    return;
  }
  const standin = await startStandin(parseCli(argv));
  console.log(standin.url);
  console.error(`stand-in listening on ${standin.url} with ${JSON.stringify(standin.options())}`);
  const stop = () => {
    standin.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}

if (import.meta.url === `file://${process.argv[1]}` || process.argv[1]?.endsWith("/cli.ts")) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exit(2);
  });
}
