// A batch's results as they pass: each whole line is read for its usage, and the lines are handed
// on in groups. The bytes go on untouched.
import { type ResultLine, resultLine } from "./ops";

/** Lines handed on at once: one object call per this many. */
const GROUP = 1_000;

/**
 * Passes `body` through; `seen` gets its result lines, a group at a time and the rest at the end;
 * `ended` is told whether the body ended whole (false: cut, or the reader left).
 */
export function tapResults(body: ReadableStream<Uint8Array>, seen: (lines: ResultLine[]) => void, ended: (whole: boolean) => void = () => {}): ReadableStream<Uint8Array> {
  const decoder = new TextDecoder();
  let rest = "";
  let group: ResultLine[] = [];
  const take = (text: string) => {
    const use = resultLine(text);
    if (use) group.push(use);
    if (group.length >= GROUP) {
      seen(group);
      group = [];
    }
  };
  let done = false;
  const finish = (whole: boolean) => {
    if (done) return;
    done = true;
    if (group.length) seen(group);
    ended(whole);
  };
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, out) {
        out.enqueue(chunk);
        const lines = (rest + decoder.decode(chunk, { stream: true })).split("\n");
        rest = lines.pop()!;
        for (const l of lines) take(l);
      },
      flush() {
        take(rest + decoder.decode());
        finish(true);
      },
      cancel() {
        finish(false);
      },
    }),
  );
}
