import { randomBytes } from 'node:crypto';
import { format } from 'node:util';
import { Exchanges, RoutingKeys } from '@trellis/contracts';
import type { OutgoingMessage } from '@trellis/messaging/bus.port';
import { ApiClient, keystoneToken, type ApiResponse } from './api-client';
import { createProfileAndCluster, scaleOut } from './scale-out.scenario';
import { startTestTrellis, type TestTrellisOptions } from './trellis';

/** Where a text was seen: a log line, a stored row, a published message, an error body. */
export interface Haystack {
  where: string;
  text: string;
}

/** A secret and the places it may legitimately be (a webhook's credential is its receiver's id). */
export interface Secret {
  name: string;
  value: string;
  allowedIn?: (where: string) => boolean;
}

/**
 * Every place a secret shows up, as `<secret name> in <where>`. A secret is looked for by its first
 * 24 characters (all of it when shorter), so a token cut short in a log line is found too.
 */
export function findSecrets(haystacks: Haystack[], secrets: Secret[]): string[] {
  const hits: string[] = [];
  for (const secret of secrets) {
    const needle = secret.value.slice(0, 24);
    for (const h of haystacks) {
      if (h.text.includes(needle) && !secret.allowedIn?.(h.where)) hits.push(`${secret.name} in ${h.where}`);
    }
  }
  return hits;
}

/** Everything this process writes to stdout, stderr and the console, kept instead of printed, until `restore`. */
export function captureOutput(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const keep = (text: string) => lines.push(...text.split('\n').filter((l) => l.trim() !== ''));
  const out = process.stdout.write;
  const err = process.stderr.write;
  const methods = ['log', 'info', 'warn', 'error', 'debug'] as const;
  const consoled = methods.map((m) => console[m]);
  const tap = ((chunk: unknown, ...rest: unknown[]) => {
    keep(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
    const done = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    done?.();
    return true;
  }) as typeof process.stdout.write;
  process.stdout.write = tap;
  process.stderr.write = tap;
  for (const m of methods) console[m] = (...args: unknown[]) => keep(format(...args));
  return {
    lines,
    restore: () => {
      process.stdout.write = out;
      process.stderr.write = err;
      methods.forEach((m, i) => (console[m] = consoled[i]));
    },
  };
}

/** An ApiClient that keeps the body of every answer of 400 or more. */
class RecordingApiClient extends ApiClient {
  constructor(
    baseUrl: string,
    token: string,
    private readonly errors: Haystack[],
  ) {
    super(baseUrl, token);
  }

  override async call<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    const res = await super.call<T>(method, path, body);
    if (res.status >= 400) this.errors.push({ where: `the ${res.status} error body of ${method} ${path}`, text: JSON.stringify(res.body) });
    return res;
  }
}

export interface SecretsRun {
  secrets: Secret[];
  haystacks: Haystack[];
  /** a value put where the search must find it: a stored row, a log line and an error body */
  planted: Secret;
}

const random = (prefix: string) => `${prefix}-${randomBytes(16).toString('hex')}`;

/**
 * The secrets scenario of issue 12: Trellis at LOG_LEVEL=debug (and SQL logging) with passwords of
 * its own, a failed login, a profile, a cluster, a scale-out, a webhook receiver and its trigger, an
 * RPC call, a forged token over REST and RPC. Returns every log line of every component, every row
 * of every table, every message published and every error body received, and the secrets: the
 * users' and the service's passwords, the failed login's password, every token the built-in Keystone
 * issued (the users', the service's, the trust-scoped ones), the forged token, the webhook's credential.
 */
export async function runSecretsScenario(stack: TestTrellisOptions['stack'] = 'embedded'): Promise<SecretsRun> {
  const passwords = {
    demo: random('demo-pw'),
    admin: random('admin-pw'),
    service: random('service-pw'),
    failedLogin: random('wrong-pw'),
    failedPageSignIn: random('wrong-page-pw'),
  };
  const forged = 'gAAAAAB' + randomBytes(132).toString('base64url');
  const planted: Secret = { name: 'the planted secret', value: random('planted') };
  const haystacks: Haystack[] = [];
  const errors: Haystack[] = [];
  const published: OutgoingMessage[] = [];

  const output = captureOutput();
  let secrets: Secret[];
  try {
    const t = await startTestTrellis({
      stack,
      env: {
        LOG_LEVEL: 'debug',
        TRELLIS_DB_LOGGING: 'true',
        TRELLIS_DEMO_PASSWORD: passwords.demo,
        TRELLIS_ADMIN_PASSWORD: passwords.admin,
        SIMULATOR_SERVICE_PASSWORD: passwords.service,
      },
    });
    try {
      const { trellis } = t;
      const sim = trellis.simulator!;
      const bus = trellis.infra.bus;
      const publish = bus.publish.bind(bus);
      bus.publish = (m) => (published.push(m), publish(m));

      const failed = await fetch(`${sim.authUrl}/auth/tokens`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({
          auth: {
            identity: { methods: ['password'], password: { user: { name: 'demo', domain: { name: 'Default' }, password: passwords.failedLogin } } },
            scope: { project: { name: 'demo', domain: { name: 'Default' } } },
          },
        }),
      });
      expect(failed.status).toBe(401);
      errors.push({ where: 'the 401 error body of the failed login', text: await failed.text() });

      // the web page's sign-in, which the gateway passes to Keystone: a wrong password, then the right one
      const pageSignIn = (password: string) =>
        fetch(`${trellis.url}/ui/session`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: JSON.stringify({ username: 'demo', password, project: 'demo' }),
        });
      const refused = await pageSignIn(passwords.failedPageSignIn);
      expect(refused.status).toBe(401);
      errors.push({ where: "the 401 error body of the web page's failed sign-in", text: await refused.text() });
      expect((await pageSignIn(passwords.demo)).status).toBe(201);

      const token = await keystoneToken(sim.authUrl, { name: 'demo', password: passwords.demo, project: 'demo' });
      const api = new RecordingApiClient(trellis.url, token, errors);
      const { clusterId } = await createProfileAndCluster(api, 'web');
      expect((await scaleOut(api, clusterId, 1)).status).toBe('SUCCEEDED');

      const receiver = await api.post('/v1/receivers', {
        receiver: { name: 'grow', type: 'webhook', cluster_id: clusterId, action: 'CLUSTER_SCALE_OUT', params: { count: 1 } },
      });
      expect(receiver.status).toBe(201);
      const hook = await fetch(receiver.body.receiver.channel.alarm_url, { method: 'POST' });
      expect(hook.status).toBe(202);
      expect((await api.waitForAction(((await hook.json()) as { action: string }).action)).status).toBe('SUCCEEDED');

      const rpc = (body: object, pattern: string) =>
        bus.request(body, { exchange: Exchanges.rpc, routingKey: RoutingKeys.rpcRequest, pattern, timeoutMs: 30_000 }) as Promise<{
          status: number;
          action_id?: string;
          error?: unknown;
        }>;
      const scaledIn = await rpc({ token, microversion: '1.14', params: { cluster_id: clusterId }, body: { count: 1 } }, 'cluster.scale_in');
      expect(scaledIn.status).toBe(202);
      expect((await api.waitForAction(scaledIn.action_id!)).status).toBe('SUCCEEDED');

      const forgedRest = await new RecordingApiClient(trellis.url, forged, errors).get('/v1/clusters');
      expect(forgedRest.status).toBe(401);
      const forgedRpc = await rpc({ token: forged, microversion: '1.14' }, 'cluster.list');
      expect(forgedRpc.status).toBe(401);
      errors.push({ where: 'the 401 RPC reply of cluster.list with a forged token', text: JSON.stringify(forgedRpc) });

      // the self-check's secret, where a leak would be: a stored row, a log line, an error body
      expect((await api.post('/v1/profiles', { profile: { name: 'planted', spec: PLAIN_SPEC, metadata: { note: planted.value } } })).status).toBe(201);
      process.stderr.write(`${JSON.stringify({ level: 'debug', msg: 'planted', value: planted.value })}\n`);
      expect((await api.get(`/v1/clusters/${planted.value}`)).status).toBe(404);

      const receiverId: string = receiver.body.receiver.id;
      const urlPasswords = [trellis.config.amqp.url, trellis.config.database.url].flatMap((u) => {
        const url = u ? new URL(u) : null;
        return url?.password ? [{ name: `the password of ${url.protocol}// ${url.host}`, value: `${url.username}:${url.password}@` }] : [];
      });
      secrets = [
        ...urlPasswords,
        { name: "demo's password", value: passwords.demo },
        { name: "admin's password", value: passwords.admin },
        { name: "the service user's password", value: passwords.service },
        { name: 'the failed login password', value: passwords.failedLogin },
        { name: "the web page's failed sign-in password", value: passwords.failedPageSignIn },
        { name: 'the forged token', value: forged },
        ...sim.state.identity.issuedTokens().map((value, i) => ({ name: `Keystone token #${i + 1}`, value })),
        // the receiver's id is Senlin's webhook credential: its own row holds it (id, alarm_url), nothing else may
        { name: "the webhook's credential", value: receiverId, allowedIn: (where: string) => where.startsWith(`row of receivers `) },
      ];
      haystacks.push(...(await dumpTables(trellis.infra.database.dataSource)));
    } finally {
      await t.close();
    }
  } finally {
    output.restore();
  }
  output.lines.forEach((text, i) => haystacks.push({ where: `log line ${i + 1}: ${text.slice(0, 200)}`, text }));
  published.forEach((m, i) => haystacks.push({ where: `published message ${i + 1} (${m.type})`, text: JSON.stringify(m) }));
  haystacks.push(...errors);
  return { secrets, haystacks, planted };
}

const PLAIN_SPEC = { type: 'os.nova.server', version: 1.0, properties: { flavor: 'm1.tiny', image: 'cirros-fake', networks: [] } };

/** Every row of every table of the public schema, one haystack each. */
async function dumpTables(dataSource: { query(sql: string): Promise<any[]> }): Promise<Haystack[]> {
  const tables: Array<{ table_name: string }> = await dataSource.query(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`,
  );
  const rows: Haystack[] = [];
  for (const { table_name: table } of tables) {
    const found = await dataSource.query(`SELECT * FROM "${table}"`);
    found.forEach((row, i) => rows.push({ where: `row of ${table} #${i + 1}`, text: JSON.stringify(row) }));
  }
  return rows;
}

/** The two checks of the scenario, for each stack it runs on. */
export function describeSecretsScenario(stack: NonNullable<TestTrellisOptions['stack']>): void {
  describe(`secrets stay out of logs, rows, messages and error bodies (${stack})`, () => {
    let run: SecretsRun;

    beforeAll(async () => {
      run = await runSecretsScenario(stack);
    });

    it('finds a planted secret in the row, the log line and the error body it was put in (the search works)', () => {
      const hits = findSecrets(run.haystacks, [run.planted]);
      expect(hits.some((h) => h.startsWith('the planted secret in row of profiles '))).toBe(true);
      expect(hits.some((h) => h.startsWith('the planted secret in log line '))).toBe(true);
      expect(hits.some((h) => /^the planted secret in the 404 error body of GET \/v1\/clusters\//.test(h))).toBe(true);
    });

    it('finds no password, token or webhook credential anywhere else', () => {
      expect(run.secrets.filter((s) => s.name.startsWith('Keystone token')).length).toBeGreaterThanOrEqual(3);
      if (stack === 'rabbitmq+postgres') expect(run.secrets.map((s) => s.name)).toContainEqual(expect.stringMatching(/^the password of amqp:\/\//));
      expect(run.haystacks.filter((h) => h.where.startsWith('log line')).length).toBeGreaterThan(100);
      expect(findSecrets(run.haystacks, run.secrets)).toEqual([]);
    });
  });
}
