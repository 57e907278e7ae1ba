import { randomUUID } from 'node:crypto';
import { NodeEntity, type Database } from '@trellis/persistence';
import { openTestDatabase } from '@trellis/testing/database';
import { PROJECT_A, PROJECT_B, TOKENS, testCaller } from '../testing/gateway-harness';
import { MAX_LIST_LIMIT, parseListQuery, runList, type SortKey } from './list-query';

const LIST = { filters: ['name', 'status'], sortKeys: ['index', 'name', 'status', 'init_at', 'created_at', 'updated_at'] };
const DEFAULT_SORT: SortKey[] = [{ key: 'init_at', dir: 'ASC' }];
const alice = testCaller({ token: TOKENS.alice, user: 'alice', project: PROJECT_A, roles: ['member'] });
const member = { allows: () => false };

/**
 * Paging by marker against the database's own order: every page joined must be the whole ordered
 * collection, for sort keys that tie, keys that may be NULL (first when descending, last when
 * ascending) and timestamps with microseconds (which a JavaScript Date cannot hold).
 */
describe('runList: marker, limit and sort in SQL', () => {
  let db: Database;
  const profileId = randomUUID();

  beforeAll(async () => {
    db = await openTestDatabase();
    // 40 nodes of project A: names and statuses tie in groups, init_at/created_at are NULL for some,
    // and timestamps differ only in microseconds; 5 nodes of project B that A must never see.
    await db.dataSource.query(
      `INSERT INTO nodes (id, name, profile_id, project, "user", status, index, init_at, created_at)
       SELECT gen_random_uuid(), 'n' || (i % 7), $1, $2, 'u', (ARRAY['ACTIVE','ERROR','INIT'])[1 + i % 3], i % 5,
              CASE WHEN i % 6 = 0 THEN NULL ELSE timestamptz '2026-01-01' + (i % 9) * interval '1 microsecond' END,
              CASE WHEN i % 4 = 0 THEN NULL ELSE timestamptz '2026-01-01' + i * interval '1 second' END
       FROM generate_series(1, 40) AS i`,
      [profileId, PROJECT_A],
    );
    await db.dataSource.query(
      `INSERT INTO nodes (id, name, profile_id, project, "user", status)
       SELECT gen_random_uuid(), 'n1', $1, $2, 'u', 'ACTIVE' FROM generate_series(1, 5)`,
      [profileId, PROJECT_B],
    );
  });
  afterAll(() => db?.close());

  const list = (query: Record<string, unknown>) => {
    const q = parseListQuery(query, LIST, member);
    const qb = db.dataSource.getRepository(NodeEntity).createQueryBuilder('n');
    // as NodesService filters
    if (q.filters.name) qb.andWhere('n.name IN (:...names)', { names: q.filters.name });
    if (q.filters.status) qb.andWhere('n.status IN (:...statuses)', { statuses: q.filters.status });
    return runList(qb, q, alice, DEFAULT_SORT);
  };

  /** The order Senlin defines, written out in SQL: the caller's keys, the default, then id ascending. */
  async function expected(orderBy: string, where = ''): Promise<string[]> {
    const rows: Array<{ id: string }> = await db.dataSource.query(
      `SELECT id FROM nodes WHERE project = $1 ${where} ORDER BY ${orderBy}, id ASC`,
      [PROJECT_A],
    );
    return rows.map((r) => r.id);
  }

  async function allPages(query: Record<string, unknown>, limit: number): Promise<string[]> {
    const seen: string[] = [];
    for (;;) {
      const marker = seen.length ? { marker: seen[seen.length - 1] } : {};
      const page = await list({ ...query, ...marker, limit: String(limit) });
      expect(page.length).toBeLessThanOrEqual(limit);
      seen.push(...page.map((n) => n.id));
      if (page.length < limit) return seen;
    }
  }

  it.each([
    ['', 'init_at ASC'],
    ['name', 'name ASC, init_at ASC'],
    ['name:desc', 'name DESC, init_at ASC'],
    ['init_at:desc', 'init_at DESC'],
    ['created_at:desc,name', 'created_at DESC, name ASC, init_at ASC'],
    ['status:asc,index:desc', 'status ASC, index DESC, init_at ASC'],
    ['index,status', 'index ASC, status ASC, init_at ASC'],
  ])('sort=%s: the pages of 3 joined are the whole collection in order', async (sort, orderBy) => {
    const query = sort ? { sort } : {};
    const want = await expected(orderBy);
    expect(want).toHaveLength(40);
    expect(await allPages(query, 3)).toEqual(want);
    expect((await list(query)).map((n) => n.id)).toEqual(want);
  });

  it('pages within a filter, and a marker outside the filter is refused with Senlin’s message', async () => {
    const want = await expected('init_at ASC', `AND status IN ('ERROR', 'INIT')`);
    expect(await allPages({ status: ['ERROR', 'INIT'] }, 4)).toEqual(want);
    const [active] = await expected('init_at ASC', `AND status = 'ACTIVE'`);
    await expect(list({ status: 'ERROR', marker: active })).rejects.toThrow(`Invalid value '${active}' specified for 'marker'`);
  });

  it("refuses another project's node as marker, and an unknown id", async () => {
    const [other] = (await db.dataSource.query(`SELECT id FROM nodes WHERE project = $1 LIMIT 1`, [PROJECT_B])) as Array<{ id: string }>;
    await expect(list({ marker: other.id })).rejects.toThrow(`Invalid value '${other.id}' specified for 'marker'`);
    const unknown = randomUUID();
    await expect(list({ marker: unknown })).rejects.toThrow(`Invalid value '${unknown}' specified for 'marker'`);
  });

  it('limit=0 is an empty page; the marker of the last item is an empty page', async () => {
    expect(await list({ limit: '0' })).toEqual([]);
    const want = await expected('init_at ASC');
    expect(await list({ marker: want[want.length - 1] })).toEqual([]);
  });

  it('asks the database for one page, not the collection', async () => {
    const qb = db.dataSource.getRepository(NodeEntity).createQueryBuilder('n');
    await runList(qb, parseListQuery({ limit: '2', sort: 'name' }, LIST, member), alice, DEFAULT_SORT);
    expect(qb.getSql()).toMatch(/ LIMIT 2$/);
  });

  describe(`at most ${MAX_LIST_LIMIT} items an answer`, () => {
    beforeAll(async () => {
      await db.dataSource.query(
        `INSERT INTO nodes (id, name, profile_id, project, "user", status, init_at)
         SELECT gen_random_uuid(), 'bulk', $1, $2, 'u', 'ACTIVE', timestamptz '2027-01-01' + i * interval '1 second'
         FROM generate_series(1, $3::int) AS i`,
        [profileId, PROJECT_A, MAX_LIST_LIMIT + 10],
      );
    });

    it('without limit, and with a larger limit; the rest follows by marker', async () => {
      const want = await expected('init_at ASC', `AND name = 'bulk'`);
      const first = await list({ name: 'bulk' });
      expect(first.map((n) => n.id)).toEqual(want.slice(0, MAX_LIST_LIMIT));
      expect((await list({ name: 'bulk', limit: String(MAX_LIST_LIMIT * 5) })).length).toBe(MAX_LIST_LIMIT);
      const rest = await list({ name: 'bulk', marker: first[first.length - 1].id });
      expect(rest.map((n) => n.id)).toEqual(want.slice(MAX_LIST_LIMIT));
    });
  });
});
