import { Injectable, SetMetadata, applyDecorators, type CallHandler, type ExecutionContext, type NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiHeader } from '@nestjs/swagger';
import { from, lastValueFrom, map, type Observable } from 'rxjs';
import type { HttpRequest, HttpResponse } from '../core/http.types';
import { IdempotentWrites, checkIdempotencyKey } from './idempotent-writes';

const IDEMPOTENT = 'trellis:idempotent';

/** The header a retry of a stored answer carries (Stripe's name). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';

/**
 * Marks a write that stores an action: with an `Idempotency-Key` header its answer is kept under
 * the key, and a retry with the key gets that answer instead of a second action.
 */
export const Idempotent = (): MethodDecorator =>
  applyDecorators(
    SetMetadata(IDEMPOTENT, true),
    ApiHeader({
      name: 'Idempotency-Key',
      required: false,
      description:
        'Up to 255 printable characters, unique per request (a UUID). A retry with the same key, token user and project, within 24 h, ' +
        'gets the first answer (status, body, Location) with `Idempotent-Replayed: true` and starts nothing; the same key with another request is a 422.',
    }),
  );

/** Runs @Idempotent() routes that carry an Idempotency-Key through IdempotentWrites. */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly reflector: Reflector,
    private readonly writes: IdempotentWrites,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<HttpRequest>();
    const raw = req.headers['idempotency-key'];
    if (raw === undefined || !this.reflector.get<boolean>(IDEMPOTENT, context.getHandler())) return next.handle();
    const key = checkIdempotencyKey(raw);
    const caller = req.trellis?.caller;
    if (!caller) throw new Error('an @Idempotent() route must be authenticated');
    const res = http.getResponse<HttpResponse>();
    const request = { method: req.method, path: req.path, query: req.query, body: req.body ?? null };
    const run = this.writes.answer({ transport: 'http', key, caller, request }, async () => {
      const body = await lastValueFrom(next.handle(), { defaultValue: undefined });
      const header = res.getHeader('Location');
      const location = typeof header === 'string' ? header : null;
      // a 202's Location is the action it started (core/accepted.ts)
      const actionId = location?.match(/\/v1\/actions\/([^/]+)$/)?.[1] ?? null;
      return { status: res.statusCode, body, location, actionId };
    });
    return from(run).pipe(
      map(({ answer, replayed }) => {
        if (!replayed) return answer.body;
        res.status(answer.status).setHeader(REPLAYED_HEADER, 'true');
        if (answer.location !== null) res.setHeader('Location', answer.location);
        res.type('application/json');
        return answer.body;
      }),
    );
  }
}
