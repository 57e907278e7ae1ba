import type { DataSource, EntityManager } from 'typeorm';
import { badRequest } from '@trellis/common';
import type { OutgoingMessage } from '@trellis/messaging/bus.port';
import { optionalText, requireText, requireUuid } from '../guards';
import { hotQuery } from '../prepared';
import { changedCount } from '../sql';
import { handoffTarget, noteWritten } from './handoff';
import type { OutboxRow } from './outbox-row';

export type { OutboxRow } from './outbox-row';

/** What `outboxStats` reports, for health checks and replay summaries. */
export interface OutboxStats {
  /** rows not published yet */
  pending: number;
  /** pending rows whose publishing failed at least once */
  failing: number;
  /** age of the oldest pending row, null when nothing is pending */
  oldestPendingAgeMs: number | null;
  /** rows set aside because they can never be published (not pending: nothing retries them) */
  setAside: number;
}

/** How long rows set aside are kept for a look (`last_error`) before the relay's cleanup deletes them. */
export const SET_ASIDE_RETENTION_MS = 7 * 24 * 3600 * 1000;

/**
 * Writes `message` to the outbox in the caller's transaction, so it is published if and only if that
 * transaction commits. Returns false (and writes nothing) when a message with the same id is already
 * in the outbox: a handler that runs again for the same input must not announce it twice.
 *
 * When an outbox relay runs in this process for the same database, the row is handed to it once the
 * transaction commits (./handoff.ts): published at once, with no polling and no claiming statement.
 */
/** A data-modifying statement (INSERT, UPDATE or DELETE) and its parameters, `$1`… in its text. */
export interface SqlStatement {
  text: string;
  params: unknown[];
}

export interface AddToOutboxOptions {
  /**
   * Writes of the caller's that go to the database in the same statement as the outbox row (each
   * a data-modifying WITH, which PostgreSQL runs to completion whether or not anything reads it):
   * one round trip instead of one per write. Their results are not returned, and `$n` in their
   * text must only ever be parameters.
   */
  with?: readonly SqlStatement[];
}

export async function addToOutbox(manager: EntityManager, message: OutgoingMessage, options: AddToOutboxOptions = {}): Promise<boolean> {
  const row = checkedRow(message);
  const target = handoffTarget(manager);
  // The handoff lease starts when the row is written (clock_timestamp()), not when its transaction
  // began (now()): a transaction longer than the lease would otherwise commit a row whose lease has
  // already run out, and a polling relay would publish it beside the handoff.
  const { prefix, params } = withPrefix(options);
  const n = params.length;
  params.push(row.exchange, row.routing_key, row.message_id, row.type, row.correlation_id, row.json, JSON.stringify(row.headers), target ? target.handoffLeaseSeconds : null);
  const rows: { id: string }[] = await hotQuery(
    manager,
    `${prefix}INSERT INTO outbox (exchange, routing_key, message_id, type, correlation_id, payload, headers, created_at, claimed_until)
     VALUES ($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}::jsonb, $${n + 7}::jsonb, now(), clock_timestamp() + make_interval(secs => $${n + 8}))
     ON CONFLICT (message_id) DO NOTHING
     RETURNING id`,
    params,
  );
  if (rows.length !== 1) return false;
  if (target) noteWritten(manager, target, handedRow(rows[0].id, row));
  return true;
}

/**
 * `addToOutbox` for several messages in one statement (one row each, in the order given): the
 * statement's text is the same for any number of messages. Returns the ids of the messages written
 * (as given); a message whose id is already in the outbox, or was given before in `messages`, is not
 * written again. `with` as for addToOutbox.
 */
export async function addAllToOutbox(manager: EntityManager, messages: readonly OutgoingMessage[], options: AddToOutboxOptions = {}): Promise<Set<string>> {
  const rows = messages.map(checkedRow);
  if (rows.length === 0 && !options.with?.length) return new Set();
  const target = handoffTarget(manager);
  const { prefix, params } = withPrefix(options);
  const n = params.length;
  const column = <K extends keyof CheckedRow>(key: K) => rows.map((r) => r[key]);
  params.push(
    column('exchange'),
    column('routing_key'),
    column('message_id'),
    column('type'),
    column('correlation_id'),
    column('json'),
    rows.map((r) => JSON.stringify(r.headers)),
    target ? target.handoffLeaseSeconds : null,
  );
  // WITH ORDINALITY and ORDER BY: the rows take their ids (and so their publishing order) in the order given
  const written: Array<{ id: string; message_id: string }> = await hotQuery(
    manager,
    `${prefix}INSERT INTO outbox (exchange, routing_key, message_id, type, correlation_id, payload, headers, created_at, claimed_until)
     SELECT m.exchange, m.routing_key, m.message_id, m.type, m.correlation_id, m.payload::jsonb, m.headers::jsonb, now(),
            clock_timestamp() + make_interval(secs => $${n + 8})
       FROM unnest($${n + 1}::text[], $${n + 2}::text[], $${n + 3}::uuid[], $${n + 4}::text[], $${n + 5}::text[], $${n + 6}::text[], $${n + 7}::text[])
              WITH ORDINALITY AS m(exchange, routing_key, message_id, type, correlation_id, payload, headers, i)
      ORDER BY m.i
     ON CONFLICT (message_id) DO NOTHING
     RETURNING id, message_id`,
    params,
  );
  // the database answers a uuid in lower case, whatever case it was given in
  const ids = new Map(written.map((w) => [w.message_id.toLowerCase(), String(w.id)]));
  const done = new Set<string>();
  for (const row of rows) {
    const id = ids.get(row.message_id.toLowerCase());
    // a message id given twice was written once, by its first: hand its row over once
    if (id === undefined) continue;
    ids.delete(row.message_id.toLowerCase());
    done.add(row.message_id);
    if (target) noteWritten(manager, target, handedRow(id, row));
  }
  return done;
}

type CheckedRow = Omit<OutboxRow, 'id' | 'payload' | 'attempts'> & { json: string };

/** The row `message` becomes, its fields checked (a bad one is a 400 naming it). */
function checkedRow(message: OutgoingMessage): CheckedRow {
  if (message === null || typeof message !== 'object') throw badRequest('message must be an object');
  return {
    exchange: requireText('message.exchange', message.exchange, 128),
    routing_key: requireText('message.routingKey', message.routingKey, 255, 0),
    message_id: requireUuid('message.messageId', message.messageId),
    correlation_id: optionalText('message.correlationId', message.correlationId, 128),
    type: optionalText('message.type', message.type, 128),
    headers: checkHeaders(message.headers),
    json: toJson(message.body),
  };
}

/** The row as handed to the relay: what the row holds, not the caller's object (which it may change after the call). */
const handedRow = (id: string | number, row: CheckedRow): OutboxRow => ({
  id: String(id),
  exchange: row.exchange,
  routing_key: row.routing_key,
  message_id: row.message_id,
  type: row.type,
  correlation_id: row.correlation_id,
  payload: JSON.parse(row.json),
  headers: row.headers,
  attempts: 0,
});

/** The `with` statements as WITHs before the outbox INSERT, their parameters first. */
function withPrefix(options: AddToOutboxOptions): { prefix: string; params: unknown[] } {
  const params: unknown[] = [];
  const ctes: string[] = [];
  for (const prior of options.with ?? []) {
    ctes.push(`w${ctes.length} AS (${renumbered(prior.text, params.length)})`);
    params.push(...prior.params);
  }
  return { prefix: ctes.length ? `WITH ${ctes.join(', ')} ` : '', params };
}

/** The message a claimed row stands for, as the bus publishes it. */
export function toOutgoingMessage(row: OutboxRow): OutgoingMessage {
  const message: OutgoingMessage = {
    exchange: row.exchange,
    routingKey: row.routing_key,
    body: row.payload,
    messageId: row.message_id,
    headers: row.headers ?? {},
  };
  if (row.correlation_id !== null) message.correlationId = row.correlation_id;
  if (row.type !== null) message.type = row.type;
  return message;
}

export async function outboxStats(db: DataSource | EntityManager): Promise<OutboxStats> {
  // rows set aside are never published either: one read of the unpublished rows counts both
  const [row] = (await db.query(
    `SELECT (count(*) FILTER (WHERE failed_at IS NULL))::int AS pending,
            (count(*) FILTER (WHERE failed_at IS NULL AND attempts > 0))::int AS failing,
            (count(*) FILTER (WHERE failed_at IS NOT NULL))::int AS set_aside,
            (extract(epoch FROM now() - min(created_at) FILTER (WHERE failed_at IS NULL)) * 1000)::float8 AS oldest
       FROM outbox
      WHERE published_at IS NULL`,
  )) as { pending: number; failing: number; set_aside: number; oldest: number | null }[];
  return {
    pending: row.pending,
    failing: row.failing,
    oldestPendingAgeMs: row.oldest === null ? null : Math.max(0, Math.round(row.oldest)),
    setAside: row.set_aside,
  };
}

/**
 * Deletes rows published more than `retentionMs` ago, and rows set aside more than
 * SET_ASIDE_RETENTION_MS ago, `batchSize` rows per statement so no statement holds many locks, and
 * returns how many it deleted.
 */
export async function purgePublishedOutbox(
  db: DataSource | EntityManager,
  retentionMs: number,
  batchSize = 1000,
): Promise<number> {
  if (!Number.isFinite(retentionMs) || retentionMs < 0) {
    throw new Error(`retentionMs must be a number of at least 0, got ${retentionMs}`);
  }
  let total = 0;
  for (;;) {
    const deleted = changedCount(
      await db.query(
        `DELETE FROM outbox
          WHERE id IN (SELECT id FROM outbox
                        WHERE published_at < now() - make_interval(secs => $1)
                        ORDER BY id LIMIT $2)`,
        [retentionMs / 1000, batchSize],
      ),
    );
    total += deleted;
    if (deleted < batchSize) break;
  }
  for (;;) {
    const deleted = changedCount(
      await db.query(
        `DELETE FROM outbox
          WHERE id IN (SELECT id FROM outbox WHERE failed_at < now() - make_interval(secs => $1) ORDER BY id LIMIT $2)`,
        [SET_ASIDE_RETENTION_MS / 1000, batchSize],
      ),
    );
    total += deleted;
    if (deleted < batchSize) return total;
  }
}

const renumberedTexts = new Map<string, string>();

/** `text` with each parameter `$n` moved up by `offset` (cached: the texts are few and fixed). */
function renumbered(text: string, offset: number): string {
  if (offset === 0) return text;
  const key = `${offset}:${text}`;
  let out = renumberedTexts.get(key);
  if (out === undefined) {
    out = text.replace(/\$(\d+)/g, (_, d: string) => `$${Number(d) + offset}`);
    renumberedTexts.set(key, out);
  }
  return out;
}

function checkHeaders(headers: unknown): Record<string, string | number | boolean> {
  if (headers === undefined || headers === null) return {};
  if (typeof headers !== 'object' || Array.isArray(headers)) {
    throw badRequest('message.headers must be an object of strings, numbers and booleans');
  }
  for (const [key, value] of Object.entries(headers)) {
    if (!['string', 'number', 'boolean'].includes(typeof value)) {
      throw badRequest(`message.headers.${key} must be a string, number or boolean, got ${typeof value}`);
    }
  }
  return headers as Record<string, string | number | boolean>;
}

function toJson(body: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(body);
  } catch (e) {
    throw badRequest(`message.body cannot be stored as JSON: ${(e as Error).message}`);
  }
  if (json === undefined) throw badRequest('message.body cannot be stored as JSON: it is undefined');
  return json;
}
