// Providers are data (issue 40): outside src/providers/, the gateway's and the CLI's code names no
// provider, in an identifier, a string, a template or a regex; only comments may. Runs in the node
// project (it reads src/ from disk): `npx vitest run --project node test/providers/names.test.ts`.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");

/** The names searched for, case-insensitively, anywhere in code (inside identifiers too: `openaiApi`, `GEMINI_FILE`). */
const NAMES = /openai|anthropic|azure|gemini|google|groq|mistral|together|fireworks|deepseek|openrouter|xai|bedrock|vertex|amazon|amzn/gi;

/** Keywords after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set(["return", "typeof", "instanceof", "in", "of", "new", "delete", "void", "throw", "case", "do", "else", "yield", "await"]);

/**
 * `src` with every comment (line, block, JSDoc) replaced by spaces, newlines kept so line numbers
 * stay; strings, templates (with their `${}` code) and regular expressions are kept as they are.
 */
export function withoutComments(src: string): string {
  const out = src.split("");
  const blank = (from: number, to: number) => {
    for (let i = from; i < to; i++) if (out[i] !== "\n") out[i] = " ";
  };
  // Template nesting: for each `${` open, the depth of braces inside it.
  const templates: number[] = [];
  let last = ""; // the last significant token's text (or its last char for punctuation)
  let i = 0;
  const n = src.length;

  /** Skips a quoted string from its opening quote; returns the index after its closing quote. */
  const quoted = (at: number): number => {
    const q = src[at];
    let j = at + 1;
    while (j < n && src[j] !== q && src[j] !== "\n") j += src[j] === "\\" ? 2 : 1;
    return j + 1;
  };
  /** Skips template text from after a backtick or a `}` closing a substitution; returns where it stopped and whether a `${` opened. */
  const templateText = (at: number): { end: number; opened: boolean } => {
    let j = at;
    while (j < n) {
      if (src[j] === "\\") j += 2;
      else if (src[j] === "`") return { end: j + 1, opened: false };
      else if (src[j] === "$" && src[j + 1] === "{") return { end: j + 2, opened: true };
      else j++;
    }
    return { end: n, opened: false };
  };
  /** Skips a regular expression literal from its opening slash (character classes may hold a slash). */
  const regex = (at: number): number => {
    let j = at + 1;
    let cls = false;
    while (j < n && src[j] !== "\n") {
      const c = src[j];
      if (c === "\\") j += 2;
      else {
        if (c === "[") cls = true;
        else if (c === "]") cls = false;
        else if (c === "/" && !cls) break;
        j++;
      }
    }
    j++;
    while (j < n && /[a-z]/i.test(src[j]!)) j++;
    return j;
  };
  const regexMayStart = () => last === "" || /^[(,=:[!&|?{};+\-*%<>~^]$/.test(last) || BEFORE_REGEX.has(last);

  while (i < n) {
    const c = src[i]!;
    if (c === "/" && src[i + 1] === "/") {
      const end = src.indexOf("\n", i);
      blank(i, end < 0 ? n : end);
      i = end < 0 ? n : end;
    } else if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      blank(i, end < 0 ? n : end + 2);
      i = end < 0 ? n : end + 2;
    } else if (c === "'" || c === '"') {
      i = quoted(i);
      last = "str";
    } else if (c === "`") {
      const t = templateText(i + 1);
      if (t.opened) templates.push(0);
      i = t.end;
      last = t.opened ? "{" : "str";
    } else if (c === "}" && templates.length > 0 && templates.at(-1) === 0) {
      templates.pop();
      const t = templateText(i + 1);
      if (t.opened) templates.push(0);
      i = t.end;
      last = t.opened ? "{" : "str";
    } else if (c === "/" && regexMayStart()) {
      i = regex(i);
      last = "regex";
    } else if (/[A-Za-z0-9_$]/.test(c)) {
      let j = i;
      while (j < n && /[A-Za-z0-9_$]/.test(src[j]!)) j++;
      last = src.slice(i, j);
      i = j;
    } else {
      if (templates.length > 0) {
        if (c === "{") templates[templates.length - 1]! += 1;
        else if (c === "}") templates[templates.length - 1]! -= 1;
      }
      if (!/\s/.test(c)) last = c === ")" || c === "]" ? "close" : c;
      i++;
    }
  }
  return out.join("");
}

/** Every `.ts` file under `dir`, recursively. */
function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? tsFiles(path) : name.endsWith(".ts") ? [path] : [];
  });
}

/** `file:line: name` for each provider name in `text`'s code. */
export function namesIn(file: string, text: string): string[] {
  const hits: string[] = [];
  withoutComments(text).split("\n").forEach((line, i) => {
    for (const m of line.matchAll(NAMES)) hits.push(`${file}:${i + 1}: ${m[0]} in ${line.trim().slice(0, 160)}`);
  });
  return hits;
}

describe("withoutComments", () => {
  it("blanks line, block and JSDoc comments and keeps line numbers", () => {
    const src = "a = 1; // openai\n/** anthropic\n * gemini */\nb = /* groq */ 2;\n";
    const out = withoutComments(src);
    expect(out.split("\n")).toHaveLength(src.split("\n").length);
    expect(out).not.toMatch(/openai|anthropic|gemini|groq/);
    expect(out).toContain("a = 1;");
    expect(out).toContain("b = ");
    expect(out).toContain(" 2;");
  });

  it("keeps strings, templates and regular expressions, even when they hold comment markers", () => {
    const cases = [
      `const u = "https://api.openai.com/v1//x";`,
      `const s = 'a /* not a comment */ mistral';`,
      "const t = `//${x ? `/* ${y} */` : '}'} groq`;",
      `const r = /^\\/\\/azure\\/*[/*]$/i.test(z);`,
      "if (x) return /\\/gemini\\//.exec(p);",
      "const k = { a: `${{ b: 1 }.b} xai` };",
    ];
    for (const c of cases) expect(withoutComments(c)).toBe(c);
  });

  it("tells a division from a regular expression", () => {
    const out = withoutComments("const h = a / b / c; // deepseek\nconst i = (x) / 2; /* together */");
    expect(out).not.toMatch(/deepseek|together/);
    expect(out).toContain("a / b / c;");
  });
});

describe("provider names outside src/providers", () => {
  it("the scan finds a name in code, and names its file and line", () => {
    expect(namesIn("x.ts", "// openai\nconst a = 1;\nconst b = FLAVOURS.anthropic;\n")).toEqual(["x.ts:3: anthropic in const b = FLAVOURS.anthropic;"]);
    expect(namesIn("x.ts", "const re = /x-goog-|Gemini/;")).toHaveLength(1);
  });

  it("no code under src/ outside src/providers/ names a provider (comments may)", () => {
    const files = tsFiles(join(ROOT, "src")).filter((f) => !relative(ROOT, f).startsWith(join("src", "providers")));
    expect(files.length).toBeGreaterThan(100);
    const hits = files.flatMap((f) => namesIn(relative(ROOT, f), readFileSync(f, "utf8")));
    expect(hits, hits.join("\n")).toEqual([]);
  });
});
