import { loadConfig, usesSimulator } from '@trellis/common';
import { issueToken } from '@trellis/nova';

/**
 * `trellis token`: a Keystone token for scripts and curl. With a cloud configured it uses the OS_*
 * credentials; otherwise the demo user of the running embedded default's simulator.
 */
export async function runToken(_args: string[]): Promise<number> {
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
