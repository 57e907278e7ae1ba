import 'reflect-metadata';
import { errorMessage } from '@trellis/common';
import { runEvaluate } from './commands/evaluate.command';
import { runPolicyDefaults } from './commands/policy-defaults.command';
import { runReplay } from './commands/replay.command';
import { runStart } from './commands/start.command';
import { runToken } from './commands/token.command';

const USAGE = `usage: trellis <command> [options]

commands:
  start                      run gateway, policy-engine, nova-worker (and the Nova simulator
                             unless OS_AUTH_URL/OS_CLOUD is set) in one process
  replay [options]           re-publish stuck actions and dead-lettered messages
      --action ID            only this action (repeatable)
      --older-than SECONDS   READY/RUNNING actions idle this long (default: TRELLIS_LEASE_SECONDS)
      --no-dead-letters      leave the dead-letter queues alone
      --decisions [--since T]
                             re-evaluate stored decisions with the current code and report
                             every one that would now differ
  evaluate FILE|-            evaluate a decision snapshot (JSON) and print the result
  token                      print a Keystone token for the demo user (or OS_* credentials)
  policy-defaults            print the default API policy rules as YAML, for TRELLIS_POLICY_FILE

Configuration comes from the environment; see README.md.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  switch (command) {
    case 'start':
      return runStart(args);
    case 'replay':
      return runReplay(args);
    case 'evaluate':
      return runEvaluate(args);
    case 'token':
      return runToken(args);
    case 'policy-defaults':
      return runPolicyDefaults(args);
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(USAGE + '\n');
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`trellis: unknown command '${command}'\n${USAGE}\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== -1) process.exitCode = code;
  },
  (e) => {
    process.stderr.write(`trellis: ${errorMessage(e)}\n`);
    process.exit(1);
  },
);
