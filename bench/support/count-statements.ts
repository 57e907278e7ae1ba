import * as fs from 'fs';
import * as path from 'path';

/**
 * A preload (`node -r`) that counts the SQL statements a service sends to PostgreSQL: every call of
 * `pg`'s `Client.query`, grouped by statement text (its first 120 characters, whitespace folded)
 * and by transaction (the texts from BEGIN to COMMIT or ROLLBACK on one connection). Written as
 * JSON to `dist/statements/<service>-<pid>.json` under the service's working directory (the
 * benchmarks start the services in the checkout) when the process exits;
 * `TRELLIS_COUNT_STATEMENTS_DIR` for another directory where the environment reaches the process. Load it into the services a benchmark starts with
 *
 *   TRELLIS_BENCH_NODE_ARGS="-r ./dist/bench/support/count-statements.js" npm run bench -- --only pipeline
 *
 * and read the files with `node dist/bench/support/count-statements.js dist/statements <actions>` (BENCHMARKS.md,
 * "pipeline: CPU per action"). Counting costs CPU: CPU figures of such a run are not comparable.
 */

interface Counts {
  service: string;
  pid: number;
  statements: number;
  begins: number;
  /** statements sent outside a transaction (each its own commit) */
  autocommit: number;
  byText: Record<string, number>;
  /** transaction shape (its statements' short texts joined by ' | ') → how many times */
  transactions: Record<string, number>;
}

const short = (text: string, n: number) => text.replace(/\s+/g, ' ').trim().slice(0, n);

function install(dir: string): void {
  // resolved from the service's own directory: the same module instance the service uses
  const pg = require(require.resolve('pg', { paths: [process.cwd()] })) as typeof import('pg');
  const service = /apps\/([^/]+)\//.exec(process.argv[1] ?? '')?.[1] ?? path.basename(process.argv[1] ?? 'node');
  const counts: Counts = { service, pid: process.pid, statements: 0, begins: 0, autocommit: 0, byText: {}, transactions: {} };
  const open = new WeakMap<object, string[]>();
  const original = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: object, ...args: unknown[]) {
    const first = args[0] as string | { text?: string } | undefined;
    const text = typeof first === 'string' ? first : (first?.text ?? '');
    const key = short(text, 120);
    counts.statements++;
    counts.byText[key] = (counts.byText[key] ?? 0) + 1;
    const upper = key.toUpperCase();
    const tx = open.get(this);
    if (upper.startsWith('BEGIN') || upper.startsWith('START TRANSACTION')) {
      counts.begins++;
      open.set(this, []);
    } else if (tx && (upper.startsWith('COMMIT') || upper.startsWith('ROLLBACK'))) {
      const shape = [...tx, upper.slice(0, 8)].join(' | ');
      counts.transactions[shape] = (counts.transactions[shape] ?? 0) + 1;
      open.delete(this);
    } else if (tx) tx.push(short(text, 50));
    else counts.autocommit++;
    return original.apply(this, args);
  } as typeof pg.Client.prototype.query;
  process.on('exit', () => {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `${service}-${process.pid}.json`), JSON.stringify(counts, null, 1));
  });
}

/** Sums the files of a directory per service and prints the top statements and transactions, per action when told how many. */
function report(dir: string, actions: number): void {
  const per = (n: number) => (actions > 0 ? (n / actions).toFixed(2) : String(n));
  const byService = new Map<string, Counts>();
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.json'))) {
    const c = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8')) as Counts;
    const into = byService.get(c.service) ?? { ...c, statements: 0, begins: 0, autocommit: 0, byText: {}, transactions: {} };
    into.statements += c.statements;
    into.begins += c.begins;
    into.autocommit += c.autocommit;
    for (const [k, v] of Object.entries(c.byText)) into.byText[k] = (into.byText[k] ?? 0) + v;
    for (const [k, v] of Object.entries(c.transactions)) into.transactions[k] = (into.transactions[k] ?? 0) + v;
    byService.set(c.service, into);
  }
  for (const c of byService.values()) {
    console.log(`\n== ${c.service}: ${per(c.statements)} statements, ${per(c.begins)} BEGIN, ${per(c.autocommit)} autocommit`);
    for (const [k, v] of Object.entries(c.byText).sort((a, b) => b[1] - a[1]).slice(0, 25)) console.log(`  ${per(v).padStart(7)}  ${k}`);
    console.log('  -- transactions');
    for (const [k, v] of Object.entries(c.transactions).sort((a, b) => b[1] - a[1]).slice(0, 12)) console.log(`  ${per(v).padStart(7)}  ${k}`);
  }
}

if (require.main === module) report(process.argv[2] ?? '.', Number(process.argv[3] ?? 0));
else install(process.env.TRELLIS_COUNT_STATEMENTS_DIR ?? path.join(process.cwd(), 'dist', 'statements'));
