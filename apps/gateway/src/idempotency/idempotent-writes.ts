import { Injectable } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { DomainError, badRequest, conflict, type AuthContext } from '@trellis/common';
import type { EntityManager } from 'typeorm';
import { toWireJson } from '../core/sorted-json';
import { UnitOfWork } from '../infra/unit-of-work';
import { hotQuery } from '../infra/persistence.adapter';

/** How long a key answers for its first request; later it may be used again (Stripe: 24 h). */
export const IDEMPOTENCY_KEY_TTL_SECONDS = 24 * 3600;

/** Stripe's limit: up to 255 characters; printable ASCII keeps them loggable and header-safe. */
const KEY_FORMAT = /^[\x20-\x7e]{1,255}$/;

/** What a write answered: enough to answer a retry the same way. */
export interface WriteAnswer {
  status: number;
  /** the JSON document of the response */
  body: unknown;
  /** the Location header (the action to poll), null when the answer has none */
  location: string | null;
  /** the action the write started, if any */
  actionId?: string | null;
}

export interface IdempotentRequest {
  /** `http`: the Idempotency-Key header; `rpc`: the AMQP message id */
  transport: 'http' | 'rpc';
  key: string;
  caller: AuthContext;
  /** what the request asks (operation, parameters, body): the key answers this request only */
  request: unknown;
}

interface KeyId {
  project: string;
  user_id: string;
  transport: string;
  key: string;
}

interface StoredKey {
  fingerprint: string;
  response: WriteAnswer | null;
}

/**
 * Writes that answer once per key: the first request with a key runs, and its answer is stored
 * under the key in the same transaction as what it wrote (its action and outbox row); a retry
 * with the key and the same request gets that answer back and runs nothing. A retry sent while
 * the first is still running waits for it (the key's row is locked until the first commits). A
 * request that failed stored nothing, so its retry runs again. The same key with another request
 * is refused with 422, as the IETF Idempotency-Key draft says and Stripe does (it compares the
 * parameters too).
 */
@Injectable()
export class IdempotentWrites {
  constructor(private readonly uow: UnitOfWork) {}

  async answer(r: IdempotentRequest, write: () => Promise<WriteAnswer>): Promise<{ answer: WriteAnswer; replayed: boolean }> {
    const id: KeyId = { project: r.caller.projectId ?? '', user_id: r.caller.userId, transport: r.transport, key: r.key };
    const fingerprint = fingerprintOf(r.request);
    // one transaction whether the key is new or not: no read of the key before it (a commit of
    // its own on every first request, which is nearly every request)
    return this.uow.runAsOne(async (tx) => {
      if (!(await claim(tx.manager, id, fingerprint))) {
        // the key's first request committed, before this one or while this one waited for its row
        const row = await stored(tx.manager, id);
        if (!row) throw conflict(`A request with the Idempotency-Key '${r.key}' was being handled; try again.`, 'IdempotencyKeyInUse');
        return { answer: replay(row, fingerprint, r.key), replayed: true };
      }
      const answer = await write();
      const kept: WriteAnswer = { status: answer.status, body: toWireJson(answer.body), location: answer.location, actionId: answer.actionId ?? null };
      await hotQuery(
        tx.manager,
        `UPDATE idempotency_keys SET response = $5, action_id = $6
          WHERE project = $1 AND user_id = $2 AND transport = $3 AND key = $4`,
        [id.project, id.user_id, id.transport, id.key, JSON.stringify(kept), kept.actionId],
      );
      return { answer, replayed: false };
    });
  }

  /** Deletes expired keys; returns how many. */
  async prune(): Promise<number> {
    const [, count]: [unknown, number] = await this.uow.manager.query('DELETE FROM idempotency_keys WHERE expires_at <= clock_timestamp()');
    return count;
  }
}

/** Whether a header or message id can be a key. */
export const isIdempotencyKey = (raw: unknown): raw is string => typeof raw === 'string' && KEY_FORMAT.test(raw) && raw.trim() !== '';

/** A header as a key, or a 400 saying what a key must be. */
export function checkIdempotencyKey(raw: unknown): string {
  if (!isIdempotencyKey(raw)) {
    throw badRequest('Invalid Idempotency-Key: it must be 1 to 255 printable ASCII characters.', 'HTTPBadRequest');
  }
  return raw;
}

function fingerprintOf(request: unknown): string {
  return createHash('sha256').update(JSON.stringify(toWireJson(request))).digest('hex');
}

/** The key's row, unless it expired. */
async function stored(manager: EntityManager, id: KeyId): Promise<StoredKey | null> {
  const rows: StoredKey[] = await manager.query(
    `SELECT fingerprint, response FROM idempotency_keys
      WHERE project = $1 AND user_id = $2 AND transport = $3 AND key = $4 AND expires_at > clock_timestamp()`,
    [id.project, id.user_id, id.transport, id.key],
  );
  return rows[0] ?? null;
}

/**
 * Takes the key for this transaction: a new row, or an expired one made new. False when a live
 * row holds it; when that row's transaction is still open this waits for it to end.
 */
async function claim(manager: EntityManager, id: KeyId, fingerprint: string): Promise<boolean> {
  const rows: unknown[] = await hotQuery(
    manager,
    `INSERT INTO idempotency_keys (project, user_id, transport, key, fingerprint, action_id, response, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, NULL, NULL, clock_timestamp(), clock_timestamp() + make_interval(secs => $6))
     ON CONFLICT (project, user_id, transport, key) DO UPDATE
       SET fingerprint = EXCLUDED.fingerprint, action_id = NULL, response = NULL,
           created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
       WHERE idempotency_keys.expires_at <= clock_timestamp()
     RETURNING key`,
    [id.project, id.user_id, id.transport, id.key, fingerprint, IDEMPOTENCY_KEY_TTL_SECONDS],
  );
  return rows.length === 1;
}

function replay(row: StoredKey, fingerprint: string, key: string): WriteAnswer {
  if (row.fingerprint !== fingerprint) {
    throw new DomainError(
      'UNPROCESSABLE',
      `The Idempotency-Key '${key}' was used for another request; a new request needs a new key.`,
      'IdempotencyKeyMismatch',
    );
  }
  // written in the same transaction as the claim, so a committed row always has its answer
  if (!row.response) throw new Error(`idempotency key '${key}' has no stored answer`);
  return row.response;
}
