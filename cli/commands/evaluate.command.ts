import { readFile } from 'node:fs/promises';
import { PolicyRegistry, evaluate, loadPolicyPlugins } from '@trellis/policies';
import { loadConfig } from '@trellis/common';
import { parseArgs } from './args';

async function readAll(source: string): Promise<string> {
  if (source !== '-') return readFile(source, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** `trellis evaluate FILE|-`: the decision for one snapshot, as JSON on stdout. */
export async function runEvaluate(args: string[]): Promise<number> {
  const { positional } = parseArgs(args);
  if (positional.length !== 1) {
    process.stderr.write('usage: trellis evaluate FILE|-   (a snapshot document, see README "Evaluating a snapshot")\n');
    return 2;
  }
  let input: unknown;
  try {
    input = JSON.parse(await readAll(positional[0]));
  } catch (e) {
    process.stderr.write(`trellis evaluate: ${positional[0]} is not valid JSON: ${(e as Error).message}\n`);
    return 2;
  }
  const registry = PolicyRegistry.withBuiltins();
  loadPolicyPlugins(registry, loadConfig().engine.plugins);
  const output = evaluate(input as never, { registry });
  process.stdout.write(JSON.stringify(output, null, 2) + '\n');
  return 0;
}
