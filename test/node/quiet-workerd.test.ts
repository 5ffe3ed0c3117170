// The workers projects' filter of workerd's log (test/support/quiet-workerd.ts): only the lines of
// disconnects the tests make on purpose are held back; anything else workerd or vitest writes passes.
import { describe, expect, it } from "vitest";
import { quieted } from "../support/quiet-workerd.ts";

const written: string[] = [];
const sink = ((chunk: unknown) => (written.push(String(chunk)), true)) as typeof process.stderr.write;

describe("quieting workerd's expected disconnects", () => {
  it("holds back the broken streams' lines, counts them, and lets everything else through", () => {
    const held = { n: 0 };
    const write = quieted(sink, held);
    const expected = [
      "exception = workerd/api/streams/identity-transform-stream.c++:296: disconnected: reader canceled\nstack: /x/workerd@3e22c07\n",
      "uncaught exception; source = Uncaught (in promise); stack = Error: connection reset\n    at Object.pull (/work/slotgate/test/support/cache.ts:95:26)\n",
      "uncaught exception; exception = workerd/jsg/value.h:1535: failed: jsg.Error: connection reset\nstack: /x/workerd@3ed0574\n",
    ];
    const others = [
      // The same error thrown anywhere but the stand-in's broken stream is a real one.
      "uncaught exception; source = Uncaught (in promise); stack = Error: connection reset\n    at fetchUpstream (/work/slotgate/src/proxy/send.ts:10:3)\n",
      "uncaught exception; source = Uncaught (in promise); stack = TypeError: x is undefined\n",
      " FAIL  workers  test/cache/stage.test.ts > a stream that breaks: reader canceled\n",
      " ✓  workers  test/cache/stage.test.ts (16 tests)\n",
    ];
    for (const line of [...expected, ...others]) expect(write(line)).toBe(true);
    expect(held.n).toBe(3);
    expect(written).toEqual(others);
    let called = false;
    write(Buffer.from(expected[0]!), () => (called = true));
    expect(called).toBe(true);
    expect(held.n).toBe(4);
  });
});
