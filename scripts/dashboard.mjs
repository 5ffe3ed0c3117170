// `npm run dashboard`: builds the dashboard into the Worker's static assets (assets/admin/), so
// none of it is in the Worker's bundle: the client JS (src/dashboard/client/*.js, plain browser
// JS) joined in one strict IIFE and minified, the stylesheet, and the HTML shell rendered from
// src/dashboard/page.tsx. The admin routes serve them from the ASSETS binding behind their guard.
// test/node/dashboard-gen.test.ts fails when the files are not what the sources give.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { buildSync, transformSync } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
/** In this order: the chart, the series, the spend chart and the callers' table are used by main. */
export const PARTS = ["chart", "series", "spend", "callers", "main"];
export const OUT_DIR = join(root, "assets/admin");

/**
 * Bundles a TypeScript module for Node (JSX by hono/jsx) and imports it.
 * @param {string} entry
 */
async function load(entry) {
  const { outputFiles } = buildSync({
    entryPoints: [join(root, entry)], bundle: true, platform: "node", format: "esm", write: false,
    jsx: "automatic", jsxImportSource: "hono/jsx", nodePaths: [join(root, "node_modules")], logLevel: "silent",
  });
  const [out] = outputFiles ?? [];
  if (!out) throw new Error(`esbuild produced nothing for ${entry}`);
  return import(`data:text/javascript;base64,${Buffer.from(out.text).toString("base64")}`);
}

/** The files of assets/admin, by name, as the sources give them. */
export async function generate() {
  const source = PARTS.map((p) => readFileSync(join(root, "src/dashboard/client", `${p}.js`), "utf8")).join("\n");
  const js = transformSync(`(function () {\n"use strict";\n${source}\n})();\n`, { minify: true, target: "es2020", charset: "utf8" }).code;
  const { STYLE } = await load("src/dashboard/style.ts");
  const css = transformSync(STYLE, { loader: "css", minify: true }).code;
  const { render } = await load("src/dashboard/page.tsx");
  return { "index.html": await render(), "dashboard.js": js, "dashboard.css": css };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  mkdirSync(OUT_DIR, { recursive: true });
  for (const [name, text] of Object.entries(await generate())) writeFileSync(join(OUT_DIR, name), text);
  console.log(`wrote ${pathToFileURL(OUT_DIR).pathname}`);
}
