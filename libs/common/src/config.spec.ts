import { ConfigError, loadConfig, usesSimulator } from './config';

describe('loadConfig', () => {
  it('gives the embedded default when nothing is set', () => {
    const c = loadConfig({});
    expect(c.database.url).toBeNull();
    expect(c.database.dataDir).toBe('./data');
    expect(c.database.preparedStatements).toBe(true);
    expect(c.database.pipeline).toBe(true);
    expect(c.amqp.url).toBeNull();
    expect(c.http.port).toBe(8777);
    expect(c.ops).toEqual({ host: '127.0.0.1', port: null, metrics: true });
    expect(usesSimulator(c)).toBe(true);
  });

  it('reads where the health and metrics endpoints are served, and whether metrics are', () => {
    expect(loadConfig({ TRELLIS_OPS_HOST: '0.0.0.0', TRELLIS_OPS_PORT: '9464', TRELLIS_METRICS: 'false' }).ops).toEqual({
      host: '0.0.0.0',
      port: 9464,
      metrics: false,
    });
  });

  it('switches to PostgreSQL, RabbitMQ and a real cloud from the environment', () => {
    const c = loadConfig({
      DATABASE_URL: 'postgres://u@db:5432/trellis',
      AMQP_URL: 'amqp://guest:guest@mq:5672',
      OS_AUTH_URL: 'http://keystone:5000/v3',
      OS_USERNAME: 'admin',
      OS_PROJECT_NAME: 'admin',
      OS_COMPUTE_API_VERSION: '2.64',
    });
    expect(c.database.url).toBe('postgres://u@db:5432/trellis');
    expect(c.amqp.url).toBe('amqp://guest:guest@mq:5672');
    expect(c.openstack.computeApiVersion).toBe('2.64');
    expect(usesSimulator(c)).toBe(false);
  });

  it.each([
    [{ TRELLIS_PORT: 'eighty' }, 'TRELLIS_PORT must be a whole number'],
    [{ TRELLIS_PORT: '70000' }, 'TRELLIS_PORT must be between 0 and 65535'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL must use postgres or postgresql'],
    [{ AMQP_URL: 'not a url' }, 'AMQP_URL is not a valid URL'],
    [{ AMQP_URL: 'amqp://mq-1:5672,http://mq-2:5672' }, "AMQP_URL (entry 2) must use amqp or amqps, got 'http:'"],
    [{ AMQP_URL: 'amqp://mq-1:5672,,amqp://mq-2:5672' }, 'AMQP_URL has an empty entry in its comma-separated list'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL must be one of debug, info, warn, error'],
    [{ TRELLIS_OPS_PORT: 'metrics' }, 'TRELLIS_OPS_PORT must be a whole number'],
    [{ TRELLIS_METRICS: 'sometimes' }, 'TRELLIS_METRICS must be true or false'],
    [{ TRELLIS_DB_LOGGING: 'maybe' }, 'TRELLIS_DB_LOGGING must be true or false'],
    [{ TRELLIS_DB_PREPARED_STATEMENTS: 'perhaps' }, 'TRELLIS_DB_PREPARED_STATEMENTS must be true or false'],
    [{ TRELLIS_DB_PIPELINE: 'sometimes' }, 'TRELLIS_DB_PIPELINE must be true or false'],
    [{ OS_COMPUTE_API_VERSION: '3' }, 'OS_COMPUTE_API_VERSION must look like 2.X'],
    [{ TRELLIS_RETAIN_EVENTS_DAYS: '30d' }, 'TRELLIS_RETAIN_EVENTS_DAYS must be a whole number'],
    [{ TRELLIS_RETAIN_PROCESSED_MESSAGES_DAYS: '-1' }, 'TRELLIS_RETAIN_PROCESSED_MESSAGES_DAYS must be between 0 and 36500'],
    [{ TRELLIS_MAX_ACTIONS_PER_PROJECT: '-5' }, 'TRELLIS_MAX_ACTIONS_PER_PROJECT must be between 0 and 1000000'],
    [{ TRELLIS_MAX_ACTIONS: 'lots' }, 'TRELLIS_MAX_ACTIONS must be a whole number'],
    [{ TRELLIS_REQUESTS_PER_SECOND: 'fast' }, 'TRELLIS_REQUESTS_PER_SECOND must be a number'],
    [{ TRELLIS_REQUEST_BURST: '0' }, 'TRELLIS_REQUEST_BURST must be at least 1 while TRELLIS_REQUESTS_PER_SECOND is set'],
    [{ TRELLIS_RPC_REQUESTS_PER_SECOND: '-1' }, 'TRELLIS_RPC_REQUESTS_PER_SECOND must be a number'],
    [{ TRELLIS_RPC_REQUEST_BURST: '0' }, 'TRELLIS_RPC_REQUEST_BURST must be at least 1 while TRELLIS_RPC_REQUESTS_PER_SECOND is set'],
    [{ TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT: 'many' }, 'TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT must be a whole number'],
  ])('rejects %j naming the variable', (env, message) => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(message);
  });

  it("takes a RabbitMQ cluster's nodes in AMQP_URL, separated by commas", () => {
    expect(loadConfig({ AMQP_URL: 'amqp://u:p@mq-1:5672/trellis, amqp://u:p@mq-2:5672/trellis' }).amqp.url).toBe(
      'amqp://u:p@mq-1:5672/trellis, amqp://u:p@mq-2:5672/trellis',
    );
  });

  it('keeps processed ids 7 days and events, actions, decisions 30 days, pruning hourly; 0 days keeps forever', () => {
    expect(loadConfig({}).retention).toEqual({
      intervalSeconds: 3600,
      batchSize: 500,
      days: { processed_messages: 7, events: 30, actions: 30, decisions: 30, services: 1 },
    });
    const c = loadConfig({ TRELLIS_RETAIN_EVENTS_DAYS: '0', TRELLIS_RETAIN_ACTIONS_DAYS: '90', TRELLIS_RETENTION_INTERVAL_SECONDS: '0' });
    expect(c.retention.days).toMatchObject({ events: null, actions: 90 });
    expect(c.retention.intervalSeconds).toBe(0);
  });

  it('limits each project to 50 unfinished actions, 500 in all, and 20 requests a second with bursts of 100; 0 is no limit', () => {
    const machines = { maxRpcWebhookActionsPerProject: 200, rpcRequestsPerSecond: 100, rpcRequestBurst: 1000, maxNodesPerCluster: 1000, maxClustersPerProject: 100 };
    expect(loadConfig({}).limits).toEqual({ maxActionsPerProject: 50, maxActions: 500, requestsPerSecond: 20, requestBurst: 100, ...machines });
    const c = loadConfig({ TRELLIS_MAX_ACTIONS: '0', TRELLIS_REQUESTS_PER_SECOND: '0.5', TRELLIS_REQUEST_BURST: '3' });
    expect(c.limits).toEqual({ maxActionsPerProject: 50, maxActions: 0, requestsPerSecond: 0.5, requestBurst: 3, ...machines });
    const rpc = loadConfig({ TRELLIS_MAX_RPC_WEBHOOK_ACTIONS_PER_PROJECT: '0', TRELLIS_RPC_REQUESTS_PER_SECOND: '2.5', TRELLIS_RPC_REQUEST_BURST: '7' });
    expect(rpc.limits).toMatchObject({ maxRpcWebhookActionsPerProject: 0, rpcRequestsPerSecond: 2.5, rpcRequestBurst: 7 });
    expect(loadConfig({ TRELLIS_REQUESTS_PER_SECOND: '0', TRELLIS_REQUEST_BURST: '0' }).limits.requestsPerSecond).toBe(0);
  });

  it("takes Senlin's max_nodes_per_cluster (up to 10,000) and max_clusters_per_project, and the broker's message size", () => {
    const c = loadConfig({ TRELLIS_MAX_NODES_PER_CLUSTER: '10000', TRELLIS_MAX_CLUSTERS_PER_PROJECT: '500', TRELLIS_MAX_MESSAGE_BYTES: '134217728' });
    expect(c.limits).toMatchObject({ maxNodesPerCluster: 10000, maxClustersPerProject: 500 });
    expect(c.amqp.maxMessageBytes).toBe(134217728);
    expect(loadConfig({}).amqp.maxMessageBytes).toBe(16 * 1024 * 1024);
    expect(() => loadConfig({ TRELLIS_MAX_NODES_PER_CLUSTER: '10001' })).toThrow('configuration error: TRELLIS_MAX_NODES_PER_CLUSTER must be between 1 and 10000, got 10001');
    expect(() => loadConfig({ TRELLIS_MAX_CLUSTERS_PER_PROJECT: '0' })).toThrow(/TRELLIS_MAX_CLUSTERS_PER_PROJECT must be between 1/);
    expect(() => loadConfig({ TRELLIS_MAX_MESSAGE_BYTES: '100' })).toThrow(/TRELLIS_MAX_MESSAGE_BYTES must be between 1024/);
  });

  it('reads the plugin list as comma-separated module paths', () => {
    expect(loadConfig({ TRELLIS_POLICY_PLUGINS: ' ./a.js, ./plugins/ ,' }).engine.plugins).toEqual(['./a.js', './plugins/']);
  });

  it('loads the bundled plugins when TRELLIS_POLICY_PLUGINS is unset, none when it is empty', () => {
    expect(loadConfig({}).engine.plugins).toEqual(['bundled']);
    expect(loadConfig({ TRELLIS_POLICY_PLUGINS: '' }).engine.plugins).toEqual([]);
    expect(loadConfig({ TRELLIS_POLICY_PLUGINS: 'bundled,./mine.js' }).engine.plugins).toEqual(['bundled', './mine.js']);
  });
});
