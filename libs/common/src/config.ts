import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';

/**
 * The one place that reads process.env. Every value is validated into a typed object at start-up;
 * a missing or bad value stops the process with a message naming the variable.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`configuration error: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface OpenStackSettings {
  /** OS_CLOUD: an entry of clouds.yaml (./clouds.yaml, ~/.config/openstack/clouds.yaml, /etc/openstack/clouds.yaml) */
  cloud: string | null;
  /** OS_CLIENT_CONFIG_FILE: an explicit clouds.yaml path */
  cloudsFile: string | null;
  authUrl: string | null;
  authType: string | null;
  username: string | null;
  userId: string | null;
  password: string | null;
  userDomainName: string | null;
  userDomainId: string | null;
  projectName: string | null;
  projectId: string | null;
  projectDomainName: string | null;
  projectDomainId: string | null;
  regionName: string | null;
  interface: string;
  applicationCredentialId: string | null;
  applicationCredentialName: string | null;
  applicationCredentialSecret: string | null;
  /** TRELLIS_COMPUTE_ENDPOINT: skip the catalog and use this compute URL */
  computeEndpoint: string | null;
  /** OS_COMPUTE_API_VERSION: pin a microversion instead of negotiating */
  computeApiVersion: string | null;
}

export interface TrellisConfig {
  instanceId: string;
  logLevel: LogLevel;
  /**
   * `shutdownDrainSeconds` (TRELLIS_SHUTDOWN_DRAIN_SECONDS, default 0): how long a gateway told to
   * stop keeps serving with /readyz answering 503 "shutting down" before it closes.
   */
  http: { host: string; port: number; publicUrl: string | null; shutdownDrainSeconds: number };
  /**
   * /healthz, /readyz and /metrics (README "Operating Trellis"). `port`: TRELLIS_OPS_PORT, null when
   * unset: the gateway then serves them on its API port, the policy-engine on 8791, the nova-worker
   * on 8792. `metrics`: TRELLIS_METRICS, false serves no /metrics anywhere.
   */
  ops: { host: string; port: number | null; metrics: boolean };
  database: {
    url: string | null;
    dataDir: string;
    poolSize: number;
    logging: boolean;
    /** named prepared statements on the hot paths (real PostgreSQL only); default true */
    preparedStatements?: boolean;
    /** BEGIN sent without waiting, the first statement behind it (pg pipeline mode; real PostgreSQL only); default true */
    pipeline?: boolean;
    /**
     * TRELLIS_MIGRATE_ON_START (real PostgreSQL only; default true): a service applies pending
     * migrations when it starts. False: it applies none and refuses to start while any is pending
     * (`trellis migrate` applies them, e.g. as a deployment's job before the rollout).
     */
    migrateOnStart?: boolean;
  };
  /**
   * `maxMessageBytes` (TRELLIS_MAX_MESSAGE_BYTES, default 16 MiB: RabbitMQ 4's `max_message_size`;
   * at most the broker's): a message whose body is larger is never sent. The outbox relay sets its
   * row aside instead of retrying it (docs/RELIABILITY.md §3), and an action whose work order it
   * was fails with the reason.
   */
  amqp: { url: string | null; prefetch: number; deliveryLimit: number; maxMessageBytes: number };
  /** the real cloud; when authUrl and cloud are both null the built-in simulator is used */
  openstack: OpenStackSettings;
  simulator: {
    host: string;
    port: number;
    /** the base URL the simulator's catalog advertises (when clients reach it by another name) */
    publicUrl: string | null;
    buildDelayMs: number;
    topologyFile: string | null;
    /** where the stand-alone simulator keeps its state (the embedded default: nova-simulator.json in its data directory) */
    stateFile: string | null;
    demoPassword: string;
    adminPassword: string;
    /** the simulator's `trellis` service user (project `service`), the trustee of trusts */
    servicePassword: string;
  };
  engine: { leaseSeconds: number; resumeIntervalSeconds: number; plugins: string[]; driftIntervalSeconds: number };
  worker: { pollIntervalMs: number; buildTimeoutSeconds: number; factsRefreshSeconds: number; concurrency: number };
  /** what the policy-engine forgets, and when (README "Retention") */
  retention: {
    /** TRELLIS_RETENTION_INTERVAL_SECONDS: how often the engine prunes; 0 leaves it to `trellis purge` */
    intervalSeconds: number;
    /** rows per delete transaction */
    batchSize: number;
    /** days each kind of row is kept; null keeps it forever (0 in the variable) */
    days: { processed_messages: number | null; events: number | null; actions: number | null; decisions: number | null; services: number | null };
  };
  /** what the gateway lets one project, and every project together, ask for (docs/SECURITY.md, Limits); 0 = no limit */
  limits: {
    /** TRELLIS_MAX_ACTIONS_PER_PROJECT: unfinished actions (READY, RUNNING, WAITING...) one project may have */
    maxActionsPerProject: number;
    /** TRELLIS_MAX_ACTIONS: unfinished actions of every project together */
    maxActions: number;
    /** TRELLIS_REQUESTS_PER_SECOND: a project's sustained request rate, per gateway process */
    requestsPerSecond: number;
    /** TRELLIS_REQUEST_BURST: requests a project may send at once before the rate applies */
    requestBurst: number;
    /**
     * TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT: unfinished actions a project may have when the
     * request comes over RPC or a webhook trigger (services and alarms, not people)
     */
    maxRpcWebhookActionsPerProject: number;
    /** TRELLIS_RPC_REQUESTS_PER_SECOND: a project's sustained RPC request rate, per gateway process, apart from its REST rate */
    rpcRequestsPerSecond: number;
    /** TRELLIS_RPC_REQUEST_BURST: RPC requests a project may send at once before the RPC rate applies */
    rpcRequestBurst: number;
    /**
     * TRELLIS_MAX_NODES_PER_CLUSTER: Senlin's `max_nodes_per_cluster` (default 1000), the most nodes a
     * cluster may have: the gateway's bounds on sizes and counts, and the engine's decisions (a
     * cluster's max_size -1 means this many), which record it in their input when it is not 1000
     */
    maxNodesPerCluster: number;
    /** TRELLIS_MAX_CLUSTERS_PER_PROJECT: Senlin's `max_clusters_per_project` (default 100) */
    maxClustersPerProject: number;
  };
  /** who may do what through the API (docs/SECURITY.md) */
  rbac: {
    /** TRELLIS_ADMIN_PROJECT: the project (name or id) whose `admin` role makes a cloud admin */
    adminProject: string;
    /** TRELLIS_POLICY_FILE: YAML overrides of the default rules, null for the defaults */
    policyFile: string | null;
  };
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function int(env: Env, name: string, dflt: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

/** a decimal number, e.g. a rate of 0.5 per second */
function decimal(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (!/^\d+(\.\d+)?$/.test(raw)) throw new ConfigError(name, `must be a number, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new ConfigError(name, `must be between ${min} and ${max}, got ${n}`);
  return n;
}

function limits(env: Env): TrellisConfig['limits'] {
  const requestsPerSecond = decimal(env, 'TRELLIS_REQUESTS_PER_SECOND', 20, 0, 1_000_000);
  const requestBurst = int(env, 'TRELLIS_REQUEST_BURST', 100, 0, 1_000_000);
  if (requestsPerSecond > 0 && requestBurst < 1) {
    throw new ConfigError('TRELLIS_REQUEST_BURST', `must be at least 1 while TRELLIS_REQUESTS_PER_SECOND is set (${requestsPerSecond})`);
  }
  const rpcRequestsPerSecond = decimal(env, 'TRELLIS_RPC_REQUESTS_PER_SECOND', 100, 0, 1_000_000);
  const rpcRequestBurst = int(env, 'TRELLIS_RPC_REQUEST_BURST', 1000, 0, 1_000_000);
  if (rpcRequestsPerSecond > 0 && rpcRequestBurst < 1) {
    throw new ConfigError('TRELLIS_RPC_REQUEST_BURST', `must be at least 1 while TRELLIS_RPC_REQUESTS_PER_SECOND is set (${rpcRequestsPerSecond})`);
  }
  // People (REST) and machines (RPC, webhook triggers) have limits of their own: an alarm storm
  // must not be refused by a budget sized for people (docs/SECURITY.md, Limits).
  return {
    maxActionsPerProject: int(env, 'TRELLIS_MAX_ACTIONS_PER_PROJECT', 50, 0, 1_000_000),
    maxActions: int(env, 'TRELLIS_MAX_ACTIONS', 500, 0, 1_000_000),
    requestsPerSecond,
    requestBurst,
    maxRpcWebhookActionsPerProject: int(env, 'TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT', 200, 0, 1_000_000),
    rpcRequestsPerSecond,
    rpcRequestBurst,
    // at most 10,000: the largest cluster run through the whole pipeline (BENCHMARKS.md, scale-out);
    // larger ones would pass PostgreSQL's 65,535 parameters in statements that list a plan's nodes
    maxNodesPerCluster: int(env, 'TRELLIS_MAX_NODES_PER_CLUSTER', 1000, 1, 10_000),
    maxClustersPerProject: int(env, 'TRELLIS_MAX_CLUSTERS_PER_PROJECT', 100, 1, 1_000_000),
  };
}

/** a retention in days; 0 means keep forever (null) */
function days(env: Env, name: string, dflt: number): number | null {
  const n = int(env, name, dflt, 0, 36_500);
  return n === 0 ? null : n;
}

function bool(env: Env, name: string, dflt: boolean): boolean {
  const raw = str(env, name);
  if (raw === null) return dflt;
  const v = raw.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `must be true or false, got '${raw}'`);
}

function url(env: Env, name: string, schemes: string[]): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(name, `is not a valid URL`);
  }
  if (!schemes.includes(parsed.protocol.replace(/:$/, ''))) {
    throw new ConfigError(name, `must use ${schemes.join(' or ')}, got '${parsed.protocol}'`);
  }
  return raw;
}

/** One URL, or several separated by commas (a cluster's nodes); each is checked, the raw value kept. */
function urlList(env: Env, name: string, schemes: string[]): string | null {
  const raw = str(env, name);
  if (raw === null) return null;
  const parts = raw.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '')) throw new ConfigError(name, 'has an empty entry in its comma-separated list');
  parts.forEach((p, i) => {
    const label = parts.length > 1 ? `${name} (entry ${i + 1})` : name;
    url({ [label]: p }, label, schemes);
  });
  return raw;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], dflt: T): T {
  const raw = str(env, name);
  if (raw === null) return dflt;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got '${raw}'`);
  }
  return raw as T;
}

export function loadConfig(env: Env = process.env): TrellisConfig {
  const instanceId = str(env, 'TRELLIS_INSTANCE_ID') ?? `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  return {
    instanceId,
    logLevel: oneOf(env, 'LOG_LEVEL', ['debug', 'info', 'warn', 'error'] as const, 'info'),
    http: {
      host: str(env, 'TRELLIS_HOST') ?? '127.0.0.1',
      port: int(env, 'TRELLIS_PORT', 8777, 0, 65535),
      publicUrl: url(env, 'TRELLIS_PUBLIC_URL', ['http', 'https']),
      shutdownDrainSeconds: int(env, 'TRELLIS_SHUTDOWN_DRAIN_SECONDS', 0, 0, 300),
    },
    ops: {
      host: str(env, 'TRELLIS_OPS_HOST') ?? '127.0.0.1',
      port: str(env, 'TRELLIS_OPS_PORT') === null ? null : int(env, 'TRELLIS_OPS_PORT', 0, 0, 65535),
      metrics: bool(env, 'TRELLIS_METRICS', true),
    },
    database: {
      url: url(env, 'DATABASE_URL', ['postgres', 'postgresql']),
      dataDir: str(env, 'TRELLIS_DATA_DIR') ?? './data',
      poolSize: int(env, 'TRELLIS_DB_POOL_SIZE', 10, 1, 200),
      logging: bool(env, 'TRELLIS_DB_LOGGING', false),
      preparedStatements: bool(env, 'TRELLIS_DB_PREPARED_STATEMENTS', true),
      pipeline: bool(env, 'TRELLIS_DB_PIPELINE', true),
      migrateOnStart: bool(env, 'TRELLIS_MIGRATE_ON_START', true),
    },
    amqp: {
      url: urlList(env, 'AMQP_URL', ['amqp', 'amqps']),
      prefetch: int(env, 'TRELLIS_PREFETCH', 16, 1, 10000),
      deliveryLimit: int(env, 'TRELLIS_DELIVERY_LIMIT', 5, 1, 1000),
      maxMessageBytes: int(env, 'TRELLIS_MAX_MESSAGE_BYTES', 16 * 1024 * 1024, 1024, 512 * 1024 * 1024),
    },
    openstack: {
      cloud: str(env, 'OS_CLOUD'),
      cloudsFile: str(env, 'OS_CLIENT_CONFIG_FILE'),
      authUrl: url(env, 'OS_AUTH_URL', ['http', 'https']),
      authType: str(env, 'OS_AUTH_TYPE'),
      username: str(env, 'OS_USERNAME'),
      userId: str(env, 'OS_USER_ID'),
      password: str(env, 'OS_PASSWORD'),
      userDomainName: str(env, 'OS_USER_DOMAIN_NAME'),
      userDomainId: str(env, 'OS_USER_DOMAIN_ID'),
      projectName: str(env, 'OS_PROJECT_NAME') ?? str(env, 'OS_TENANT_NAME'),
      projectId: str(env, 'OS_PROJECT_ID') ?? str(env, 'OS_TENANT_ID'),
      projectDomainName: str(env, 'OS_PROJECT_DOMAIN_NAME'),
      projectDomainId: str(env, 'OS_PROJECT_DOMAIN_ID'),
      regionName: str(env, 'OS_REGION_NAME'),
      interface: oneOf(env, 'OS_INTERFACE', ['public', 'internal', 'admin'] as const, 'public'),
      applicationCredentialId: str(env, 'OS_APPLICATION_CREDENTIAL_ID'),
      applicationCredentialName: str(env, 'OS_APPLICATION_CREDENTIAL_NAME'),
      applicationCredentialSecret: str(env, 'OS_APPLICATION_CREDENTIAL_SECRET'),
      computeEndpoint: url(env, 'TRELLIS_COMPUTE_ENDPOINT', ['http', 'https']),
      computeApiVersion: (() => {
        const v = str(env, 'OS_COMPUTE_API_VERSION');
        if (v !== null && !/^2\.\d+$/.test(v)) throw new ConfigError('OS_COMPUTE_API_VERSION', `must look like 2.X, got '${v}'`);
        return v;
      })(),
    },
    simulator: {
      host: str(env, 'SIMULATOR_HOST') ?? '127.0.0.1',
      port: int(env, 'SIMULATOR_PORT', 8780, 0, 65535),
      publicUrl: url(env, 'SIMULATOR_PUBLIC_URL', ['http', 'https']),
      buildDelayMs: int(env, 'SIMULATOR_BUILD_DELAY_MS', 500, 0, 3_600_000),
      topologyFile: str(env, 'SIMULATOR_TOPOLOGY_FILE'),
      stateFile: str(env, 'SIMULATOR_STATE_FILE'),
      demoPassword: str(env, 'TRELLIS_DEMO_PASSWORD') ?? 'demo',
      adminPassword: str(env, 'TRELLIS_ADMIN_PASSWORD') ?? 'admin',
      servicePassword: str(env, 'SIMULATOR_SERVICE_PASSWORD') ?? 'service-secret',
    },
    engine: {
      leaseSeconds: int(env, 'TRELLIS_LEASE_SECONDS', 30, 1, 86400),
      resumeIntervalSeconds: int(env, 'TRELLIS_RESUME_INTERVAL_SECONDS', 15, 1, 86400),
      // unset: the plugins bundled with Trellis (role anti-affinity); `none` or empty: no plugin
      plugins: (str(env, 'TRELLIS_POLICY_PLUGINS') ?? (env.TRELLIS_POLICY_PLUGINS === undefined ? 'bundled' : ''))
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      driftIntervalSeconds: int(env, 'TRELLIS_DRIFT_INTERVAL_SECONDS', 0, 0, 86400 * 7),
    },
    worker: {
      pollIntervalMs: int(env, 'TRELLIS_POLL_INTERVAL_MS', 500, 10, 600_000),
      buildTimeoutSeconds: int(env, 'TRELLIS_BUILD_TIMEOUT_SECONDS', 600, 1, 86400),
      factsRefreshSeconds: int(env, 'TRELLIS_FACTS_REFRESH_SECONDS', 15, 1, 86400),
      concurrency: int(env, 'TRELLIS_WORKER_CONCURRENCY', 8, 1, 256),
    },
    retention: {
      intervalSeconds: int(env, 'TRELLIS_RETENTION_INTERVAL_SECONDS', 3600, 0, 86400 * 7),
      batchSize: int(env, 'TRELLIS_RETENTION_BATCH_SIZE', 500, 1, 100_000),
      days: {
        processed_messages: days(env, 'TRELLIS_RETAIN_PROCESSED_MESSAGES_DAYS', 7),
        events: days(env, 'TRELLIS_RETAIN_EVENTS_DAYS', 30),
        actions: days(env, 'TRELLIS_RETAIN_ACTIONS_DAYS', 30),
        decisions: days(env, 'TRELLIS_RETAIN_DECISIONS_DAYS', 30),
        services: days(env, 'TRELLIS_RETAIN_DOWN_SERVICES_DAYS', 1),
      },
    },
    limits: limits(env),
    rbac: {
      adminProject: str(env, 'TRELLIS_ADMIN_PROJECT') ?? 'admin',
      policyFile: str(env, 'TRELLIS_POLICY_FILE'),
    },
  };
}

/** Where a service without an API port of its own serves /healthz, /readyz and /metrics by default. */
/** not 8778: OpenStack Placement's port, often on the same controller */
export const DEFAULT_OPS_PORTS = { 'policy-engine': 8791, 'nova-worker': 8792 } as const;

/** true when no real cloud is configured and the built-in simulator stands in for Nova. */
export const usesSimulator = (c: TrellisConfig) => c.openstack.authUrl === null && c.openstack.cloud === null;
