import { classify } from "../policy/classify";
import { DIALECTS } from "../providers/dialects";
import { parseRetryAfter } from "../policy/headers";
import { sleep } from "../sleep";
import { offered } from "../tiers/body";
import { isTier } from "../tiers/choose";
import { answerLine, decide, failLine, send, type SendContext, stoppedLine } from "./exchange";
import type { Item } from "./input";
import type { OutputLine } from "./output";
import { dialectOfLine } from "./providers";
import { standardWhy } from "./tier";

/** Gateway-made refusals that sent nothing upstream: wait as told and send again. */
const COME_BACK = new Set(["queue_timeout", "limiter_unavailable"]);
const DEFAULT_WAIT_MS = 1_000;

/**
 * One item through a Slotgate gateway, which does the limiting and the upstream retries. The
 * only things handled here: the gateway's own "no slot in time" 429 (queue_timeout) and
 * "limiter unavailable" 503, waited out by their retry-after and sent again as often as it takes,
 * and a gateway that cannot be reached, retried with back-off. Every other answer is final.
 */
export async function runGateway(ctx: SendContext, item: Item): Promise<OutputLine | null> {
  let last: Awaited<ReturnType<typeof send>> = null;
  let deadline = Number.POSITIVE_INFINITY;
  let sent = false;
  for (let attempt = 1; ; ) {
    if (ctx.stop.aborted) return stoppedLine(item, sent, last);
    if (!sent) deadline = ctx.now() + ctx.gateway.deadlineMs;
    sent = true;
    const ex = await send(ctx, item);
    if (ex === null) {
      if (ctx.abort.aborted) return stoppedLine(item, true, last);
      const d = decide(ctx, "transient", attempt, null, deadline);
      if (!d.retry) return failLine(item, "upstream_unreachable", `the gateway could not be reached (${attempt} attempts)`, last);
      ctx.counters.retries += 1;
      await sleep(d.delayMs, ctx.stop);
      attempt += 1;
      continue;
    }
    const gatewayError = ex.headers.get("x-slotgate-error") ?? "";
    if (COME_BACK.has(gatewayError) && (ex.status === 429 || ex.status === 503)) {
      last = ex;
      if (ex.status === 429) ctx.counters.absorbed429 += 1;
      ctx.counters.retries += 1;
      const hint = parseRetryAfter(ex.headers.get("retry-after") ?? "", ctx.now()) ?? DEFAULT_WAIT_MS;
      // A little spread, so the items turned away together do not all come back in the same instant.
      await sleep(hint * (1 + 0.1 * ctx.random()), ctx.stop);
      continue;
    }
    const line = answerLine(item, ex, classify(ex.status, ex.body, DIALECTS.generic));
    // Priced at the tier that served it, as the gateway tells it; in a run that asked another, why not.
    const tier = ex.headers.get("x-slotgate-tier");
    if (line.error === null && isTier(tier)) {
      const spec = dialectOfLine(item).tiers;
      const sold = !!ctx.tier && offered(spec, ctx.tier, item.model, item.url);
      ctx.served.set(item.customId, { tier, why: standardWhy(ctx.tier, tier, Number(ex.headers.get("x-slotgate-tier-refusals") ?? 0), sold) });
    }
    return line;
  }
}
