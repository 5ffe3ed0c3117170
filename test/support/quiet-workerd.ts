// globalSetup of the workers projects (vitest.config.ts), in vitest's own process, where the Workers
// pool prints what workerd logs. Some tests break streams on purpose (test/cache/stage.test.ts: an
// upstream stream that resets mid-answer, a copy for the cache that stops reading), and workerd logs
// each such disconnect with a stack, which in a passing run reads like a failure. Those lines, and
// only those, are counted instead of printed, and the run ends with one line saying how many;
// SLOTGATE_TEST_LOGS=all prints them as workerd wrote them.

/** What workerd logs for the disconnects the tests make on purpose: nothing else is held back. */
export const EXPECTED: RegExp[] = [
  // A stream's reader cancelled: the response cache's copy stops when the answer breaks or is too big.
  /^exception = workerd\/api\/streams\/identity-transform-stream\.c\+\+:\d+: disconnected: reader canceled\b/,
  // The stand-in upstream of test/support/cache.ts resetting its stream (`sse(events, true)`).
  /^uncaught exception; source = Uncaught \(in promise\); stack = Error: connection reset\n\s+at Object\.pull \([^)]*test\/support\/cache\.ts:/,
  /^uncaught exception; exception = workerd\/jsg\/value\.h:\d+: failed: jsg\.Error: connection reset\b/,
];

type Write = typeof process.stderr.write;
const KEY = Symbol.for("slotgate.quietWorkerd");

/** A `write` for `stream` that drops whole chunks matching EXPECTED, counting them in `held`. */
export function quieted(write: Write, held: { n: number }): Write {
  return function (this: unknown, chunk: unknown, ...rest: unknown[]) {
    const text = typeof chunk === "string" ? chunk : Buffer.isBuffer(chunk) ? (chunk as Buffer).toString("utf8") : null;
    if (text !== null && EXPECTED.some((re) => re.test(text))) {
      held.n += 1;
      const done = rest.find((r) => typeof r === "function") as (() => void) | undefined;
      done?.();
      return true;
    }
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as Write;
}

export default function setup(): () => void {
  const g = globalThis as { [KEY]?: number };
  // Both workers projects name this file: the streams are wrapped once, the summary said once.
  g[KEY] = (g[KEY] ?? 0) + 1;
  if (g[KEY] > 1 || process.env.SLOTGATE_TEST_LOGS === "all") return () => {};
  const held = { n: 0 };
  const [out, err] = [process.stdout.write, process.stderr.write];
  process.stdout.write = quieted(out, held);
  process.stderr.write = quieted(err, held);
  return () => {
    process.stdout.write = out;
    process.stderr.write = err;
    if (held.n > 0) process.stdout.write(`workerd logged ${held.n} disconnects the tests make on purpose (broken streams); SLOTGATE_TEST_LOGS=all prints them\n`);
  };
}
