// The command line itself: help, argument errors, exit codes, plain progress lines off a TTY.
import { readdirSync, symlinkSync } from "node:fs";
import { delimiter, join } from "node:path";
import { PassThrough } from "node:stream";
import { describe, expect, test } from "vitest";
import { DEFAULT_GATEWAY } from "../../../src/config/limits.ts";
import { BIN, chatLine, cli, inputOf, KEY, readOutput, runBatch, standin, tempDir, writeInput } from "./helpers.ts";

describe("slotgate command line", () => {
  test("--help prints usage and exits 0; a bad flag exits 2", async () => {
    const help = cli(["--help"]);
    expect((await help.exited).code).toBe(0);
    expect(help.stdout()).toContain("slotgate batch <requests.jsonl> --out <results.jsonl>");
    expect(help.stdout()).toContain("OPENAI_API_KEY");
    // The default it states is the one it uses.
    expect(help.stdout()).toContain(`(default ${DEFAULT_GATEWAY.maxAttempts})`);

    const bad = cli(["batch", "in.jsonl", "--out", "o.jsonl", "--api-key", "sk-nope"]);
    expect((await bad.exited).code).toBe(2);
    expect(bad.stderr()).toMatch(/Unknown option '--api-key'/);

    const lane = cli(["batch", "in.jsonl", "--out", "o.jsonl", "--gateway", "http://127.0.0.1:9", "--priority", "urgent"]);
    expect((await lane.exited).code).toBe(2);
    expect(lane.stderr()).toMatch(/--priority must be high, normal or low/);
    const direct = cli(["batch", "in.jsonl", "--out", "o.jsonl", "--caller", "me"]);
    expect((await direct.exited).code).toBe(2);
    expect(direct.stderr()).toMatch(/--caller and --priority are for --gateway/);
  });

  test("exit 1 and a summary by reason when some lines failed", async () => {
    const s = await standin();
    const dir = tempDir();
    const input = writeInput(dir, [chatLine("ok"), "{", chatLine("worse", { url: "/v1/nothing" })]);
    const out = join(dir, "results.jsonl");
    const run = cli(["batch", input, "--out", out, "--base-url", s.url]);
    expect((await run.exited).code).toBe(1);
    expect(run.stdout()).toMatch(/slotgate batch finished: 3 lines\n\s+succeeded\s+1\n\s+failed\s+2\s+\(invalid_line 2\)\n/);
    expect(run.stdout()).toMatch(/429s absorbed\s+0\n/);
    expect(run.stdout()).toMatch(/wall time\s+[\d.]+s\n/);
  });

  test("from a folder outside the clone: it runs there, and the --resume hint it prints runs as printed, by path or by name", async () => {
    const s = await standin({ faults: { "500": 1 } });
    const dir = tempDir();
    writeInput(dir, inputOf(3));
    const args = ["batch", "requests.jsonl", "--out", "results.jsonl", "--base-url", s.url, "--max-attempts", "1"];
    // The hint says which credentials to set again: it never prints one.
    const hintOf = (stderr: string) => /To finish, run \(with OPENAI_API_KEY set as for this run\):\n {2}(.+)\n/.exec(stderr)?.[1] ?? "";

    // Run by its path (no `slotgate` on the PATH): the hint names Node and the file.
    const first = cli(args, undefined, dir);
    expect((await first.exited).code).toBe(1);
    const hint = hintOf(first.stderr());
    expect(first.stderr()).not.toContain(KEY);
    expect(hint).toBe(`node ${BIN} batch requests.jsonl --out results.jsonl --base-url ${s.url} --max-attempts 1 --resume`);
    s.configure({ faults: {} });
    const again = cli([hint], undefined, dir, true);
    expect((await again.exited).code, again.stderr()).toBe(0);
    expect(readOutput(join(dir, "results.jsonl")).filter((l) => l.response?.status_code === 200)).toHaveLength(3);

    // With `slotgate` on the PATH as npm link puts it (a link to bin/slotgate.mjs): run by name, and the hint says the name.
    const links = tempDir();
    symlinkSync(BIN, join(links, "slotgate"));
    const named = { OPENAI_API_KEY: KEY, PATH: `${links}${delimiter}${process.env.PATH}` };
    s.configure({ faults: { "500": 1 } });
    writeInput(dir, inputOf(2, "more"), "more.jsonl");
    const byName = cli(["slotgate batch more.jsonl --out more-results.jsonl --base-url " + s.url + " --max-attempts 1"], named, dir, true);
    expect((await byName.exited).code).toBe(1);
    const short = hintOf(byName.stderr());
    expect(short).toBe(`slotgate batch more.jsonl --out more-results.jsonl --base-url ${s.url} --max-attempts 1 --resume`);
    s.configure({ faults: {} });
    const resumed = cli([short], named, dir, true);
    expect((await resumed.exited).code, resumed.stderr()).toBe(0);
    expect(readOutput(join(dir, "more-results.jsonl")).filter((l) => l.response?.status_code === 200)).toHaveLength(2);
  });

  test("a run refused before its first line leaves no output file and no state file, and sends nothing", async () => {
    const s = await standin();
    const dir = tempDir();
    writeInput(dir, inputOf(2));
    const left = () => readdirSync(dir).sort();

    // No credential (the demo's printed command, run in a shell without the key): refused, nothing made.
    const nokey = cli(["batch", "requests.jsonl", "--out", "results.jsonl", "--base-url", s.url], {}, dir);
    expect((await nokey.exited).code).toBe(2);
    expect(nokey.stderr()).toMatch(/OPENAI_API_KEY is not set/);
    // Provider mode with a line no batch API takes: refused after the state file's path was read, before it was made.
    writeInput(dir, [chatLine("g", { provider: "gemini", url: "/v1beta/openai/chat/completions" })], "gemini.jsonl");
    const nobatch = cli(["batch", "gemini.jsonl", "--out", "results.jsonl", "--mode", "provider", "--base-url", s.url], { GEMINI_API_KEY: "g-key" }, dir);
    expect((await nobatch.exited).code).toBe(2);
    expect(nobatch.stderr()).toMatch(/no batch API here/);
    expect(left()).toEqual(["gemini.jsonl", "requests.jsonl"]);
    // An output that cannot be written is refused before anything is sent, not after the first answer.
    const nowhere = cli(["batch", "requests.jsonl", "--out", "no-such-folder/results.jsonl", "--base-url", s.url], undefined, dir);
    expect((await nowhere.exited).code).toBe(2);
    expect(nowhere.stderr()).toMatch(/no-such-folder\/results\.jsonl: cannot write there/);
    expect(s.stats().attempts).toBe(0);

    // And the same command with the key runs as printed, and makes the file.
    const run = cli(["batch", "requests.jsonl", "--out", "results.jsonl", "--base-url", s.url], undefined, dir);
    expect((await run.exited).code, run.stderr()).toBe(0);
    expect(readOutput(join(dir, "results.jsonl"))).toHaveLength(2);
  });

  test("off a TTY, progress is a plain line every few seconds", async () => {
    const s = await standin({ latencyMs: 100, rpm: 0, tpm: 0 });
    const dir = tempDir();
    const input = writeInput(dir, inputOf(30));
    const sink = new PassThrough();
    let text = "";
    sink.on("data", (b: Buffer) => (text += b.toString()));
    await runBatch({ input, out: join(dir, "o.jsonl"), baseUrl: s.url, concurrency: 4, progress: { stream: sink as unknown as NodeJS.WriteStream, tty: false, plainEveryMs: 150 } });
    const lines = text.trim().split("\n");
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines[0]).toMatch(/^\[slotgate\] \d+\/30 done \(0 failed\), \d+ in flight, \d+ waiting, [\d.]+\/s, ETA \S+$/);
  });
});
