import { randomUUID } from 'node:crypto';
import { silentLogger } from '@trellis/common';
import { Queues, SCHEMA_VERSION } from '@trellis/contracts';
import type { IncomingMessage } from '@trellis/messaging';
import type { RunActionUseCase } from '../actions/run-action.usecase';
import type { ApplyWorkResultUseCase } from '../results/apply-work-result.usecase';
import { EngineHandlers } from './engine.handlers';

const actionRequested = (): IncomingMessage => {
  const body = {
    message_id: randomUUID(),
    schema_version: SCHEMA_VERSION,
    action_id: randomUUID(),
    correlation_id: 'req-1',
    sent_at: new Date().toISOString(),
    cluster_id: randomUUID(),
    action: 'CLUSTER_SCALE_OUT',
    project: 'project-a',
    cause: 'submitted',
  };
  return { queue: Queues.engineActions, body, raw: Buffer.from(JSON.stringify(body)), messageId: body.message_id, headers: {}, redelivered: false, deliveryCount: 0 };
};

/**
 * A message whose handling failed because PostgreSQL was away is held until the database answers
 * again, then retried: handed back at once, a restart of a few seconds spent its delivery limit in
 * milliseconds and dead-lettered it (the fault suite's `pg_ctl stop -m immediate`).
 */
describe('EngineHandlers while the database is away', () => {
  const handlersFailingWith = (error: Error) => {
    const events: string[] = [];
    const run = { execute: async () => Promise.reject(error) } as unknown as RunActionUseCase;
    const handlers = new EngineHandlers(run, {} as ApplyWorkResultUseCase, silentLogger, async () => {
      events.push('waited for the database');
    });
    return { events, handle: async () => events.push(`outcome ${(await handlers.onActionRequested(actionRequested())).kind}`) };
  };

  it('waits for the database before handing the message back', async () => {
    const { events, handle } = handlersFailingWith(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }));
    await handle();
    expect(events).toEqual(['waited for the database', 'outcome retry']);
  });

  it('retries any other failure without waiting', async () => {
    const { events, handle } = handlersFailingWith(new Error('something else went wrong'));
    await handle();
    expect(events).toEqual(['outcome retry']);
  });
});
