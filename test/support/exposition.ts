// A strict reader of the Prometheus text format (0.0.4) for tests: it throws on anything the
// format does not allow (a line that is neither comment nor sample, bad escapes, a family split in
// two, a sample whose name does not belong to its TYPE, a non-cumulative histogram). The npm
// parser that exists (parse-prometheus-text-format) drops the labels, sum and count of labelled
// histograms and accepts garbage lines, so it could not catch what this must catch. promtool and a
// real Prometheus check the same output in test/node and test/e2e.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface Family {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

function parseValue(v: string, line: string): number {
  if (v === "+Inf") return Number.POSITIVE_INFINITY;
  if (v === "-Inf") return Number.NEGATIVE_INFINITY;
  if (v === "NaN") return Number.NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v)) throw new Error(`bad value in ${JSON.stringify(line)}`);
  return Number(v);
}

function parseSample(line: string): Sample {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)( -?\d+)?$/.exec(line);
  if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
  const labels: Record<string, string> = {};
  const body = m[2]?.slice(1, -1) ?? "";
  let i = 0;
  while (i < body.length) {
    const eq = body.indexOf("=", i);
    const name = body.slice(i, eq);
    if (eq < 0 || !LABEL.test(name) || body[eq + 1] !== '"') throw new Error(`bad label in ${JSON.stringify(line)}`);
    let j = eq + 2;
    let value = "";
    for (; j < body.length && body[j] !== '"'; j++) {
      if (body[j] !== "\\") {
        value += body[j];
        continue;
      }
      const next = body[++j];
      if (next === "\\") value += "\\";
      else if (next === '"') value += '"';
      else if (next === "n") value += "\n";
      else throw new Error(`bad escape in ${JSON.stringify(line)}`);
    }
    if (body[j] !== '"') throw new Error(`unterminated label value in ${JSON.stringify(line)}`);
    if (name in labels) throw new Error(`label ${name} twice in ${JSON.stringify(line)}`);
    labels[name] = value;
    i = j + 1;
    if (i < body.length && body[i++] !== ",") throw new Error(`bad label separator in ${JSON.stringify(line)}`);
  }
  return { name: m[1]!, labels, value: parseValue(m[3]!, line) };
}

function belongs(f: Family, name: string): boolean {
  if (f.type === "histogram") return [`${f.name}_bucket`, `${f.name}_sum`, `${f.name}_count`].includes(name);
  if (f.type === "summary") return [f.name, `${f.name}_sum`, `${f.name}_count`].includes(name);
  return name === f.name;
}

const seriesId = (s: Sample) => `${s.name}${JSON.stringify(Object.entries(s.labels).sort())}`;

function checkHistogram(f: Family): void {
  const groups = new Map<string, Sample[]>();
  for (const s of f.samples) {
    const { le: _le, ...rest } = s.labels;
    const id = JSON.stringify(Object.entries(rest).sort());
    groups.set(id, [...(groups.get(id) ?? []), s]);
  }
  for (const [id, samples] of groups) {
    const buckets = samples.filter((s) => s.name.endsWith("_bucket"));
    const count = samples.find((s) => s.name.endsWith("_count"));
    if (!count || !samples.some((s) => s.name.endsWith("_sum"))) throw new Error(`${f.name}${id}: no _sum or _count`);
    const les = buckets.map((b) => parseValue(b.labels.le ?? "", `le of ${f.name}`));
    if (les.at(-1) !== Number.POSITIVE_INFINITY) throw new Error(`${f.name}${id}: no +Inf bucket`);
    for (let i = 1; i < buckets.length; i++)
      if (!(les[i]! > les[i - 1]!) || buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${f.name}${id}: buckets not cumulative`);
    if (buckets.at(-1)!.value !== count.value) throw new Error(`${f.name}${id}: +Inf bucket differs from _count`);
  }
}

/** Families in order; throws on the first violation of the format. */
export function parseExposition(text: string): Family[] {
  if (text.length > 0 && !text.endsWith("\n")) throw new Error("the exposition must end with a newline");
  const families: Family[] = [];
  const byName = new Map<string, Family>();
  const series = new Set<string>();
  let current: Family | null = null;
  for (const line of text.split("\n").slice(0, -1)) {
    if (line === "") continue;
    const meta = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
    if (meta) {
      const [, kind, name, rest] = meta as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`bad metric name ${name}`);
      let f = byName.get(name);
      if (f && f !== current) throw new Error(`family ${name} is split`);
      if (!f) {
        f = { name, type: "untyped", help: "", samples: [] };
        byName.set(name, f);
        families.push(f);
      }
      current = f;
      if (kind === "HELP") f.help = rest;
      else if (["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) {
        if (f.samples.length) throw new Error(`TYPE of ${name} after its samples`);
        f.type = rest as Family["type"];
      } else throw new Error(`bad TYPE line: ${line}`);
      continue;
    }
    if (line.startsWith("#")) continue;
    const s = parseSample(line);
    if (!current || !belongs(current, s.name)) throw new Error(`sample ${s.name} outside its family (in ${current?.name})`);
    const id = seriesId(s);
    if (series.has(id)) throw new Error(`duplicate series ${id}`);
    series.add(id);
    current.samples.push(s);
  }
  for (const f of families) if (f.type === "histogram") checkHistogram(f);
  return families;
}

/** The value of the one sample of `name` whose labels include `labels`; throws unless exactly one matches. */
export function value(families: Family[], name: string, labels: Record<string, string> = {}): number {
  const all = families.flatMap((f) => f.samples).filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (all.length !== 1) throw new Error(`${all.length} samples of ${name} ${JSON.stringify(labels)}`);
  return all[0]!.value;
}
