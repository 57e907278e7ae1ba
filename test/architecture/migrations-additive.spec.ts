import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { MigrationInterface, QueryRunner, TableColumn, TableIndex } from 'typeorm';
import { ALL_MIGRATIONS } from '@trellis/persistence/migrations';

/**
 * Rolling upgrades (README "Upgrading a running deployment"): the first process of a new release
 * migrates the database while the processes of the release before keep running on it, and a release
 * rolled back runs on the newer schema. That holds when a migration only adds what the older code
 * can ignore. This reads what each migration's `up()` does (its SQL and TypeORM schema calls,
 * recorded by a stand-in QueryRunner) and refuses, for every migration after ROLLING_UPGRADES_FROM:
 * dropping or renaming anything, changing a column's type, making a column NOT NULL, adding a NOT
 * NULL column without a default (the older code's INSERTs do not name it), and adding a constraint
 * or a unique index to a table that existed before (the older code's writes may break it).
 *
 * A migration that cannot be additive says why in `static readonly notAdditive`, and README's
 * upgrade section names it, so operators know to stop the older release first.
 */

/** The last migration before rolling upgrades were supported; the rules hold for every later one. */
const ROLLING_UPGRADES_FROM = 'NodePlacementZone1795970000000';

type Recorded = { sql: string } | { call: string; args: unknown[] };

/** What `up()` asks of the database, without a database: SQL texts and schema-builder calls. */
async function recordUp(migration: MigrationInterface): Promise<Recorded[]> {
  const recorded: Recorded[] = [];
  const runner = new Proxy({} as QueryRunner, {
    get(_target, property) {
      if (property === 'then') return undefined;
      if (property === 'query') {
        return async (sql: string) => {
          recorded.push({ sql });
          return [];
        };
      }
      return async (...args: unknown[]) => {
        recorded.push({ call: String(property), args });
        return undefined;
      };
    },
  });
  await migration.up(runner);
  return recorded;
}

const quoted = (name: string) => name.replace(/^"public"\./i, '').replace(/"/g, '');

/** Splits "a, b (c, d), e" at the commas outside parentheses and quotes. */
function topLevelParts(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | null = null;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      if (c === quote) quote = null;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim());
}

const columnNeedsValue = (clause: string) =>
  /\bNOT\s+NULL\b/i.test(clause) && !/\bDEFAULT\b/i.test(clause) && !/\bGENERATED\b/i.test(clause);

/** Why what was recorded is not additive, for each step that is not; `created` are tables this migration made. */
function notAdditive(steps: Recorded[]): string[] {
  const problems: string[] = [];
  const created = new Set<string>();
  const existing = (table: string) => !created.has(quoted(table));
  for (const step of steps) {
    if ('call' in step) {
      const [table, what] = step.args as [unknown, unknown];
      const tableName = typeof table === 'string' ? table : ((table as { name?: string })?.name ?? '?');
      switch (step.call) {
        case 'createTable':
          created.add(quoted(tableName));
          break;
        case 'addColumn': {
          const column = what as TableColumn;
          if (!column.isNullable && column.default === undefined && !column.generatedType) {
            problems.push(`adds NOT NULL column ${tableName}.${column.name} without a default`);
          }
          break;
        }
        case 'addColumns':
          for (const column of what as TableColumn[]) {
            if (!column.isNullable && column.default === undefined && !column.generatedType) {
              problems.push(`adds NOT NULL column ${tableName}.${column.name} without a default`);
            }
          }
          break;
        case 'createIndex':
        case 'createIndices':
          for (const index of (Array.isArray(what) ? what : [what]) as TableIndex[]) {
            if (index.isUnique && existing(tableName)) problems.push(`adds a unique index to existing table ${tableName}`);
          }
          break;
        default:
          if (/^(drop|rename|change|clear)/i.test(step.call)) problems.push(`${step.call} on ${tableName}`);
          else if (/^create(PrimaryKey|UniqueConstraint|CheckConstraint|ExclusionConstraint|ForeignKey)/i.test(step.call)) {
            if (existing(tableName)) problems.push(`${step.call} on existing table ${tableName}`);
          } else if (!/^(has|get|load)/i.test(step.call)) {
            problems.push(`calls QueryRunner.${step.call}, which this check does not know: review it by hand and teach the check`);
          }
      }
      continue;
    }
    const sql = step.sql.replace(/\s+/g, ' ').trim();
    const createTable = /^CREATE TABLE (?:IF NOT EXISTS )?("?[\w.]+"?)/i.exec(sql);
    if (createTable) {
      created.add(quoted(createTable[1]));
      continue;
    }
    if (/\bDROP\b/i.test(sql)) problems.push(`drops: ${sql}`);
    if (/\bRENAME\b/i.test(sql)) problems.push(`renames: ${sql}`);
    if (/\bALTER COLUMN\b.*\bTYPE\b/i.test(sql)) problems.push(`changes a column's type: ${sql}`);
    if (/\bSET NOT NULL\b/i.test(sql)) problems.push(`makes a column NOT NULL: ${sql}`);
    const uniqueIndex = /^CREATE UNIQUE INDEX .*? ON (?:ONLY )?("?[\w.]+"?)/i.exec(sql);
    if (uniqueIndex && existing(uniqueIndex[1])) problems.push(`adds a unique index to an existing table: ${sql}`);
    const alter = /^ALTER TABLE (?:ONLY )?(?:IF EXISTS )?("?[\w.]+"?) (.*)$/i.exec(sql);
    if (alter && existing(alter[1])) {
      for (const clause of topLevelParts(alter[2])) {
        if (/^ADD (CONSTRAINT|PRIMARY KEY|UNIQUE|CHECK|FOREIGN KEY|EXCLUDE)\b/i.test(clause)) {
          problems.push(`adds a constraint to an existing table: ${clause}`);
        } else if (/^ADD\b/i.test(clause) && columnNeedsValue(clause)) {
          problems.push(`adds a NOT NULL column without a default: ${clause}`);
        }
      }
    }
  }
  return problems;
}

const readme = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
const upgradeSection = readme.slice(readme.indexOf('## Upgrading a running deployment'));
const from = ALL_MIGRATIONS.findIndex((m) => m.name === ROLLING_UPGRADES_FROM);
const later = ALL_MIGRATIONS.slice(from + 1);

describe('migrations after rolling upgrades began only add', () => {
  it('knows where the rule starts, and README has the upgrade section', () => {
    expect(from).toBeGreaterThanOrEqual(0);
    expect(readme.includes('## Upgrading a running deployment')).toBe(true);
  });

  it('every later migration is additive, or says why not and README names it', async () => {
    // none yet: the first one a release adds is checked here
    for (const cls of later) {
      const problems = notAdditive(await recordUp(new cls()));
      const why = (cls as unknown as { notAdditive?: string }).notAdditive;
      if (why) {
        // an exception that is not needed is a stale one
        expect({ migration: cls.name, problems: problems.length > 0 }).toEqual({ migration: cls.name, problems: true });
        expect({ migration: cls.name, namedInReadme: upgradeSection.includes(cls.name) }).toEqual({ migration: cls.name, namedInReadme: true });
      } else {
        expect({ migration: cls.name, problems }).toEqual({ migration: cls.name, problems: [] });
      }
    }
  });

  // The check itself, on migrations written before the rule (some of which it must refuse) and on
  // statements made up for it.
  const named = (name: string) => {
    const cls = ALL_MIGRATIONS.find((m) => m.name === name);
    if (!cls) throw new Error(`no migration ${name}`);
    return recordUp(new cls());
  };

  it('refuses a primary key moved under the running code (ProjectCloudFacts1795500000000)', async () => {
    expect(notAdditive(await named('ProjectCloudFacts1795500000000'))).toEqual([
      expect.stringMatching(/^drops: ALTER TABLE "cloud_facts" DROP CONSTRAINT/),
      expect.stringMatching(/^adds a constraint to an existing table: ADD CONSTRAINT "PK_\w+" PRIMARY KEY \("kind", "project"\)/),
    ]);
  });

  it('refuses an index dropped and a column added by the schema builder only when they are not additive', async () => {
    // NodePlacementZone1795970000000: a generated column (fine) and an index dropped and made again
    expect(notAdditive(await named('NodePlacementZone1795970000000'))).toEqual([expect.stringMatching(/^drops: DROP INDEX "public"."IDX_nodes_cluster_zone_age"/)]);
  });

  it.each(['InitialSchema1795309817000', 'WorkOrderLeases1795700000000', 'Receivers1795800000000', 'RetentionIndexes1795930000000', 'Services1795920000000'])(
    'takes %s (new tables, nullable columns, columns with defaults, plain indexes)',
    async (name) => {
      expect(notAdditive(await named(name))).toEqual([]);
    },
  );

  it.each([
    [`ALTER TABLE "nodes" ADD "weight" integer NOT NULL`, /NOT NULL column without a default/],
    [`ALTER TABLE "nodes" ADD COLUMN "a" text, ADD "b" jsonb NOT NULL`, /NOT NULL column without a default: ADD "b"/],
    [`ALTER TABLE "nodes" ALTER COLUMN "name" TYPE text`, /changes a column's type/],
    [`ALTER TABLE "nodes" ALTER COLUMN "name" SET NOT NULL`, /makes a column NOT NULL/],
    [`ALTER TABLE "nodes" RENAME COLUMN "name" TO "title"`, /renames/],
    [`ALTER TABLE "nodes" ADD CONSTRAINT "CK" CHECK ("index" >= 0)`, /adds a constraint/],
    [`CREATE UNIQUE INDEX "UQ" ON "nodes" ("name")`, /unique index to an existing table/],
    [`DROP TABLE "events"`, /drops/],
  ])('refuses %s', (sql, problem) => {
    expect(notAdditive([{ sql }])).toEqual([expect.stringMatching(problem)]);
  });

  it.each([
    `ALTER TABLE "nodes" ADD "weight" integer NOT NULL DEFAULT 0`,
    `ALTER TABLE "nodes" ADD "note" text, ADD "flags" jsonb NOT NULL DEFAULT '{"a": 1, "b": 2}'`,
    `CREATE INDEX "IDX_x" ON "nodes" ("name")`,
    `CREATE TABLE "things" ("id" uuid NOT NULL, CONSTRAINT "PK_t" PRIMARY KEY ("id"))`,
  ])('takes %s', (sql) => {
    expect(notAdditive([{ sql }])).toEqual([]);
  });

  it('takes constraints and unique indexes on a table the same migration made', () => {
    expect(
      notAdditive([
        { sql: `CREATE TABLE "things" ("id" uuid NOT NULL, "name" text)` },
        { sql: `CREATE UNIQUE INDEX "UQ_things" ON "things" ("name")` },
        { sql: `ALTER TABLE "things" ADD CONSTRAINT "PK_things" PRIMARY KEY ("id")` },
      ]),
    ).toEqual([]);
  });

  it('refuses schema-builder calls that drop, rename or change, and ones it does not know', () => {
    expect(
      notAdditive([
        { call: 'dropColumn', args: ['nodes', 'name'] },
        { call: 'renameColumn', args: ['nodes', 'name', 'title'] },
        { call: 'changeColumn', args: ['nodes', 'name', {}] },
        { call: 'addColumn', args: ['nodes', { name: 'w', isNullable: false, default: undefined }] },
        { call: 'addColumn', args: ['nodes', { name: 'v', isNullable: false, default: '0' }] },
        { call: 'createIndex', args: ['nodes', { isUnique: true }] },
        { call: 'createUniqueConstraint', args: ['nodes', {}] },
        { call: 'somethingNew', args: [] },
      ]),
    ).toEqual([
      'dropColumn on nodes',
      'renameColumn on nodes',
      'changeColumn on nodes',
      'adds NOT NULL column nodes.w without a default',
      'adds a unique index to existing table nodes',
      'createUniqueConstraint on existing table nodes',
      expect.stringMatching(/QueryRunner.somethingNew, which this check does not know/),
    ]);
  });
});
