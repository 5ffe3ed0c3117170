import { describe, expect, it } from "vitest";
import { readKey, SHARDS, shardOfName } from "../../src/keys/format";
import { keyHash, mintKey, verifiedHash } from "../../src/keys/keys";
import { forgetLegacy, LEGACY_RECHECK_MS, legacyRefused, legacyVerdict, sawLegacy } from "../../src/keys/legacy";

const ENV = { VIRTUAL_KEY_SECRET: "format-test-secret" };
const B64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const tagged = (key: string) => {
  const p = readKey(key);
  if (p.format !== "tagged") throw new Error(`${key.slice(0, 8)}... is ${p.format}`);
  return p;
};
/** The key with the character at `i` replaced by another of the same alphabet (a hex digit stays one). */
const changed = (key: string, i: number) => {
  const alphabet = i === 47 ? "0123456789abcdef" : B64URL;
  const next = alphabet[(alphabet.indexOf(key[i]!) + 1) % alphabet.length]!;
  return key.slice(0, i) + next + key.slice(i + 1);
};

describe("the key format", () => {
  it("a minted key is sgk-, 43 random characters, its shard's digit and an 8-character tag that checks out", async () => {
    for (let shard = 0; shard < SHARDS; shard++) {
      const key = await mintKey(ENV, shard);
      expect(key).toMatch(/^sgk-[A-Za-z0-9_-]{43}[0-9a-f][A-Za-z0-9_-]{8}$/);
      const p = tagged(key);
      expect(p.shard).toBe(shard);
      expect(p.signed + p.tag).toBe(key);
      expect(await verifiedHash(ENV, key, p)).toBe(await keyHash(ENV, key));
    }
    expect(await mintKey(ENV, 3)).not.toBe(await mintKey(ENV, 3));
  });

  it("changing any one character after sgk- makes the key fail its check", async () => {
    const key = await mintKey(ENV, 7);
    for (let i = 4; i < key.length; i++) {
      const forged = changed(key, i);
      expect(forged).not.toBe(key);
      expect(await verifiedHash(ENV, forged, tagged(forged)), `character ${i}`).toBeNull();
    }
  });

  it("a tag made under another secret fails", async () => {
    const key = await mintKey({ VIRTUAL_KEY_SECRET: "another-secret" }, 2);
    expect(await verifiedHash(ENV, key, tagged(key))).toBeNull();
    expect(await verifiedHash({ VIRTUAL_KEY_SECRET: "another-secret" }, key, tagged(key))).not.toBeNull();
  });

  it("a key of before (sgk- and 43 characters) is legacy; anything else that is neither is malformed", async () => {
    const key = await mintKey(ENV, 0);
    expect(readKey(key.slice(0, 47)).format).toBe("legacy");
    expect(readKey(`sgk-${"A".repeat(43)}`).format).toBe("legacy");
    for (const bad of [key.slice(0, 55), `${key}A`, key.slice(0, 47) + "G" + key.slice(48), key.replace("sgk-", "sgx-"), `sgk-${"A".repeat(42)}`, `sgk-${"A".repeat(42)}=`, `sgk-${"A".repeat(51)}!`])
      expect(readKey(bad).format, bad).toBe("malformed");
  });
});

describe("a name's shard", () => {
  it("is the same every time, one of 16, and spreads names over all of them", () => {
    const counts = new Array<number>(SHARDS).fill(0);
    for (let i = 0; i < 1_600; i++) {
      const shard = shardOfName(`team-${i}`);
      expect(shardOfName(`team-${i}`)).toBe(shard);
      expect(Number.isInteger(shard) && shard >= 0 && shard < SHARDS).toBe(true);
      counts[shard]!++;
    }
    for (const n of counts) expect(n).toBeGreaterThan(50);
  });
});

describe("the old instance's verdict", () => {
  it("refuses only while it was seen empty within the re-check interval", () => {
    expect(legacyVerdict(null, 0)).toBe("ask");
    expect(legacyVerdict({ empty: false, at: 1_000 }, 1_001)).toBe("ask");
    expect(legacyVerdict({ empty: true, at: 1_000 }, 1_000 + LEGACY_RECHECK_MS - 1)).toBe("refuse");
    expect(legacyVerdict({ empty: true, at: 1_000 }, 1_000 + LEGACY_RECHECK_MS)).toBe("ask");
  });

  it("a stale \"empty\" lets one request ask while the others go on refusing", () => {
    forgetLegacy();
    expect(legacyRefused(0)).toBe(false); // never asked
    sawLegacy(true, 0);
    expect(legacyRefused(1)).toBe(true);
    const stale = LEGACY_RECHECK_MS + 1;
    expect(legacyRefused(stale)).toBe(false); // this one asks
    expect(legacyRefused(stale + 1)).toBe(true); // the rest, meanwhile, refuse
    sawLegacy(false, stale + 2);
    expect(legacyRefused(stale + 3)).toBe(false);
    forgetLegacy();
  });
});
