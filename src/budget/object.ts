import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";
import { type Account, emptyAccount, reserve, reservedUsd, roll, settle, type Verdict } from "./account";
import type { Period } from "./period";

/** What GET /admin/virtual-keys shows of a key's budget. */
export interface Spend {
  /** Spent in the current period (settled answers, and reservations expired unsettled). */
  usd: number;
  /** Held by requests in flight. */
  reservedUsd: number;
  /** When the current period began (ISO 8601); the epoch for `total`. */
  since: string;
}

/**
 * One per virtual key with a budget (named by the key's name and creation time, so a key made
 * again under an old name starts at zero). Keys without a budget never call it. The limit and
 * period come with each call from the key's record, so a changed budget holds at the next request.
 */
export class Budget extends DurableObject<Env> {
  /** Injected in tests. */
  now: () => number = () => Date.now();
  private account: Account;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    sql.exec("CREATE TABLE IF NOT EXISTS account (k TEXT PRIMARY KEY, v TEXT NOT NULL)");
    const row = sql.exec<{ v: string }>("SELECT v FROM account WHERE k = 'a'").toArray()[0];
    this.account = row ? (JSON.parse(row.v) as Account) : emptyAccount();
  }

  async reserve(id: string, estimateUsd: number, budget: number, period: Period, ttlMs?: number): Promise<Verdict> {
    const v = reserve(this.account, id, estimateUsd, budget, period, this.now(), ttlMs);
    this.save();
    return v;
  }

  async settle(id: string, costUsd: number, period: Period): Promise<void> {
    settle(this.account, id, costUsd, period, this.now());
    this.save();
  }

  async status(period: Period): Promise<Spend> {
    roll(this.account, period, this.now());
    return { usd: this.account.spend, reservedUsd: reservedUsd(this.account), since: new Date(this.account.period).toISOString() };
  }

  /** Every change is written before the reply leaves (the output gate): a restart loses no spend. */
  private save(): void {
    this.ctx.storage.sql.exec("INSERT OR REPLACE INTO account (k, v) VALUES ('a', ?)", JSON.stringify(this.account));
  }
}

export function budgetOf(env: Env, vk: { name: string; createdAt: string }): DurableObjectStub<Budget> {
  return env.BUDGETS.get(env.BUDGETS.idFromName(`${vk.name}\n${vk.createdAt}`));
}
