'use strict';
// A preload that counts the SQL statements a service sends through `pg`'s Client.query, by text,
// and how many were sent outside a transaction (each an autocommit of its own). Load it into the
// services a benchmark starts:
//   TRELLIS_COUNT_STATEMENTS_DIR=/tmp/stmts TRELLIS_BENCH_NODE_ARGS="-r ./bench/support/count-statements.cjs" \
//     npm run bench -- --only pipeline --param actions=300
// (the services' environment is not the benchmark's: without TRELLIS_COUNT_STATEMENTS_DIR, which
// only reaches a process started by hand, the counts go to /tmp/trellis-statement-counts).
// Each process writes <dir>/<entry>-<pid>.json when it exits: { total, begins, autocommit, texts: {text: n} }.
//   node bench/support/count-statements.cjs <dir> <actions> [top]
// sums them per service (per action) and lists each service's most frequent texts.
const fs = require('node:fs');
const path = require('node:path');

const dir = process.env.TRELLIS_COUNT_STATEMENTS_DIR || '/tmp/trellis-statement-counts';
if (require.main === module) {
  const [from, actionsArg, topArg] = process.argv.slice(2);
  const actions = Number(actionsArg);
  if (!from || !(actions > 0)) throw new Error('usage: node count-statements.cjs <dir> <actions> [top]');
  const per = (n) => Math.round((n / actions) * 100) / 100;
  const byEntry = new Map();
  for (const file of fs.readdirSync(from).filter((f) => f.endsWith('.json'))) {
    const c = JSON.parse(fs.readFileSync(path.join(from, file), 'utf8'));
    const sum = byEntry.get(c.entry) ?? { total: 0, begins: 0, autocommit: 0, texts: {} };
    sum.total += c.total;
    sum.begins += c.begins;
    sum.autocommit += c.autocommit;
    for (const [t, n] of Object.entries(c.texts)) sum.texts[t] = (sum.texts[t] ?? 0) + n;
    byEntry.set(c.entry, sum);
  }
  for (const [entry, s] of byEntry) {
    console.log(`${entry}: ${per(s.total)} statements, ${per(s.begins)} BEGIN, ${per(s.autocommit)} autocommit, ${per(s.begins + s.autocommit)} commits per action`);
    const top = Object.entries(s.texts).sort((a, b) => b[1] - a[1]).slice(0, Number(topArg) || 12);
    for (const [t, n] of top) console.log(`  ${String(per(n)).padStart(6)}  ${t}`);
  }
} else {
  const { Client } = require(require.resolve('pg', { paths: [process.cwd()] }));
  const texts = new Map();
  let total = 0;
  let begins = 0;
  let autocommit = 0;
  const inTxn = new WeakSet();
  const original = Client.prototype.query;
  Client.prototype.query = function countedQuery(config, ...rest) {
    const text = typeof config === 'string' ? config : config && typeof config.text === 'string' ? config.text : null;
    if (text !== null) {
      const key = text.replace(/\s+/g, ' ').trim().slice(0, 160);
      texts.set(key, (texts.get(key) ?? 0) + 1);
      total++;
      const head = key.slice(0, 20).toUpperCase();
      if (head.startsWith('BEGIN') || head.startsWith('START TRANSACTION')) {
        begins++;
        inTxn.add(this);
      } else if (head.startsWith('COMMIT') || head.startsWith('ROLLBACK')) {
        inTxn.delete(this);
      } else if (!inTxn.has(this)) {
        autocommit++;
      }
    }
    return original.call(this, config, ...rest);
  };
  const entry = path.basename(path.dirname(path.dirname(process.argv[1] ?? 'unknown')));
  process.on('exit', () => {
    fs.mkdirSync(dir, { recursive: true });
    const sorted = Object.fromEntries([...texts.entries()].sort((a, b) => b[1] - a[1]));
    fs.writeFileSync(path.join(dir, `${entry}-${process.pid}.json`), JSON.stringify({ entry, total, begins, autocommit, texts: sorted }, null, 1));
  });
}
