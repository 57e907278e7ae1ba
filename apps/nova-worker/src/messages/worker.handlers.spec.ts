import { silentLogger } from '@trellis/common';
import { Queues } from '@trellis/contracts';
import type { ApplyWorkOrderUseCase } from '../orders/apply-work-order.usecase';
import { workOrder } from '../testing/worker-fixtures';
import { WorkerHandlers } from './worker.handlers';

/** As the engine's (engine.handlers.spec.ts): a work order that met a database outage is held until the database answers. */
describe('WorkerHandlers while the database is away', () => {
  it('waits for the database before handing the order back', async () => {
    const events: string[] = [];
    const lost = Object.assign(new Error('the database system is starting up'), { code: '57P03' });
    const apply = { execute: async () => Promise.reject(lost) } as unknown as ApplyWorkOrderUseCase;
    const handlers = new WorkerHandlers(apply, silentLogger, () => undefined, null, async () => void events.push('waited for the database'));
    const body = workOrder('8f1f0a3e-4a4e-4c55-9a55-0d6d3c8f8a11');
    const outcome = await handlers.onWorkOrder({ queue: Queues.workerOrders, body, raw: Buffer.from(JSON.stringify(body)), headers: {}, redelivered: false, deliveryCount: 0 });
    events.push(`outcome ${outcome.kind}`);
    expect(events).toEqual(['waited for the database', 'outcome retry']);
  });
});
