import { readFile } from 'node:fs/promises';
import { PolicyRegistry, evaluate, type EvaluationInput } from '@trellis/policies';
import { loadPolicyPlugins } from '@trellis/runtime/policy-plugins';
import { loadConfig } from '@trellis/common';
import { runCommand, type CommandSpec } from './args';

async function readAll(source: string): Promise<string> {
  if (source !== '-') return readFile(source, 'utf8');
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export const EVALUATE_COMMAND: CommandSpec = {
  name: 'evaluate',
  summary: 'Evaluate a decision snapshot (JSON, a file or - for stdin) and print the result as JSON.',
  positionals: { usage: 'FILE|-', min: 1, max: 1 },
  options: {},
  notes: ['The snapshot format: libs/policies/README.md.'],
};

/** `trellis evaluate FILE|-`: the decision for one snapshot, as JSON on stdout. */
export function runEvaluate(args: string[]): Promise<number> {
  return runCommand(EVALUATE_COMMAND, args, async ({ positionals: [source] }) => {
    let input: unknown;
    try {
      input = JSON.parse(await readAll(source));
    } catch (e) {
      process.stderr.write(`trellis evaluate: ${source} is not valid JSON: ${(e as Error).message}\n`);
      return 2;
    }
    const registry = PolicyRegistry.withBuiltins();
    loadPolicyPlugins(registry, loadConfig().engine.plugins);
    const snapshot = input as EvaluationInput;
    const output = evaluate(snapshot, { registry, now: snapshot.now ?? Date.now() });
    process.stdout.write(JSON.stringify(output, null, 2) + '\n');
    return 0;
  });
}
