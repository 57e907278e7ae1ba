import { loadConfig, usesSimulator, type TrellisConfig } from '@trellis/common';
import { issueToken } from '@trellis/identity';
import { runCommand, stringOption, UsageError, type CommandSpec, type ParsedCommand } from './args';
import { readRunningInstance } from './running-instance';

/** The built-in Keystone's users: project, and which configured password is theirs. */
const SIMULATOR_USERS: Record<string, { project: string; password: (c: TrellisConfig) => string }> = {
  demo: { project: 'demo', password: (c) => c.simulator.demoPassword },
  alt_demo: { project: 'alt_demo', password: (c) => c.simulator.demoPassword },
  viewer: { project: 'demo', password: (c) => c.simulator.demoPassword },
  admin: { project: 'admin', password: (c) => c.simulator.adminPassword },
};

export const TOKEN_COMMAND: CommandSpec = {
  name: 'token',
  summary: 'Print a Keystone token: a user of the built-in simulator (demo by default), or the OS_* credentials when a cloud is set.',
  options: {
    user: { type: 'string', value: 'NAME', help: `the simulator's user: ${Object.keys(SIMULATOR_USERS).join(', ')} (default demo)` },
  },
  notes: [
    'With the simulator, the Keystone of the embedded default running from this directory is found through',
    "its data directory (TRELLIS_DATA_DIR, default ./data), whatever ports 'npm start' was given.",
  ],
};

/**
 * `trellis token`: a Keystone token for scripts and curl. With a cloud configured it uses the OS_*
 * credentials; otherwise a user of the running embedded default's simulator.
 */
export function runToken(args: string[]): Promise<number> {
  return runCommand(TOKEN_COMMAND, args, printToken);
}

async function printToken(parsed: ParsedCommand): Promise<number> {
  process.stdout.write((await tokenFor(loadConfig(), stringOption(parsed, 'user'))) + '\n');
  return 0;
}

/**
 * A token as `trellis token` prints it: the OS_* credentials with a cloud set; else a user of the
 * simulator of the embedded default running from this directory (demo when no user is named).
 */
export async function tokenFor(config: TrellisConfig, user: string | undefined): Promise<string> {
  if (!usesSimulator(config)) {
    if (user !== undefined) throw new UsageError('--user names a user of the built-in simulator; with a cloud set, the OS_* credentials are used');
    return issueToken(config.openstack);
  }
  const name = user ?? 'demo';
  const known = SIMULATOR_USERS[name];
  if (!known) throw new UsageError(`--user must be one of ${Object.keys(SIMULATOR_USERS).join(', ')} (got '${name}')`);
  const running = readRunningInstance(config.database.dataDir);
  return issueToken({
    ...config.openstack,
    authUrl: running?.auth_url ?? `http://${config.simulator.host}:${config.simulator.port}/identity/v3`,
    username: name,
    password: known.password(config),
    projectName: known.project,
    userDomainName: 'Default',
    projectDomainName: 'Default',
  });
}
