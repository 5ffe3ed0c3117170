import { randomUUID } from "node:crypto";
import { accessSync, closeSync, constants, existsSync, fdatasyncSync, openSync, readSync, renameSync, statSync, writeFileSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { classify } from "../policy/classify";
import { DIALECTS } from "../providers/dialects";
import { readLines, UsageError } from "./input";
import type { OutputLine } from "./types";

export type { OutputLine } from "./types";

export function outputLine(customId: string, response: OutputLine["response"], error: OutputLine["error"]): OutputLine {
  return { id: `batch_req_${randomUUID().replace(/-/g, "")}`, custom_id: customId, response, error };
}

/** Error codes that say "not answered yet": `--resume` runs these items again. */
export const NOT_DONE_CODES = new Set(["interrupted", "upstream_unreachable", "queue_timeout", "limiter_unavailable", "internal_error"]);

/**
 * A final answer is a success, or an error that running the line again would not change: a bad
 * line, a hard quota, a 4xx. Rate limits and transient errors that ran out of attempts, and
 * requests interrupted by Ctrl-C, are not final.
 */
export function isFinal(o: OutputLine): boolean {
  if (o.error === null) return o.response !== null;
  if (NOT_DONE_CODES.has(o.error.code)) return false;
  if (!o.response) return true;
  const cls = classify(o.response.status_code, o.response.body, DIALECTS.generic);
  return cls !== "rate_limit" && cls !== "capacity" && cls !== "transient";
}

function asLine(text: string): OutputLine | null {
  try {
    const v = JSON.parse(text) as OutputLine;
    return typeof v === "object" && v !== null && typeof v.custom_id === "string" && "response" in v && "error" in v ? v : null;
  } catch {
    return null;
  }
}

/**
 * Checks the output file and returns the custom_ids already answered. A file that is not there is
 * not made here: the first line written makes it (OutputWriter), so a run refused before its first
 * line leaves no file behind; where it would go must be writable now, before anything is sent.
 * Without `resume` an existing non-empty file is refused (it holds someone's results). With it,
 * lines that are not final, repeated, or cut short by a crash are dropped by an atomic rewrite, so
 * that after the run every custom_id appears exactly once.
 */
export async function prepareOutput(path: string, resume: boolean): Promise<{ done: Set<string>; dropped: number }> {
  const done = new Set<string>();
  if (!existsSync(path) || statSync(path).size === 0) {
    writable(path);
    return { done, dropped: 0 };
  }
  if (!resume) throw new UsageError(`${path} already holds results: pass --resume to continue that run, or choose another --out`);
  const kept: string[] = [];
  let dropped = 0;
  for await (const { text } of readLines(path)) {
    if (text.trim() === "") continue;
    const o = asLine(text);
    if (o && isFinal(o) && !done.has(o.custom_id)) {
      done.add(o.custom_id);
      kept.push(text);
    } else dropped += 1;
  }
  if (dropped > 0 || !endsWithNewline(path)) {
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, kept.map((l) => `${l}\n`).join(""));
    renameSync(tmp, path);
  }
  return { done, dropped };
}

/** UsageError unless `path` can be written: the file itself if it is there, else its folder. */
function writable(path: string): void {
  const there = existsSync(path);
  const target = there ? path : dirname(resolve(path));
  try {
    if (!there && !statSync(target).isDirectory()) throw new Error();
    accessSync(target, constants.W_OK);
  } catch {
    throw new UsageError(there ? `${path}: cannot write it` : `${path}: cannot write there (${target} is not a folder this user may write in)`);
  }
}

function endsWithNewline(path: string): boolean {
  const size = statSync(path).size;
  if (size === 0) return true;
  const fd = openSync(path, "r");
  try {
    const b = Buffer.alloc(1);
    return readSync(fd, b, 0, 1, size - 1) === 1 && b[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

/**
 * Appends one line per finished item, straight to the OS (a crash of this process loses nothing
 * written). The file is opened (made, if it is not there) by the first line.
 */
export class OutputWriter {
  private readonly path: string;
  private fd: number | null = null;
  private lastSync = 0;
  written = 0;

  constructor(path: string) {
    this.path = path;
  }

  write(line: OutputLine): void {
    this.fd ??= openSync(this.path, "a");
    const buf = Buffer.from(`${JSON.stringify(line)}\n`, "utf8");
    for (let off = 0; off < buf.length; ) off += writeSync(this.fd, buf, off, buf.length - off);
    this.written += 1;
    // Against a power cut too, at most a second's worth is at risk.
    const now = Date.now();
    if (now - this.lastSync >= 1_000) {
      fdatasyncSync(this.fd);
      this.lastSync = now;
    }
  }

  close(): void {
    if (this.fd === null) return;
    fdatasyncSync(this.fd);
    closeSync(this.fd);
    this.fd = null;
  }
}
