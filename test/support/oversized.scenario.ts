import type { Embedded } from '../../cli/embedded';
import { sample, scrape } from './operating.scenario';
import { createProfileAndCluster, nodesOf, olderWorkerUp, scaleOut } from './scale-out.scenario';
import { demoApi } from './trellis';

/**
 * A message larger than the broker takes can never be published. The case that makes one: a
 * rolling upgrade with a nova-worker of the release before still up, so work orders are written in
 * schema_version 1, with the profile on every server: 40 servers of a profile with 3 KB of user_data
 * are 137 KB. The relay must set that row aside (not retry it for ever, holding back what the engine
 * writes after it), and the action must end at once, FAILED with the reason, not at its timeout.
 * Needs a Trellis started with TRELLIS_MAX_MESSAGE_BYTES=65536 and TRELLIS_RESUME_INTERVAL_SECONDS
 * of an hour (the deadline supervisor's own look): within the 20 s waited only the relay's word to
 * it (this process's relay set the order aside) can end the action.
 */
export async function oversizedWorkOrder(trellis: Embedded): Promise<void> {
  const api = await demoApi(trellis);
  const userData = '#!/bin/sh\n' + 'echo trellis\n'.repeat(230); // 3 KB
  const { clusterId } = await createProfileAndCluster(api, 'large', 0, {}, { user_data: userData });
  const ds = trellis.infra.database.dataSource;
  // a nova-worker of the release before, up: orders are written in schema_version 1
  const olderGone = await olderWorkerUp(trellis, '00000000-0000-4000-8000-0000000000bb');
  expect(trellis.engine.workOrderVersions.current).toBe(1);

  // its timeout is an hour, the supervisor's look too
  const failed = await scaleOut(api, 'large', 40, 20_000);
  expect(failed.status).toBe('FAILED');
  expect(failed.status_reason).toMatch(
    /^CLUSTER_SCALE_OUT failed: its work order could not be sent to a nova-worker: message [0-9a-f-]{36} is 1\d\d,\d{3} bytes \(1\d\d\.\d KiB\), larger than the 65,536 bytes \(64 KiB\) the message broker takes \(TRELLIS_MAX_MESSAGE_BYTES\)\. It was written in schema_version 1 for a nova-worker of an older release/,
  );
  const nodes = await nodesOf(api, clusterId);
  expect(nodes).toHaveLength(40);
  expect(nodes.every((n) => n.status === 'ERROR' && n.status_reason === failed.status_reason)).toBe(true);
  expect(trellis.simulator!.state.servers()).toHaveLength(0);

  // the row is set aside (kept for a look), nothing is pending, the gauge says so
  const rows: Array<{ attempts: number; failed: boolean; published: boolean }> = await ds.query(
    `SELECT attempts, failed_at IS NOT NULL AS failed, published_at IS NOT NULL AS published FROM outbox WHERE payload->>'action_id' = $1 AND routing_key = 'work.order'`,
    [failed.id],
  );
  expect(rows).toEqual([{ attempts: 1, failed: true, published: false }]);
  // (the action's end, written after the order, is published too: marked within a moment)
  let metrics = await scrape(trellis.url);
  for (let i = 0; i < 100 && sample(metrics, 'trellis_outbox_pending_messages') > 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    metrics = await scrape(trellis.url);
  }
  expect(sample(metrics, 'trellis_outbox_pending_messages')).toBe(0);
  expect(sample(metrics, 'trellis_outbox_set_aside_messages')).toBe(1);

  // the older worker gone, orders are version 2 (the profile once: 12 KB) and go through; so does
  // everything the engine wrote after the set-aside row
  await olderGone();
  const next = await scaleOut(api, 'large', 40, 60_000);
  expect(next).toMatchObject({ status: 'SUCCEEDED' });
  const active = (await nodesOf(api, clusterId)).filter((n) => n.status === 'ACTIVE');
  expect(active).toHaveLength(40);
  expect(trellis.simulator!.state.servers().every((s) => s.userData === Buffer.from(userData).toString('base64'))).toBe(true);
}
