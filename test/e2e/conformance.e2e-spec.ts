import { readFileSync, readdirSync, writeFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEvaluate } from '../../cli/commands/evaluate.command';

/**
 * The conformance suite derived from Senlin's behaviour (senlin-behaviour.md §5.4's worked
 * examples and more): every case is a snapshot in the public evaluation format, run through
 * `trellis evaluate`, whose JSON output must contain what the case expects.
 */
const dir = join(__dirname, '..', 'conformance');
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as { name: string; source: string; input: unknown; expect: unknown });

async function trellisEvaluate(input: unknown): Promise<{ code: number; output: unknown }> {
  const file = join(mkdtempSync(join(tmpdir(), 'trellis-eval-')), 'snapshot.json');
  writeFileSync(file, JSON.stringify(input));
  const chunks: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array) => (chunks.push(String(chunk)), true)) as typeof process.stdout.write;
  try {
    const code = await runEvaluate([file]);
    return { code, output: JSON.parse(chunks.join('')) };
  } finally {
    process.stdout.write = write;
  }
}

describe('conformance: trellis evaluate answers Senlin\'s worked examples', () => {
  it('has cases', () => expect(cases.length).toBeGreaterThanOrEqual(11));

  it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const { code, output } = await trellisEvaluate(c.input);
    expect(code).toBe(0);
    expect(output).toMatchObject(c.expect as object);
    // zone plans must match exactly, not just contain the expected zones
    const want = (c.expect as { data?: Record<string, { zones?: unknown }> }).data ?? {};
    const got = (output as { data: Record<string, { zones?: unknown }> }).data;
    for (const key of ['creation', 'deletion']) if (want[key]?.zones) expect(got[key].zones).toEqual(want[key].zones);
  });
});
