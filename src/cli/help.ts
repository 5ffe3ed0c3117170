// The batch command's help. What it says of providers (the line format, the default provider,
// what flex buys, the batch APIs and their limits) is read from the provider rows.
import { DIALECTS } from "../providers/dialects";
import { BATCH_API_ROWS, DEFAULT_LINE_PROVIDER, FLEX_SAYS, TITLES } from "../providers/lines";
import { BUILT_IN } from "../providers/table";
import { BATCH_PROVIDERS, credentialVar } from "./providers";

/** The options' text column, and the width the help's lines keep within. */
const COLUMN = " ".repeat(22);
const WIDTH = 97;

/** `text` in lines of at most WIDTH, words kept whole: the first after `first`, the rest after `rest`. */
function wrap(text: string, first = COLUMN, rest = COLUMN): string {
  const lines: string[] = [];
  let line = first;
  for (const word of text.split(" ")) {
    if (line !== first && `${line} ${word}`.length > WIDTH) {
      lines.push(line);
      line = rest + word;
    } else line = line === first ? first + word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.join("\n");
}

const title = (provider: string) => TITLES[provider] ?? provider;
/** Items as prose: `a`, `a and b`, `a, b and c`. */
const prose = (items: readonly string[]) => (items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`);

/** Whose batch line format the input and output are. */
const FORMAT = title(DEFAULT_LINE_PROVIDER);
/** What flex buys at each built-in provider whose tiers row sells it. */
const FLEX = Object.entries(BUILT_IN)
  .flatMap(([name, p]) => (DIALECTS[p.dialect].tiers?.values.flex && FLEX_SAYS[name] ? [`${title(name)}: ${FLEX_SAYS[name]}`] : []))
  .join("; ");
const apis = Object.entries(BATCH_API_ROWS);
/** Each batch API's endpoints, by what they make (`/v1/chat/completions`: chat completions). */
const BATCHED = apis.map(([api, row]) => `${title(api)} ${prose(row.urls.map((u) => u.replace(/^\/v1\//, "").replaceAll("/", " ")))}`).join("; ");
const LINES = apis.map(([api, row]) => `${row.limits.lines.toLocaleString("en-US")} ${title(api)}`).join(", ");

export const HELP = `slotgate: edge gateway for LLM APIs

Usage:
  slotgate batch <requests.jsonl> --out <results.jsonl> [options]

${wrap(`Sends every line of an ${FORMAT} Batch API file ({"custom_id", "method", "url", "body"}) through the limiter and appends one ${FORMAT} batch output line per request as it finishes. No item is lost: each ends with a response or a recorded error.`, "", "")}

Options:
  --out FILE          where results are appended (required)
  --gateway URL       send through a Slotgate gateway, which does the limiting; without it the
                      providers are called directly with the same limiter running in this process
  --provider NAME     provider of lines that name none (default ${DEFAULT_LINE_PROVIDER}): ${BATCH_PROVIDERS.join(", ")}
  --concurrency N     most requests open at once (default 16)
  --caller LABEL      with --gateway: the caller this job is at the gateway (x-slotgate-caller;
                      default batch.<input file name>): callers of a key share it fairly
  --priority LANE     with --gateway: high, normal or low (default low): a batch job yields to
                      interactive calls on the same key, and is never starved by them
  --resume            skip custom_ids already answered in --out, run the rest
  --max-attempts N    attempts per request on transient errors (default 8); 429s are waited
                      out until the request's deadline (120 s from its first send)
  --base-url URL      direct mode: send to this base URL instead of the provider's (testing)
  --mode MODE         sync (default): every line through the limiter, at once;
${wrap(`flex: the same at the flex tier where the line's provider and model sell it (${FLEX}), waiting through its capacity refusals and then at standard, so no line is lost;`)}
${wrap(`provider: every line through the provider's batch API (${BATCHED}), at its batch price (half, on a separate quota), answered within 24 h;`)}
                      auto: with a --deadline within 24 h, flex; else the batch API where the
                      line's provider has one, sync for the rest
  --deadline WHEN     provider/auto: at WHEN (90m, 2h, 30s from now, or an ISO time) running
                      batches are cancelled and the lines they did not answer run synchronously;
                      auto: within 24 h (a batch's completion window), the job runs at flex
  --poll SECONDS      provider/auto: look at running batches at most this often (default 30)
${wrap(`provider/auto: most lines per batch (default the provider's: ${LINES})`, "  --batch-lines N     ")}
  --batch-bytes N     provider/auto: most bytes per batch (default the provider's; 8 MiB with
                      --gateway, under its MAX_BODY_BYTES)
  --cancel            provider/auto: cancel the running batches of the job in --out's state file
  -h, --help          this text

Credentials come from the environment only: ${BATCH_PROVIDERS.map(credentialVar).join(", ")}.
With --gateway, SLOTGATE_TOKEN (if set) is sent as x-slotgate-token.

Provider batches: the output is what sync mode writes, one line per input line. The batch ids go to
<out>.batches.jsonl before anything else happens; --resume attaches to running batches and never
submits a line whose batch exists. Lines a batch did not answer (failed, expired, or cancelled at
the deadline) run synchronously, once. Through --gateway with a virtual key, the key needs the
batches scope, and the gateway meters the batches' answers at batch prices.

Ctrl-C stops sending and waits for requests in flight; a second Ctrl-C aborts them. In provider
mode Ctrl-C leaves the batches running and says how to resume; a second Ctrl-C offers to cancel them.
Exit codes: 0 all succeeded, 1 some lines failed, 2 usage or input error (nothing sent), 130 stopped.`;
