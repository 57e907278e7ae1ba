import { DEFAULT_RULES, parsePolicyFile } from '@trellis/authz';
import { runPolicyDefaults } from './policy-defaults.command';

describe('trellis policy-defaults', () => {
  let out: string;
  let write: jest.SpyInstance;

  beforeEach(() => {
    out = '';
    write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => ((out += String(chunk)), true));
  });
  afterEach(() => write.mockRestore());

  it('prints every default rule as a loadable policy file, commented', async () => {
    expect(await runPolicyDefaults([])).toBe(0);
    expect(parsePolicyFile(out, 'stdout')).toEqual(Object.fromEntries(DEFAULT_RULES.map((r) => [r.name, r.check])));
    expect(out).toContain('# Announce a READY or RUNNING action again, in any project.\n# POST   /v1/actions/{action_id}/replay\n"actions:replay": "rule:cloud_admin"');
  });

  it('refuses arguments', async () => {
    const err = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    expect(await runPolicyDefaults(['--json'])).toBe(2);
    err.mockRestore();
  });
});
