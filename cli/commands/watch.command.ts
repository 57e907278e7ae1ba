import { API_TARGET_OPTIONS, apiTarget } from './api-target';
import { runCommand, stringOption, UsageError, type CommandSpec, type ParsedCommand } from './args';
import { watchAction } from './action-watch';
import { TrellisApi } from './trellis-api';

export const WATCH_COMMAND: CommandSpec = {
  name: 'watch',
  summary: "Follow an action until it ends: the nodes its decision planned, how many are ACTIVE and in ERROR, then its result.",
  positionals: { usage: 'ACTION_ID', min: 1, max: 1 },
  options: {
    ...API_TARGET_OPTIONS,
    interval: { type: 'string', value: 'MS', help: 'how often to look, in milliseconds (default 1000)' },
  },
  notes: [
    'On a terminal a progress bar is redrawn in place; otherwise (a pipe, a log file) one line is written',
    'each time the status or the counts change. Exit status 0 when the action SUCCEEDED, 1 otherwise.',
  ],
};

export function runWatch(args: string[]): Promise<number> {
  return runCommand(WATCH_COMMAND, args, watch);
}

async function watch(parsed: ParsedCommand): Promise<number> {
  const interval = stringOption(parsed, 'interval');
  const intervalMs = interval === undefined ? 1000 : Number(interval);
  if (!Number.isInteger(intervalMs) || intervalMs < 50) throw new UsageError(`--interval must be a whole number of milliseconds, at least 50 (got '${interval}')`);
  const api = new TrellisApi(await apiTarget(parsed));
  const action = await watchAction(api, parsed.positionals[0], { out: process.stdout, intervalMs });
  return action.status === 'SUCCEEDED' ? 0 : 1;
}
