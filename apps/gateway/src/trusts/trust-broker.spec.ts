import { silentLogger, type AuthContext } from '@trellis/common';
import { openTestDatabase } from '@trellis/testing/database';
import type { Database } from '@trellis/persistence';
import { RecordingTrustIssuer } from '../testing/gateway-harness';
import { TrustBroker } from './trust-broker';

const caller = (user: string, project: string, roles = ['member', 'reader']): AuthContext => ({
  token: `token-of-${user}`,
  userId: user,
  userName: user,
  projectId: project,
  projectName: project,
  domainId: 'default',
  roles,
  isAdmin: false,
  isProjectAdmin: false,
  systemScope: null,
  isAdminProject: false,
  expiresAt: new Date(Date.now() + 3600_000),
});

describe('TrustBroker', () => {
  let db: Database;
  let keystone: RecordingTrustIssuer;
  let clock: number;
  let broker: TrustBroker;

  beforeAll(async () => {
    db = await openTestDatabase();
  });
  afterAll(() => db.close());
  beforeEach(async () => {
    await db.dataSource.query('DELETE FROM trusts');
    keystone = new RecordingTrustIssuer();
    clock = Date.parse('2026-11-25T10:00:00Z');
    broker = new TrustBroker(keystone, silentLogger, { now: () => clock, verifyEverySeconds: 300 });
  });

  const stored = () => db.dataSource.query('SELECT user_id, project_id, trust_id, trustee_user_id, roles FROM trusts ORDER BY user_id, project_id');

  it('makes a trust with the caller\'s own token, project and roles on first need, and stores only its id', async () => {
    const id = await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'));
    expect([...keystone.trusts.entries()]).toEqual([[id, { trustorUserId: 'alice', projectId: 'p-a', roles: ['member', 'reader'], token: 'token-of-alice' }]]);
    expect(await stored()).toEqual([{ user_id: 'alice', project_id: 'p-a', trust_id: id, trustee_user_id: 'trellis-service-user', roles: ['member', 'reader'] }]);
    const columns: Array<{ column_name: string }> = await db.dataSource.query(`SELECT column_name FROM information_schema.columns WHERE table_name = 'trusts'`);
    expect(columns.map((c) => c.column_name).some((c) => /token|password|secret/.test(c))).toBe(false);
  });

  it('reuses the trust of a user and project; another project or user gets its own', async () => {
    const first = await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'));
    expect(await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'))).toBe(first);
    const otherProject = await broker.ensure(db.dataSource.manager, caller('alice', 'p-b'));
    const otherUser = await broker.ensure(db.dataSource.manager, caller('bob', 'p-a'));
    expect(new Set([first, otherProject, otherUser]).size).toBe(3);
    expect(keystone.trusts.size).toBe(3);
    expect(keystone.gets).toBe(0);
  });

  it('asks Keystone again after the verification period, and replaces a trust Keystone no longer has', async () => {
    const first = await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'));
    clock += 301_000;
    expect(await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'))).toBe(first);
    expect(keystone.gets).toBe(1);
    keystone.revoke(first);
    clock += 301_000;
    const second = await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'));
    expect(second).not.toBe(first);
    expect((await stored())[0].trust_id).toBe(second);
  });

  it('makes a new trust at once when the worker dropped the row of a trust Keystone refused', async () => {
    const first = await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'));
    keystone.revoke(first);
    await db.dataSource.query('DELETE FROM trusts WHERE trust_id = $1', [first]);
    const second = await broker.ensure(db.dataSource.manager, caller('alice', 'p-a'));
    expect(second).not.toBe(first);
  });

  it('lets another statement read the remembered trust\'s row: ensure reuses it only when that read found it', async () => {
    const m = db.dataSource.manager;
    expect(broker.storedCheck(caller('alice', 'p-a'), 1)).toBeNull();
    const first = await broker.ensure(m, caller('alice', 'p-a'));
    const check = broker.storedCheck(caller('alice', 'p-a'), 2)!;
    expect(check.trustId).toBe(first);
    const read = async () => {
      const [row]: Array<{ trust_stored: boolean }> = await m.query(`SELECT $1::int AS n, ${check.select}`, [0, ...check.params]);
      return { trustId: check.trustId, stored: row.trust_stored };
    };
    const seen = await read();
    expect(seen.stored).toBe(true);
    const sent = jest.spyOn(m, 'query');
    expect(await broker.ensure(m, caller('alice', 'p-a'), seen)).toBe(first);
    expect(sent).not.toHaveBeenCalled();
    expect(await broker.ensure(m, caller('alice', 'p-a'))).toBe(first);
    expect(sent).toHaveBeenCalledTimes(1);
    sent.mockRestore();
    // the worker dropped the row of a trust Keystone refused: the read says so, and a new one is made
    keystone.revoke(first);
    await db.dataSource.query('DELETE FROM trusts WHERE trust_id = $1', [first]);
    const gone = await read();
    expect(gone.stored).toBe(false);
    const second = await broker.ensure(m, caller('alice', 'p-a'), gone);
    expect(second).not.toBe(first);
    // a read of a trust no longer remembered is not taken for the new one
    expect(await broker.ensure(m, caller('alice', 'p-a'), { trustId: first, stored: true })).toBe(second);
    // past the verification period there is nothing to read beside another statement
    clock += 301_000;
    expect(broker.storedCheck(caller('alice', 'p-a'), 1)).toBeNull();
  });

  it('answers 403 naming Keystone\'s refusal, and 503 when Keystone does not answer', async () => {
    keystone.create = async () => {
      throw Object.assign(new Error('Using method application_credential is not allowed for managing trusts.'), { status: 403 });
    };
    await expect(broker.ensure(db.dataSource.manager, caller('alice', 'p-a'))).rejects.toMatchObject({
      code: 'FORBIDDEN',
      message: expect.stringContaining('Using method application_credential is not allowed'),
    });
    keystone.create = async () => {
      throw new Error('connect ECONNREFUSED 127.0.0.1:5000');
    };
    await expect(broker.ensure(db.dataSource.manager, caller('alice', 'p-a'))).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await stored()).toEqual([]);
  });
});
