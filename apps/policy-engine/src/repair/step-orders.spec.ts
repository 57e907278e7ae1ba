import { randomUUID } from 'node:crypto';
import { WORK_ORDER_SCHEMA_VERSION, type WorkOrderMessage } from '@trellis/contracts';
import { ActionEntity, ActionStepEntity, inTransaction, type Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { emitStep, resendStep, type OrderBody } from './step-orders';

describe('a step of an action: its order kept in this release\'s form, sent in the form the workers up take', () => {
  let db: Database;
  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db?.close());

  const profile = { flavor: 'm1.small', image: 'cirros', user_data: '#!/bin/sh' };
  const body: OrderBody = {
    kind: 'create',
    create_groups: [],
    create_servers: [0, 1].map((i) => ({ node_id: randomUUID(), name: `node-${i}`, index: i, placement: { zone: 'az1' } })),
    delete_servers: [],
    delete_groups: [],
    profile,
  };
  const action = { id: randomUUID(), cluster_id: randomUUID(), project: 'p', user: 'u', action: 'CLUSTER_REPAIR' } as ActionEntity;
  const sent = async (messageId: string) =>
    ((await db.dataSource.query(`SELECT payload FROM outbox WHERE message_id = $1`, [messageId]))[0].payload as WorkOrderMessage);

  it('writes version 1 (the profile on each server) while an older worker is up, keeps version 2 with the step, and resends in the version asked then', async () => {
    const now = new Date();
    const step = await inTransaction(db.dataSource, (m) => emitStep(m, action, { kind: 'create', seq: 1 }, body, { correlationId: 'req-1', buildTimeoutSeconds: 60, now, version: 1 }));
    const kept = step.detail.order as unknown as WorkOrderMessage;
    expect(kept.schema_version).toBe(WORK_ORDER_SCHEMA_VERSION);
    expect(kept.profile).toEqual(profile);

    const first = await sent(kept.message_id);
    expect(first.schema_version).toBe(1);
    expect('profile' in first).toBe(false);
    expect(first.create_servers.map((c) => c.profile)).toEqual([profile, profile]);
    expect(first.action_id).toBe(step.id);

    // the older worker is gone by the time the step is sent again (a resumed action)
    const row = await db.dataSource.getRepository(ActionStepEntity).findOneByOrFail({ id: step.id });
    const before = new Set((await db.dataSource.query(`SELECT message_id FROM outbox`)).map((r: { message_id: string }) => r.message_id));
    await inTransaction(db.dataSource, (m) => resendStep(m, row, new Date(), 2));
    const [again] = (await db.dataSource.query(`SELECT payload FROM outbox ORDER BY id DESC LIMIT 1`)) as Array<{ payload: WorkOrderMessage }>;
    expect(before.has(again.payload.message_id)).toBe(false);
    expect(again.payload).toMatchObject({ schema_version: 2, action_id: step.id, profile });
    expect(again.payload.create_servers.every((c) => c.profile === undefined)).toBe(true);
  });

  it('writes this release\'s version when no version is asked for', async () => {
    const step = await inTransaction(db.dataSource, (m) => emitStep(m, action, { kind: 'create', seq: 2 }, body, { correlationId: 'req-2', buildTimeoutSeconds: 60, now: new Date() }));
    const order = await sent((step.detail.order as unknown as WorkOrderMessage).message_id);
    expect(order.schema_version).toBe(WORK_ORDER_SCHEMA_VERSION);
    expect(order.profile).toEqual(profile);
  });
});
