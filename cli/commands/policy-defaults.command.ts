import { renderPolicyDefaults } from '@trellis/authz';
import { runCommand, type CommandSpec } from './args';

export const POLICY_DEFAULTS_COMMAND: CommandSpec = {
  name: 'policy-defaults',
  summary: 'Print the default API policy rules as YAML, for TRELLIS_POLICY_FILE.',
  options: {},
};

/**
 * `trellis policy-defaults`: the default API policy rules as a policy file (YAML), each under a
 * comment saying what it guards, as oslopolicy-sample-generator prints them. Copy the rules to
 * change into the file TRELLIS_POLICY_FILE names.
 */
export function runPolicyDefaults(args: string[]): Promise<number> {
  return runCommand(POLICY_DEFAULTS_COMMAND, args, async () => {
    process.stdout.write(renderPolicyDefaults());
    return 0;
  });
}
