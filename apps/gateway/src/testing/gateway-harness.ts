import { loadConfig, silentLogger, type AuthContext, type Logger, type TokenValidator } from '@trellis/common';
import { InMemoryMessageBus } from '@trellis/messaging/in-memory-message-bus';
import { PolicyRegistry } from '@trellis/policies';
import { openTestDatabase } from '@trellis/testing/database';
import type { Database } from '@trellis/persistence';
import request from 'supertest';
import { startGateway, type RunningGateway } from '../bootstrap';

/** Two projects with a member each, and an admin in a third project. */
export const PROJECT_A = 'aaaaaaaa0000000000000000000000aa';
export const PROJECT_B = 'bbbbbbbb0000000000000000000000bb';
export const ADMIN_PROJECT = 'cccccccc0000000000000000000000cc';

const caller = (token: string, user: string, project: string, isAdmin: boolean): AuthContext => ({
  token,
  userId: `${user}-id`,
  userName: user,
  projectId: project,
  projectName: `${user}-project`,
  domainId: 'default',
  roles: isAdmin ? ['admin', 'member'] : ['member'],
  isAdmin,
  expiresAt: new Date(Date.now() + 3600_000),
});

export const TOKENS = { alice: 'token-alice', bob: 'token-bob', admin: 'token-admin' } as const;

export class FakeTokenValidator implements TokenValidator {
  readonly callers = new Map<string, AuthContext>([
    [TOKENS.alice, caller(TOKENS.alice, 'alice', PROJECT_A, false)],
    [TOKENS.bob, caller(TOKENS.bob, 'bob', PROJECT_B, false)],
    [TOKENS.admin, caller(TOKENS.admin, 'admin', ADMIN_PROJECT, true)],
  ]);

  async validate(token: string): Promise<AuthContext | null> {
    return this.callers.get(token) ?? null;
  }
}

export interface GatewayHarness {
  gateway: RunningGateway;
  db: Database;
  /** how many times the gateway announced committed outbox rows */
  outboxNudges(): number;
  http(): ReturnType<typeof request>;
  /** supertest with a token and microversion already set */
  as(token: string, version?: string): Client;
  close(): Promise<void>;
}

export interface Client {
  get(path: string): request.Test;
  post(path: string, body?: unknown): request.Test;
  patch(path: string, body?: unknown): request.Test;
  delete(path: string): request.Test;
}

/** The gateway on a fresh in-memory PGlite, an in-memory bus and the fake Keystone above. */
export async function startGatewayHarness(
  options: { env?: Record<string, string>; logger?: Logger } = {},
): Promise<GatewayHarness> {
  const db = await openTestDatabase();
  let nudges = 0;
  const config = loadConfig({ TRELLIS_PORT: '0', ...options.env });
  const gateway = await startGateway({
    config,
    dataSource: db.dataSource,
    bus: new InMemoryMessageBus({ deliveryLimit: 5 }),
    tokenValidator: new FakeTokenValidator(),
    registry: PolicyRegistry.withBuiltins(),
    onOutboxWritten: () => void nudges++,
    logger: options.logger ?? silentLogger,
  });
  const http = () => request(gateway.url);
  const as = (token: string, version?: string): Client => {
    const prepare = (t: request.Test) => {
      t.set('X-Auth-Token', token);
      if (version) t.set('OpenStack-API-Version', `clustering ${version}`);
      return t;
    };
    return {
      get: (path) => prepare(http().get(path)),
      post: (path, body) => prepare(http().post(path)).send(body as object),
      patch: (path, body) => prepare(http().patch(path)).send(body as object),
      delete: (path) => prepare(http().delete(path)),
    };
  };
  return {
    gateway,
    db,
    outboxNudges: () => nudges,
    http,
    as,
    close: async () => {
      await gateway.close();
      await db.close();
    },
  };
}

export const NOVA_PROFILE_SPEC = {
  type: 'os.nova.server',
  version: 1.0,
  properties: { flavor: 'm1.small', image: 'cirros', networks: [{ network: 'private' }], metadata: { role: 'web' } },
};
