// Seeded randomness (faults and jitter) and Cloudflare's 524 page.
import { hex } from "./reply.ts";
import type { FaultStatus } from "./options.ts";

/** mulberry32: small, fast, good enough for test traffic, and reproducible from a seed. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// 498 last: a run without it draws the same faults as before it existed.
const ORDER: readonly FaultStatus[] = ["524", "529", "503", "500", "498"];

/** Independent streams from one seed, so jitter and flex-shed draws never shift the fault sequence. */
export class Dice {
  #fault: () => number;
  #jitter: () => number;
  #shed: () => number;

  constructor(seed: number) {
    this.#fault = mulberry32(seed);
    this.#jitter = mulberry32(seed ^ 0x9e3779b9);
    this.#shed = mulberry32(seed ^ 0x5bd1e995);
  }

  /** One draw per flex-tier request: whether the provider sheds it (tiers.ts), at `rate`. */
  shed(rate: number): boolean {
    return rate > 0 && this.#shed() < rate;
  }

  /** One draw per accepted request; the status it lands on, or null for a normal answer. */
  fault(rates: Partial<Record<FaultStatus, number>>): FaultStatus | null {
    const x = this.#fault();
    let edge = 0;
    for (const status of ORDER) {
      edge += rates[status] ?? 0;
      if (x < edge) return status;
    }
    return null;
  }

  jitter(maxMs: number): number {
    return maxMs > 0 ? this.#jitter() * maxMs : 0;
  }
}

/** What Cloudflare answers when the origin took too long: 524 "A Timeout Occurred", HTML. */
export function cloudflare524(host: string): { headers: Record<string, string>; body: string } {
  const ray = hex(16);
  const when = new Date().toISOString().replace("T", " ").replace(/\.\d{3}Z$/, " UTC");
  const body = `<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<!--[if gt IE 8]><!--> <html class="no-js" lang="en-US"> <!--<![endif]-->
<head>
<title>${host} | 524: A timeout occurred</title>
<meta charset="UTF-8" />
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<meta name="robots" content="noindex, nofollow" />
<meta name="viewport" content="width=device-width,initial-scale=1" />
<link rel="stylesheet" id="cf_styles-css" href="/cdn-cgi/styles/main.css" />
</head>
<body>
<div id="cf-wrapper">
  <div id="cf-error-details" class="p-0">
    <header class="mx-auto pt-10 lg:pt-6 lg:px-8 w-240 lg:w-full mb-8">
      <h1 class="inline-block sm:block sm:mb-2 font-light text-60 lg:text-4xl text-black-dark leading-tight mr-2">
        <span class="inline-block">A timeout occurred</span>
        <span class="code-label">Error code 524</span>
      </h1>
      <div>Visit <a href="https://www.cloudflare.com/5xx-error-landing?utm_source=errorcode_524&utm_campaign=${host}" target="_blank" rel="noopener noreferrer">cloudflare.com</a> for more information.</div>
      <div class="mt-3">${when}</div>
    </header>
    <div class="w-240 lg:w-full mx-auto mb-8 lg:px-8">
      <div class="clearfix">
        <div class="w-1/2 md:w-full float-left pr-6 md:pb-10 md:pr-0 leading-relaxed">
          <h2 class="text-3xl font-normal leading-1.3 mb-4">What happened?</h2>
          <p>The origin web server timed out responding to this request.</p>
        </div>
      </div>
    </div>
    <div class="cf-error-footer cf-wrapper w-240 lg:w-full py-10 sm:py-4 sm:px-8 mx-auto text-center sm:text-left border-solid border-0 border-t border-gray-300">
      <p class="text-13">
        <span class="cf-footer-item sm:block sm:mb-1">Cloudflare Ray ID: <strong class="font-semibold">${ray}</strong></span>
      </p>
    </div>
  </div>
</div>
</body>
</html>
`;
  const headers = { "content-type": "text/html; charset=UTF-8", server: "cloudflare", "cf-ray": `${ray}-SJC` };
  return { headers, body };
}
