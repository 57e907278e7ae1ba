import { BenchTable, Cell } from './benchmark';

function text(cell: Cell | undefined): string {
  if (cell === null || cell === undefined) return '-';
  if (typeof cell === 'boolean') return cell ? 'yes' : 'no';
  return String(cell);
}

/** A plain-text table with a title, aligned columns and footnotes. */
export function renderTable(table: BenchTable): string {
  const cells = table.rows.map((row) => table.columns.map((c) => text(row[c.key])));
  const widths = table.columns.map((c, j) => Math.max(c.label.length, ...cells.map((r) => r[j].length)));
  const right = table.columns.map((c) => (c.align ? c.align === 'right' : table.rows.some((r) => typeof r[c.key] === 'number')));
  const line = (values: string[]) =>
    values
      .map((v, j) => (right[j] ? v.padStart(widths[j]) : v.padEnd(widths[j])))
      .join('  ')
      .trimEnd();
  const out = [table.title, line(table.columns.map((c) => c.label)), widths.map((w) => '-'.repeat(w)).join('  ')];
  for (const r of cells) out.push(line(r));
  for (const note of table.footnotes ?? []) out.push(`  ${note}`);
  return out.join('\n');
}
