import { execFile } from 'node:child_process';
import { accessSync, constants, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';

const INSTALL_HINT =
  'install python3-openstackclient and python3-senlinclient ' +
  '(DEBIAN_FRONTEND=noninteractive apt-get install -y python3-openstackclient python3-senlinclient)';

/** Where `openstack` is on PATH; throws, saying what to install, when it is not there. */
export function locateOpenStackCli(path = process.env.PATH ?? ''): string {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, 'openstack');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      continue;
    }
  }
  throw new Error(`The 'openstack' command is not on PATH: ${INSTALL_HINT}.`);
}

export interface KeystoneUser {
  authUrl: string;
  username: string;
  password: string;
  project: string;
  region?: string;
}

export class OpenStackCliError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | string | null,
    readonly stdout: string,
    readonly stderr: string,
  ) {
    const hint = /Unknown command|is not an openstack command/i.test(stderr) ? ` (is python3-senlinclient installed? ${INSTALL_HINT})` : '';
    super(`openstack ${args.join(' ')} exited with ${exitCode}${hint}\n${stderr.trim() || stdout.trim()}`);
    this.name = 'OpenStackCliError';
  }
}

/**
 * Runs the real `openstack` command as a user would, authenticated through Keystone v3 with
 * password credentials. The environment is built from scratch so a developer's own OS_* variables
 * or clouds.yaml cannot point it at another cloud.
 */
export class OpenStackCli {
  private readonly env: NodeJS.ProcessEnv;

  constructor(
    private readonly binary: string,
    user: KeystoneUser,
    private readonly timeoutMs = 60_000,
  ) {
    this.env = {
      PATH: process.env.PATH,
      HOME: mkdtempSync(join(tmpdir(), 'trellis-openstack-cli-')),
      LANG: 'C.UTF-8',
      OS_AUTH_URL: user.authUrl,
      OS_USERNAME: user.username,
      OS_PASSWORD: user.password,
      OS_PROJECT_NAME: user.project,
      OS_USER_DOMAIN_NAME: 'Default',
      OS_PROJECT_DOMAIN_NAME: 'Default',
      OS_IDENTITY_API_VERSION: '3',
      OS_REGION_NAME: user.region ?? 'RegionOne',
    };
  }

  /** stdout of `openstack <args>`; rejects with OpenStackCliError on a non-zero exit. */
  run(args: readonly string[], cwd?: string): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(this.binary, [...args], { env: this.env, cwd, timeout: this.timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new OpenStackCliError(args, error.code ?? error.signal ?? null, stdout, stderr));
        else resolve(stdout);
      });
    });
  }

  /** `openstack <args> -f json`, parsed. */
  async json<T = any>(args: readonly string[], cwd?: string): Promise<T> {
    const out = await this.run([...args, '-f', 'json'], cwd);
    try {
      return JSON.parse(out) as T;
    } catch {
      throw new Error(`openstack ${args.join(' ')} -f json printed no JSON:\n${out}`);
    }
  }
}

/**
 * The action id senlinclient prints for an asynchronous operation: `Request accepted by action:
 * <id>` (expand, shrink, resize, policy attach/detach/binding update) or `<name>: accepted by
 * action <id>` (cluster and node delete).
 */
export function acceptedActionId(output: string): string {
  const m = /accepted by action:? ([0-9a-f-]{36})/i.exec(output);
  if (!m) throw new Error(`no 'accepted by action' line in the CLI output:\n${output}`);
  return m[1];
}

