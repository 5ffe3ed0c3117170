// The targets, applied to one scenario's results.
import type { Result } from "./scenario.ts";

export interface Verdict {
  target: string;
  pass: boolean;
}

export const share429 = (r: Result) => (r.attempts === 0 ? 0 : r.upstream429 / r.attempts);
export const ratio = (r: Result) => r.makespanMs / r.idealMs;

export function verdict(r: Result, direct?: Result): Verdict {
  const all = r.failed === 0;
  switch (r.family) {
    case "quota":
      return { target: "<=1.05x, <=1% 429", pass: all && ratio(r) <= 1.05 && share429(r) <= 0.01 };
    case "cap":
      return { target: "<=1.2x, <=5% 429", pass: all && ratio(r) <= 1.2 && share429(r) <= 0.05 };
    case "faults": {
      const vsDirect = direct ? r.makespanMs / direct.makespanMs : Infinity;
      return { target: "all, 0 cuts, <=1.0x direct", pass: all && r.cuts === 0 && vsDirect <= 1.0 };
    }
    case "hint":
      // By design: a hint past the deadline is the caller's to act on, at once and with the hint.
      return { target: "429 + retry-after at once (design)", pass: r.failed === r.failed429 && r.makespanMs < 5_000 };
    case "change":
      return r.name.includes("halved")
        ? { target: "429s stop <=2s", pass: all && (r.last429AfterChangeMs ?? Infinity) <= 2_000 }
        : { target: "new rate <=10s", pass: all && (r.rateAfterChangeMs ?? Infinity) <= 10_000 };
  }
}
