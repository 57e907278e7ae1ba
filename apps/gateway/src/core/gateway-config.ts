import type { TrellisConfig } from '@trellis/common';

/** The few settings the HTTP layer needs, derived from TrellisConfig by the module. */
export interface GatewayConfig {
  publicUrl: string | null;
  /** Senlin's max_nodes_per_cluster (TRELLIS_MAX_NODES_PER_CLUSTER) */
  maxNodesPerCluster: number;
  /** Senlin's max_clusters_per_project (TRELLIS_MAX_CLUSTERS_PER_PROJECT) */
  maxClustersPerProject: number;
  /** Senlin's default_action_timeout, seconds */
  defaultActionTimeout: number;
  /** unfinished actions one project may have (TRELLIS_MAX_ACTIONS_PER_PROJECT); 0: no limit */
  maxActionsPerProject: number;
  /** unfinished actions of every project together (TRELLIS_MAX_ACTIONS); 0: no limit */
  maxActions: number;
  /** a project's (or a webhook receiver's) sustained requests per second in this process (TRELLIS_REQUESTS_PER_SECOND); 0: no limit */
  requestsPerSecond: number;
  /** requests it may send at once before the rate applies (TRELLIS_REQUEST_BURST) */
  requestBurst: number;
  /** unfinished actions one project may have when asked for over RPC or a webhook (TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT); 0: no limit */
  maxRpcWebhookActionsPerProject: number;
  /** a project's sustained RPC requests per second in this process, apart from REST (TRELLIS_RPC_REQUESTS_PER_SECOND); 0: no limit */
  rpcRequestsPerSecond: number;
  /** RPC requests it may send at once before the RPC rate applies (TRELLIS_RPC_REQUEST_BURST) */
  rpcRequestBurst: number;
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

export const DEFAULT_GATEWAY_CONFIG: Omit<GatewayConfig, 'publicUrl' | keyof TrellisConfig['limits']> = {
  defaultActionTimeout: 3600,
};
