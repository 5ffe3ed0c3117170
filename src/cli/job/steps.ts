// What the job does to one chunk: submit its batch (recording intent, file and batch id as each
// happens), find a batch a crash left unrecorded, look at it, take its answers when it ends, cancel
// it. Every step that creates something upstream is in the journal before the next one starts.
import { type Api, BATCH_API_ROWS } from "../../providers/lines";
import type { Item } from "../input";
import type { Session } from "../session";
import { type BatchApi, type BatchView, JobStopped } from "./api";
import { apply, type Chunk, current, type Job, type JobEvent, type Journal } from "./journal";
import type { SyncLane } from "./lane";

export class Steps {
  /** The latest look at each chunk's batch. */
  readonly views = new Map<string, BatchView>();
  /** When one of this job's batches last ended: room in the queue may have come back. */
  lastEndedAt = 0;
  /** Lines the batches answered in this run. */
  answered = 0;
  /** What the summary should say that no figure does (a batch that could not be told apart). */
  readonly notes: string[] = [];

  readonly s: Session;
  readonly journal: Journal;
  readonly job: Job;
  readonly items: Map<string, Item>;
  apis: Record<Api, BatchApi>;
  readonly lane: SyncLane;

  constructor(s: Session, journal: Journal, job: Job, items: Map<string, Item>, apis: Record<Api, BatchApi>, lane: SyncLane) {
    this.s = s;
    this.journal = journal;
    this.job = job;
    this.items = items;
    this.apis = apis;
    this.lane = lane;
  }

  add(ev: JobEvent): void {
    this.journal.add(ev);
    apply(this.job, ev);
  }

  private chunk(name: string): Chunk {
    return this.job.chunks.get(name)!;
  }

  /** The chunk's lines still without an answer in the output. */
  undone(c: Chunk): Item[] {
    return c.plan.ids.filter((id) => !this.s.done.has(id)).map((id) => this.items.get(id)).filter((it): it is Item => it !== undefined);
  }

  /** A new attempt: intent first, then the file (OpenAI) and the batch, each recorded as soon as it exists. */
  async submit(name: string): Promise<void> {
    const c = this.chunk(name);
    const n = c.attempts.length + 1;
    const reuse = c.attempts.map((a) => a.fileId).filter((f) => f !== undefined).at(-1);
    this.add({ e: "submit", chunk: name, attempt: n, at: this.s.ctx.now() });
    const lines = c.plan.ids.map((id) => this.items.get(id)!);
    const meta = { slotgate_job: this.job.job, slotgate_chunk: name, slotgate_attempt: String(n) };
    const made = await this.apis[c.plan.api].create(c.plan, lines, meta, reuse, (fileId) => this.add({ e: "file", chunk: name, attempt: n, fileId }));
    if (made.kind === "created") {
      this.add({ e: "batch", chunk: name, attempt: n, batchId: made.view.id, at: this.s.ctx.now() });
      this.views.set(name, made.view);
    } else if (made.why === "stop") {
      this.add({ e: "refused", chunk: name, attempt: n, why: "lost", code: made.code, message: made.message });
      throw new JobStopped(`the ${c.plan.api} batch API refused this job (${made.code}): ${made.message}`);
    } else this.add({ e: "refused", chunk: name, attempt: n, why: made.why, code: made.code, message: made.message });
  }

  /**
   * An attempt recorded as submitted but not as created (a crash, or an answer that never came):
   * the batch it may have made is looked for before anything is submitted again. A file-input
   * batch (OpenAI's) carries the job, chunk and attempt in its metadata; an inline one (Anthropic's)
   * is told by its time and size.
   */
  async reconcile(name: string): Promise<void> {
    const c = this.chunk(name);
    const a = current(c)!;
    const seen = await this.apis[c.plan.api].recent(a.submittedAt);
    const taken = new Set([...this.job.chunks.values()].flatMap((x) => x.attempts.map((t) => t.batchId)));
    const mine = seen.filter((v) =>
      BATCH_API_ROWS[c.plan.api].input === "file"
        ? v.metadata?.slotgate_job === this.job.job && v.metadata.slotgate_chunk === name && v.metadata.slotgate_attempt === String(a.n)
        : !taken.has(v.id) && v.counts.total === c.plan.ids.length,
    );
    if (mine.length === 1) {
      this.add({ e: "batch", chunk: name, attempt: a.n, batchId: mine[0]!.id, at: this.s.ctx.now() });
      this.views.set(name, mine[0]!);
    } else if (mine.length === 0) this.add({ e: "refused", chunk: name, attempt: a.n, why: "lost", code: "not_created", message: "no batch of this attempt exists" });
    else if (!this.notes.some((x) => x.includes(name)))
      this.notes.push(`${name}: batches ${mine.map((v) => v.id).join(", ")} could each be this chunk's (made just before a crash); none is used and its ${c.plan.ids.length} lines are not run: cancel the ones that are not this job's and run --resume again`);
  }

  /** Looks at the chunk's batch; records a change; takes an ended batch's answers. */
  async poll(name: string): Promise<void> {
    const c = this.chunk(name);
    const a = current(c)!;
    const view = await this.apis[c.plan.api].get(a.batchId!);
    this.views.set(name, view);
    const k = view.counts;
    if (view.status !== a.status || k.done !== a.counts?.done || k.failed !== a.counts?.failed)
      this.add({ e: "status", chunk: name, attempt: a.n, status: view.status, counts: k });
    if (view.ended) await this.ended(name, view);
  }

  private async ended(name: string, view: BatchView): Promise<void> {
    const c = this.chunk(name);
    const a = current(c)!;
    this.lastEndedAt = this.s.ctx.now();
    if (view.refused) {
      // Refused at validation, nothing ran and nothing is billed: no room waits for room, anything else runs synchronously.
      this.add({ e: "refused", chunk: name, attempt: a.n, why: view.refused.queue ? "queue" : "error", code: view.refused.code, message: view.refused.message });
      if (!view.refused.queue) this.fallback(name);
      return;
    }
    const answers = await this.apis[c.plan.api].answers(view, c.plan);
    const rest: Item[] = [];
    for (const it of this.undone(c)) {
      const line = answers.get(it.customId);
      if (!line) {
        rest.push(it);
        continue;
      }
      this.s.record(line, it, true);
      this.s.done.add(it.customId);
      this.answered += 1;
    }
    this.lane.push(...rest);
    this.add({ e: "collected", chunk: name, attempt: a.n });
  }

  /** No batch will answer the chunk: its lines go synchronously. */
  fallback(name: string): void {
    this.lane.push(...this.undone(this.chunk(name)));
    this.add({ e: "collected", chunk: name, attempt: current(this.chunk(name))?.n ?? 0 });
  }

  async cancel(name: string): Promise<void> {
    const c = this.chunk(name);
    const a = current(c)!;
    this.add({ e: "cancel", chunk: name, attempt: a.n, at: this.s.ctx.now() });
    this.views.set(name, await this.apis[c.plan.api].cancel(a.batchId!));
  }
}
