import { loadConfig, usesSimulator } from '@trellis/common';
import { issueToken } from '@trellis/nova';
import { runCommand, type CommandSpec } from './args';

export const TOKEN_COMMAND: CommandSpec = {
  name: 'token',
  summary: 'Print a Keystone token: the demo user of the built-in simulator, or the OS_* credentials when a cloud is set.',
  options: {},
};

/**
 * `trellis token`: a Keystone token for scripts and curl. With a cloud configured it uses the OS_*
 * credentials; otherwise the demo user of the running embedded default's simulator.
 */
export function runToken(args: string[]): Promise<number> {
  return runCommand(TOKEN_COMMAND, args, printToken);
}

async function printToken(): Promise<number> {
  const config = loadConfig();
  const settings = usesSimulator(config)
    ? {
        ...config.openstack,
        authUrl: `http://${config.simulator.host}:${config.simulator.port}/identity/v3`,
        username: 'demo',
        password: config.simulator.demoPassword,
        projectName: 'demo',
        userDomainName: 'Default',
        projectDomainName: 'Default',
      }
    : config.openstack;
  process.stdout.write((await issueToken(settings)) + '\n');
  return 0;
}
