import { renderPolicyDefaults } from '@trellis/authz';

/**
 * `trellis policy-defaults`: the default API policy rules as a policy file (YAML), each under a
 * comment saying what it guards, as oslopolicy-sample-generator prints them. Copy the rules to
 * change into the file TRELLIS_POLICY_FILE names.
 */
export async function runPolicyDefaults(args: string[]): Promise<number> {
  if (args.length > 0) {
    process.stderr.write(`trellis policy-defaults: takes no arguments, got '${args.join(' ')}'\n`);
    return 2;
  }
  process.stdout.write(renderPolicyDefaults());
  return 0;
}
