import { randomUUID } from 'node:crypto';
import { Exchanges, RoutingKeys, SCHEMA_VERSION, type WorkOrderMessage, type WorkResultMessage } from '@trellis/contracts';
import { errorMessage, type Logger } from '@trellis/common';
import { TRELLIS_NODE_KEY } from '@trellis/nova';
import { addToOutbox, inTransaction } from '@trellis/persistence';
import type { DataSource } from 'typeorm';
import { ClusterListings, type SurveyedServer } from './cluster-listings';
import type { FactsRefresher } from './facts-refresher';
import { isPermanent, type NovaAccess } from '../identity/nova-access';

/**
 * A work order that changes nothing (kind `cloud`, every list empty) asks the worker to look at the
 * cloud again before the engine judges drift (issue 6): fresh facts, and the host and zone each of
 * the cluster's servers is on now (an evacuation or a cold migration moves a server without Trellis
 * knowing). Nothing is kept in `work_orders`: looking twice is harmless, so a redelivery just looks again.
 *
 * What is read again, as the project that asked: its server groups, always; the cluster's servers,
 * all of them for a check or a repair, otherwise what changed since the last survey
 * (ClusterListings). The cloud-wide facts (zones, hypervisors, the host-to-zone map): again for a
 * check or a repair; before a scaling action only when the last read is older than
 * `cloudWideMaxAgeMs` (the refresh interval), since those facts are the same for every project and a
 * round of the refresher has usually just read them. Other projects' server groups are left to the
 * refresher's rounds.
 */
export function isSurveyOrder(order: WorkOrderMessage): boolean {
  return (
    order.kind === 'cloud' &&
    order.create_groups.length + order.create_servers.length + order.delete_servers.length + order.delete_groups.length === 0
  );
}

/** A cluster's ACTIVE node as the survey compares it with its server. */
interface SurveyedNode {
  id: string;
  physical_id: string | null;
  placement: Record<string, unknown> | null;
}
const ACTIVE_NODES_SQL = `SELECT id, physical_id, data -> 'placement' AS placement FROM nodes WHERE cluster_id = $1 AND status = 'ACTIVE'`;
const SET_PLACEMENT_SQL = `UPDATE nodes SET data = jsonb_set(data, '{placement}', $2::jsonb) WHERE id = $1`;

/** actions that judge drift for the operator (check, repair): every fact read after they asked */
const JUDGING = new Set(['CLUSTER_CHECK', 'CLUSTER_REPAIR']);

export class SurveyClusterUseCase {
  constructor(
    private readonly dataSource: DataSource,
    private readonly access: NovaAccess,
    private readonly facts: FactsRefresher,
    private readonly logger: Logger,
    /** how old the cloud-wide facts may be for a scaling action's survey (the refresh interval) */
    private readonly cloudWideMaxAgeMs: number,
    /** the cluster's servers between surveys (a whole list for a check or repair, otherwise what changed) */
    private readonly listings = new ClusterListings(),
  ) {}

  async execute(order: WorkOrderMessage): Promise<{ moved: number }> {
    await this.facts.refreshCloudWide(JUDGING.has(order.action) ? 0 : this.cloudWideMaxAgeMs);
    // the cluster's servers and its project's server groups, read as the project that asked
    const owner = { project: order.project, user: order.user };
    let servers: SurveyedServer[] = [];
    let whole = true;
    let refused: string | null = null;
    try {
      const nova = await this.access.asOwner(owner);
      await this.facts.refreshProject(owner, nova);
      if (order.cluster_id) ({ servers, whole } = await this.listings.servers(nova, order.cluster_id, JUDGING.has(order.action)));
    } catch (e) {
      if (!isPermanent(e)) throw e;
      refused = errorMessage(e);
    }
    const now = new Date();
    let moved = 0;
    await inTransaction(this.dataSource, async (m) => {
      // only what is compared: at 10,000 nodes whole entities took the worker about 250 ms a survey
      const nodes: SurveyedNode[] = order.cluster_id ? await m.query(ACTIVE_NODES_SQL, [order.cluster_id]) : [];
      // one pass over the servers; a node's placement is copied only when it moved (10,000 nodes a survey)
      const byServer = new Map<string, SurveyedServer>();
      const byNode = new Map<string | undefined, SurveyedServer>();
      for (const s of servers) {
        if (s.status === 'DELETED') continue;
        byServer.set(s.id, s);
        byNode.set(s.metadata[TRELLIS_NODE_KEY], s);
      }
      for (const node of nodes) {
        const server = (node.physical_id ? byServer.get(node.physical_id) : undefined) ?? byNode.get(node.id);
        if (!server) continue;
        const recorded = node.placement ?? {};
        const host = this.facts.hostOf(order.project, server);
        const zone = server.availabilityZone ?? recorded.zone ?? null;
        if (recorded.host === host && recorded.zone === zone) continue;
        const placement: Record<string, unknown> = { ...recorded, host };
        if (zone) placement.zone = zone;
        // the placement alone: whatever else the node's data holds is left as it is
        await m.query(SET_PLACEMENT_SQL, [node.id, JSON.stringify(placement)]);
        moved++;
      }
      const messageId = randomUUID();
      const result: WorkResultMessage = {
        message_id: messageId,
        schema_version: SCHEMA_VERSION,
        action_id: order.action_id,
        correlation_id: order.correlation_id,
        sent_at: now.toISOString(),
        cluster_id: order.cluster_id,
        outcome: refused ? 'FAILED' : 'SUCCEEDED',
        reason: refused ?? `Looked at the cloud again: facts refreshed, ${moved} node(s) found on another host or zone.`,
        nodes: [],
        groups: {},
      };
      await addToOutbox(m, {
        exchange: Exchanges.results,
        routingKey: RoutingKeys.workResult,
        type: RoutingKeys.workResult,
        messageId,
        correlationId: order.correlation_id,
        body: result,
      });
    });
    this.logger.info('cloud surveyed', { action_id: order.action_id, cluster_id: order.cluster_id, servers: servers.length, listed: whole ? 'whole' : 'changes', moved });
    return { moved };
  }
}

