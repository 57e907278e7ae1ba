/** The few settings the HTTP layer needs, derived from TrellisConfig by the module. */
export interface GatewayConfig {
  publicUrl: string | null;
  /** Senlin's max_nodes_per_cluster */
  maxNodesPerCluster: number;
  /** Senlin's max_clusters_per_project */
  maxClustersPerProject: number;
  /** Senlin's default_action_timeout, seconds */
  defaultActionTimeout: number;
}

export const GATEWAY_CONFIG = Symbol('GATEWAY_CONFIG');

export const DEFAULT_GATEWAY_CONFIG: Omit<GatewayConfig, 'publicUrl'> = {
  maxNodesPerCluster: 1000,
  maxClustersPerProject: 100,
  defaultActionTimeout: 3600,
};
