import type { DataSource } from 'typeorm';
import { hotQuery } from '../prepared';
import { FailureStreak, createLogger, errorMessage, type Logger } from '@trellis/common';
import type { OutgoingMessage } from '@trellis/messaging/bus.port';
import { isPermanentPublishError } from '@trellis/messaging/bus-errors';
import { requirePositiveInt, requirePositiveNumber } from '../guards';
import { purgePublishedOutbox, toOutgoingMessage, type OutboxRow } from './outbox';
import { registerHandoff, type HandoffTarget } from './handoff';
import { changedRows } from '../sql';

export interface OutboxRelayOptions {
  /** rows claimed and published per round */
  batchSize: number;
  /** how often the outbox is looked at when nobody calls kick() */
  pollIntervalMs: number;
  logger?: Logger;
  /**
   * How long a claim keeps other relays off the claimed rows (default 60 s). It must be longer than
   * publishing a whole batch takes; a relay that dies holding a claim delays those rows this long.
   */
  claimMs?: number;
  /** first pause before a failed row is tried again (default 500 ms); doubles per failure */
  retryBaseMs?: number;
  /** longest pause between tries of a failed row (default 60 s) */
  retryMaxMs?: number;
  /** how long published rows are kept, for replay summaries and debugging (default 1 h) */
  retentionMs?: number;
  /** how often published rows older than retentionMs are deleted (default 60 s) */
  cleanupIntervalMs?: number;
  /**
   * How long a row written in this process stays reserved for this relay (default 15 s): it is
   * handed over when its transaction commits and published at once; polling relays take it only
   * if it is still unpublished this long after it was written (this process died, or publishing failed).
   */
  handoffLeaseMs?: number;
  /**
   * How long published handed-over rows wait to be marked published together (default 250 ms, a
   * quarter of handoffLeaseMs if that is less; sooner once a batch of them is waiting): under load
   * one UPDATE (one commit) then marks the messages of many transactions (at 50 ms each relay marked
   * about 0.2 times per action of the pipeline benchmark, BENCHMARKS.md). Publishing does not wait
   * for it; a process that dies in between leaves those rows to be published again after their
   * lease (consumers drop repeats by message id).
   */
  markDelayMs?: number;
}

const COLUMNS = 'id, exchange, routing_key, message_id, type, correlation_id, payload, headers, attempts';

/** A row a relay set aside, as its listeners hear of it. */
export interface SetAsideRow {
  outboxId: string;
  messageId: string;
  exchange: string;
  routingKey: string;
  reason: string;
}

const setAsideListeners = new WeakMap<DataSource, Set<(rows: SetAsideRow[]) => void>>();

/**
 * Tells `listener` of the rows the relays of this process set aside on `dataSource`, once each is
 * recorded (the policy-engine then fails the action of a work order at once rather than at its
 * next look). Rows another process's relay sets aside are not heard of here. Returns the undo.
 */
export function onOutboxSetAside(dataSource: DataSource, listener: (rows: SetAsideRow[]) => void): () => void {
  let listeners = setAsideListeners.get(dataSource);
  if (!listeners) setAsideListeners.set(dataSource, (listeners = new Set()));
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * Publishes outbox rows on the bus, in two ways. Rows written in this process (`addToOutbox` on the
 * relay's data source) are handed over when their transaction commits (./handoff.ts) and published
 * at once, in the order they were written; one UPDATE then marks every row of the batch published.
 * That is the path every message takes while the process lives: one statement per batch, no
 * polling. Everything else is found by polling: each round claims a batch of unpublished rows in one short
 * statement (`FOR UPDATE SKIP LOCKED` plus a `claimed_until` lease, so concurrent relays take
 * different rows and a dead relay's rows come back when its lease ends), publishes them one by one
 * in id order with no transaction open, then marks all that were confirmed with one UPDATE.
 *
 * Delivery is at least once: a relay that dies after publishing and before marking leaves rows that
 * are published again after its lease; consumers drop the repeat by message id. A failed publish
 * ends the round (later rows of the batch are released untouched, so they are never published ahead
 * of the failed one within the batch); the failed row records attempts and last_error and waits with
 * exponential backoff, and the relay pauses as long before its next round. Rows published longer
 * than `retentionMs` ago are deleted on `cleanupIntervalMs`.
 *
 * A row that can never be published (the broker refuses its size: `isPermanentPublishError`) is set
 * aside instead (`failed_at`, `last_error`): logged as an error, never claimed or retried again, and
 * no row waits behind it; the engine's deadline supervisor fails the action whose work order it was.
 *
 * Order behind a failed row (docs/RELIABILITY.md §3): this relay publishes no row with a higher id
 * than a row whose publish it saw fail before that row is published (by it or any relay). Rows
 * handed over meanwhile are released to polling at once (`behindFailure`) and polling publishes in
 * id order, holding back what is behind the failed row while that row is leased. The wait is bounded
 * by the lease rules: when another relay holds the failed row, this one looks again every
 * `retryBaseMs` and takes the row itself once that relay's lease runs out. Other relays do not know
 * of the failure; they skip the leased row and may publish rows behind it (order is per relay).
 */
export class OutboxRelay {
  private readonly batchSize: number;
  private readonly pollIntervalMs: number;
  private readonly claimMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly retentionMs: number;
  private readonly cleanupIntervalMs: number;
  private readonly handoffLeaseMs: number;
  private readonly logger: Logger;
  private readonly handoff: HandoffTarget;
  private unregister: (() => void) | null = null;
  /** committed rows handed over by this process's transactions, oldest first */
  private handed: OutboxRow[] = [];
  private nextPollAt = 0;
  private readonly markDelayMs: number;
  /** ids of handed-over rows published and not yet marked, and when they must be */
  private toMark: string[] = [];
  private markDueAt = Infinity;

  private running = false;
  private loop: Promise<void> | null = null;
  private kicked = false;
  private wake: (() => void) | null = null;
  private pausedUntil = 0;
  private nextCleanupAt = 0;
  /**
   * The row whose publish failed last, until a round claims it again (or finds it published or
   * gone): no round publishes a row behind it before it (their order), and a round that finds it
   * still leased looks again soon instead of after pollIntervalMs.
   */
  private retryId: bigint | null = null;
  /**
   * Set by a failed publish, until a polling round has published the failed row and every row
   * released to polling behind it: meanwhile rows handed over are released to polling too (at once,
   * even during the pause) instead of being published, so that they go after the failed row, in id
   * order. Polling keeps that order (it claims in id order and publishes nothing behind the failed row
   * before it); publishing them directly would put them ahead of it, or ahead of rows released behind
   * it that a round has not reached yet.
   */
  private behindFailure = false;
  /** rounds that failed in a row (the database away): logged as a streak, and waited out with backoff */
  private readonly roundFailures: FailureStreak;

  constructor(
    private readonly dataSource: DataSource,
    private readonly publish: (message: OutgoingMessage) => Promise<void>,
    options: OutboxRelayOptions,
  ) {
    this.batchSize = requirePositiveInt('OutboxRelay batchSize', options.batchSize);
    this.pollIntervalMs = requirePositiveNumber('OutboxRelay pollIntervalMs', options.pollIntervalMs);
    this.claimMs = requirePositiveNumber('OutboxRelay claimMs', options.claimMs ?? 60_000);
    this.retryBaseMs = requirePositiveNumber('OutboxRelay retryBaseMs', options.retryBaseMs ?? 500);
    this.retryMaxMs = requirePositiveNumber('OutboxRelay retryMaxMs', options.retryMaxMs ?? 60_000);
    this.retentionMs = options.retentionMs ?? 3_600_000;
    if (!Number.isFinite(this.retentionMs) || this.retentionMs < 0) {
      throw new Error(`OutboxRelay retentionMs must be a number of at least 0, got ${this.retentionMs}`);
    }
    this.cleanupIntervalMs = requirePositiveNumber('OutboxRelay cleanupIntervalMs', options.cleanupIntervalMs ?? 60_000);
    this.logger = options.logger ?? createLogger('outbox-relay');
    this.handoffLeaseMs = requirePositiveNumber('OutboxRelay handoffLeaseMs', options.handoffLeaseMs ?? 15_000);
    this.markDelayMs = options.markDelayMs ?? Math.min(250, this.handoffLeaseMs / 4);
    if (!Number.isFinite(this.markDelayMs) || this.markDelayMs < 0 || this.markDelayMs >= this.handoffLeaseMs / 2) {
      throw new Error(`OutboxRelay markDelayMs must be at least 0 and well below handoffLeaseMs, got ${this.markDelayMs}`);
    }
    this.handoff = { handoffLeaseSeconds: this.handoffLeaseMs / 1000, handOff: (rows) => this.take(rows) };
    this.roundFailures = new FailureStreak(this.logger, 'outbox relay round failed', 'outbox relay rounds succeed again');
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.kicked = false;
    this.nextPollAt = 0;
    this.unregister = registerHandoff(this.dataSource, this.handoff);
    this.loop = this.run();
  }

  /**
   * Stops polling and resolves once the round in flight (publishing and marking) has finished and
   * the rows handed over by then are published (or left to their lease, should publishing fail).
   */
  async stop(): Promise<void> {
    this.unregister?.();
    this.unregister = null;
    this.running = false;
    this.wake?.();
    await this.loop;
    this.loop = null;
    // (behind a failure they are released to polling, which needs no pause to end)
    while (this.handed.length > 0 && (this.behindFailure || Date.now() >= this.pausedUntil)) {
      try {
        await this.publishHanded();
      } catch (e) {
        this.logger.warn('outbox relay could not publish every handed-over row before stopping; their lease will run out', {
          rows: this.handed.length,
          error: errorMessage(e),
        });
        break;
      }
    }
    this.handed = [];
    await this.markPublished().catch((e) =>
      this.logger.warn('outbox relay could not mark published rows before stopping; they will be published again', { error: errorMessage(e) }),
    );
  }

  /**
   * Look at the outbox now rather than at the next poll. Rows this process writes through
   * `addToOutbox` need no kick (they are handed over on commit); this is for rows written otherwise,
   * or claims that ran out.
   */
  kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  private take(rows: OutboxRow[]): void {
    if (!this.running) return; // stopped: the rows' lease runs out and polling publishes them
    for (const row of rows) this.handed.push(row);
    // behind a failure this wakes the relay even during its pause, to release them to polling
    this.wake?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let more = false;
      let erred = false;
      // a statement of this iteration went through (a round that only sleeps or publishes proves nothing)
      let answered = false;
      try {
        await this.cleanupIfDue();
        if (this.toMark.length > 0 && (Date.now() >= this.markDueAt || this.toMark.length >= this.batchSize)) {
          await this.markPublished();
          answered = true;
        }
        if (this.handed.length > 0) more = await this.publishHanded();
        // polled rows (a failed row and those behind it, other processes' rows, ran-out leases) get
        // their turn on time even while handed-over rows keep coming
        // (not during a failure's pause: the failed row goes first once it is over)
        if (Date.now() >= this.pausedUntil && (this.kicked || Date.now() >= this.nextPollAt)) {
          this.kicked = false;
          this.nextPollAt = Date.now() + this.pollIntervalMs;
          more = (await this.round()) || more;
          answered = true;
        }
      } catch (e) {
        this.roundFailures.failed(errorMessage(e));
        erred = true;
      }
      if (answered && !erred) this.roundFailures.succeeded();
      if (!this.running) break;
      const pause = this.pausedUntil - Date.now();
      const toRelease = this.behindFailure && this.handed.length > 0;
      if (toRelease && erred) {
        // releasing them failed: again after retryBaseMs (or the pause), not at once
        await this.sleep(Math.max(pause, this.retryBaseMs), 'stop');
      } else if (toRelease) {
        continue; // released before any pause: their hand-over lease may end first
      } else if (pause > 0) {
        await this.sleep(pause, 'release');
      } else if (erred) {
        // the database (or a statement) failing round after round: 0.5, 1, 2 s… between tries, at most
        // a quarter of the hand-over lease, instead of every markDelayMs; a hand-over or kick() wakes it
        await this.sleep(this.failureBackoffMs(), 'any');
      } else if (!more && !this.kicked && this.handed.length === 0) {
        await this.sleep(Math.max(0, Math.min(this.nextPollAt, this.markDueAt) - Date.now()), 'any');
      }
    }
  }

  private failureBackoffMs(): number {
    const cap = Math.max(this.retryBaseMs, Math.min(this.retryMaxMs, this.handoffLeaseMs / 4));
    return Math.min(cap, this.retryBaseMs * 2 ** Math.min(20, this.roundFailures.failures - 1));
  }

  /**
   * Publishes the rows handed over (a batch of them, in order); they are marked published together
   * (markPublished) within markDelayMs. A failed publish ends the batch: the failed row waits with
   * backoff like a polled one, and every row after it is released to polling, which keeps them in id
   * order behind it; so is every row handed over after it until polling has caught up
   * (`behindFailure`). True when more handed-over rows are waiting.
   */
  private async publishHanded(): Promise<boolean> {
    if (this.behindFailure) {
      await this.releaseHanded();
      return false;
    }
    const batch = this.handed.splice(0, this.batchSize);
    const { published, setAside, failed } = await this.publishInOrder(batch, () => false);
    if (published.length > 0) {
      if (this.toMark.length === 0) this.markDueAt = Date.now() + this.markDelayMs;
      for (const id of published) this.toMark.push(id);
    }
    if (failed) {
      // the rows after it go back first, so that they are released whatever fails below
      this.handed = batch.slice(batch.indexOf(failed.row) + 1).concat(this.handed);
      await this.recordFailure(failed.row, failed.error);
    }
    if (setAside.length > 0) await this.setAside(setAside);
    if (failed) {
      await this.markPublished();
      await this.releaseHanded();
    }
    return this.handed.length > 0;
  }

  /**
   * Releases every row handed over and not published to polling (ends their hand-over lease), and
   * has the next round look for them. Rows it could not release stay handed over, to be released
   * next time.
   */
  private async releaseHanded(): Promise<void> {
    const rows = this.handed.splice(0);
    if (rows.length === 0) return;
    try {
      await this.releaseToPolling(rows.map((r) => r.id));
    } catch (e) {
      this.handed = rows.concat(this.handed);
      throw e;
    }
    this.kicked = true;
  }

  /** Marks rows published (and ends their lease). */
  private async setPublished(ids: string[]): Promise<void> {
    await hotQuery(this.dataSource.manager, `UPDATE outbox SET published_at = now(), claimed_until = NULL WHERE id = ANY($1::bigint[])`, [ids]);
  }

  /** Ends the lease of rows not published, so that polling (this relay's or another's) takes them. */
  private async releaseToPolling(ids: string[]): Promise<void> {
    await this.dataSource.query(`UPDATE outbox SET claimed_until = NULL WHERE id = ANY($1::bigint[]) AND published_at IS NULL`, [ids]);
  }

  /**
   * Publishes `rows` one after the other until one fails or `stop()` says so; returns the ids
   * published, the rows the broker can never take (passed over, to be set aside) and the failure,
   * if any (the rows after it are not tried).
   */
  private async publishInOrder(rows: OutboxRow[], stop: () => boolean): Promise<Publishing> {
    const published: string[] = [];
    const setAside: Array<{ row: OutboxRow; error: unknown }> = [];
    for (const row of rows) {
      if (stop()) break;
      try {
        await this.publish(toOutgoingMessage(row));
        published.push(row.id);
      } catch (error) {
        // trying it again cannot help: the rows after it go on
        if (isPermanentPublishError(error)) setAside.push({ row, error });
        else return { published, setAside, failed: { row, error } };
      }
    }
    return { published, setAside, failed: null };
  }

  /**
   * Sets aside rows that can never be published: not claimed, retried or counted as pending again.
   * Should the UPDATE fail, they keep their lease and are tried (and set aside) once it ends.
   */
  private async setAside(rows: Publishing['setAside']): Promise<void> {
    const recorded: SetAsideRow[] = [];
    try {
      for (const { row, error } of rows) recorded.push(await this.setAsideOne(row, error));
    } finally {
      if (recorded.length > 0) {
        for (const listener of setAsideListeners.get(this.dataSource) ?? []) {
          try {
            listener(recorded);
          } catch (e) {
            this.logger.warn('a listener of set-aside outbox rows failed', { error: errorMessage(e) });
          }
        }
      }
    }
  }

  private async setAsideOne(row: OutboxRow, error: unknown): Promise<SetAsideRow> {
    const message = errorMessage(error).slice(0, 2000);
    await this.dataSource.query(
      `UPDATE outbox SET failed_at = clock_timestamp(), last_error = $2, attempts = attempts + 1, claimed_until = NULL
        WHERE id = $1 AND published_at IS NULL`,
      [row.id, message],
    );
    this.logger.error('outbox message can never be published; set aside', {
      outbox_id: row.id,
      message_id: row.message_id,
      type: row.type,
      exchange: row.exchange,
      routing_key: row.routing_key,
      correlation_id: row.correlation_id,
      error: message,
    });
    return { outboxId: row.id, messageId: row.message_id, exchange: row.exchange, routingKey: row.routing_key, reason: message };
  }

  /** Marks the handed-over rows published so far, with one statement. */
  private async markPublished(): Promise<void> {
    if (this.toMark.length === 0) return;
    const ids = this.toMark;
    this.toMark = [];
    this.markDueAt = Infinity;
    try {
      await this.setPublished(ids);
    } catch (e) {
      // try again with the next ones; until then their lease keeps polling relays off them
      this.toMark = ids.concat(this.toMark);
      this.markDueAt = Date.now() + this.markDelayMs;
      throw e;
    }
  }

  /**
   * Sleeps `ms`, or until stop(); with 'any' also until kick() or a hand-over, with 'release' until
   * rows are handed over behind a failure (to release them to polling: a pause must not outlast
   * their hand-over lease).
   */
  private sleep(ms: number, wakeOn: 'any' | 'release' | 'stop'): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = () => {
        if (!this.running || wakeOn === 'any' || (wakeOn === 'release' && this.behindFailure && this.handed.length > 0)) done();
      };
    });
  }

  /** One claim-publish-mark round; true when the batch was full and more rows may be waiting. */
  private async round(): Promise<boolean> {
    const claimedAt = Date.now();
    const result: unknown = await this.dataSource.query(
      `UPDATE outbox SET claimed_until = clock_timestamp() + make_interval(secs => $1)
        WHERE id IN (SELECT id FROM outbox
                      WHERE published_at IS NULL AND failed_at IS NULL
                        AND (claimed_until IS NULL OR claimed_until <= clock_timestamp())
                      ORDER BY id LIMIT $2
                      FOR UPDATE SKIP LOCKED)
        RETURNING ${COLUMNS}`,
      [this.claimMs / 1000, this.batchSize],
    );
    const claimed = changedRows<OutboxRow>(result).sort(byId);
    const ready = await this.inOrderBehindRetry(claimed);
    if (claimed.length === 0) {
      // nothing left to poll: the failed row is published (by anyone) and every row behind it too
      if (this.retryId === null) this.behindFailure = false;
      return false;
    }

    // stop well before the lease runs out, so no other relay can be publishing the same row
    const { published, setAside, failed } = await this.publishInOrder(ready, () => Date.now() - claimedAt > this.claimMs * 0.8);

    if (published.length > 0) {
      await this.setPublished(published);
    }
    const done = new Set(published);
    if (setAside.length > 0) {
      await this.setAside(setAside);
      for (const { row } of setAside) done.add(row.id);
    }
    if (failed) {
      done.add(failed.row.id);
      await this.recordFailure(failed.row, failed.error);
    }
    const untouched = claimed.filter((r) => !done.has(r.id)).map((r) => r.id);
    if (untouched.length > 0) {
      await this.releaseToPolling(untouched);
    } else if (failed === null && this.retryId === null && claimed.length < this.batchSize) {
      // less than a batch, all published: polling has caught up with the rows behind the failed one
      this.behindFailure = false;
    }
    const more = failed === null && claimed.length === this.batchSize;
    // a full batch: the next round at once, not after pollIntervalMs (the rows released behind a
    // failed row may be many, and rows handed over wait for them)
    if (more) this.kicked = true;
    return more;
  }

  /**
   * The claimed rows a round may publish: all of them, unless the row that failed last is still
   * waiting out its backoff lease (kept on the database's clock, which the relay's own pause can
   * end a moment before: Date.now() counts whole milliseconds) or another relay holds it. Then only
   * the rows ahead of it go, and the relay looks again after retryBaseMs; once it is published by
   * anyone, or gone, the order is kept and the wait ends.
   */
  private async inOrderBehindRetry(claimed: OutboxRow[]): Promise<OutboxRow[]> {
    const retryId = this.retryId;
    if (retryId === null) return claimed;
    if (claimed.some((r) => BigInt(r.id) === retryId)) {
      this.retryId = null;
      return claimed;
    }
    const rows: unknown = await this.dataSource.query(`SELECT 1 FROM outbox WHERE id = $1 AND published_at IS NULL AND failed_at IS NULL`, [retryId.toString()]);
    if (!Array.isArray(rows) || rows.length === 0) {
      this.retryId = null;
      return claimed;
    }
    this.kicked = true;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + this.retryBaseMs);
    return claimed.filter((r) => BigInt(r.id) < retryId);
  }

  private async recordFailure(row: OutboxRow, error: unknown): Promise<void> {
    const delayMs = Math.min(this.retryMaxMs, this.retryBaseMs * 2 ** Math.min(row.attempts, 30));
    const message = errorMessage(error).slice(0, 2000);
    // before the UPDATE: should it fail, the row keeps the lease it has, and the order holds all the same
    this.retryId = BigInt(row.id);
    this.behindFailure = true;
    await this.dataSource.query(
      `UPDATE outbox
          SET attempts = attempts + 1, last_error = $2, claimed_until = clock_timestamp() + make_interval(secs => $3)
        WHERE id = $1`,
      [row.id, message, delayMs / 1000],
    );
    // + 1: the lease ends on the database's clock at the UPDATE's time + delayMs; Date.now() counts
    // whole milliseconds, so without it the pause could end up to 1 ms before the lease does
    this.pausedUntil = Date.now() + delayMs + 1;
    // after the pause, poll for the failed row and the rows behind it (released to polling)
    this.kicked = true;
    this.logger.warn('outbox publish failed; will retry', {
      outbox_id: row.id,
      message_id: row.message_id,
      exchange: row.exchange,
      routing_key: row.routing_key,
      attempts: row.attempts + 1,
      retry_in_ms: delayMs,
      error: message,
    });
  }

  private async cleanupIfDue(): Promise<void> {
    if (Date.now() < this.nextCleanupAt) return;
    this.nextCleanupAt = Date.now() + this.cleanupIntervalMs;
    const deleted = await purgePublishedOutbox(this.dataSource, this.retentionMs);
    if (deleted > 0) this.logger.debug('published outbox rows deleted', { deleted });
  }
}

interface Publishing {
  /** ids of the rows published, in order */
  published: string[];
  /** rows that can never be published, with why */
  setAside: Array<{ row: OutboxRow; error: unknown }>;
  /** the row whose publish failed for now (the broker away): the rows after it were not tried */
  failed: { row: OutboxRow; error: unknown } | null;
}

function byId(a: OutboxRow, b: OutboxRow): number {
  const x = BigInt(a.id);
  const y = BigInt(b.id);
  return x < y ? -1 : x > y ? 1 : 0;
}
