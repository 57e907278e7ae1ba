import { ClusterEntity, type NodeEntity } from '@trellis/persistence/entities';
import type { EntityManager } from 'typeorm';

/** A node action's timeout: its cluster's, or the deployment's default for a node of no cluster. */
export async function nodeActionTimeout(manager: EntityManager, node: NodeEntity, defaultTimeout: number): Promise<number> {
  if (!node.cluster_id) return defaultTimeout;
  const cluster = await manager.getRepository(ClusterEntity).findOneBy({ id: node.cluster_id });
  return cluster?.timeout ?? defaultTimeout;
}
