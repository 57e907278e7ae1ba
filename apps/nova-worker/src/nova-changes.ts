import type { Server } from '@trellis/nova';

/**
 * Lists by Nova's `changes-since` (the build poller's and the drift survey's): how far back to ask
 * so that no change since a previous list is missed, whatever the two clocks say. Nova's hosts write
 * `updated_at` on their own clocks, in whole seconds: CHANGES_SLACK_MS covers that.
 */
export const CHANGES_SLACK_MS = 1_000;

/** The newest `updated` of `servers` in epoch ms (Nova's clock), NaN when none has a readable one. */
export function newestUpdate(servers: readonly Server[]): number {
  let newest = NaN;
  for (const s of servers) {
    const t = s.updated ? Date.parse(s.updated.endsWith('Z') || /[+-]\d\d:?\d\d$/.test(s.updated) ? s.updated : `${s.updated}Z`) : NaN;
    if (Number.isFinite(t) && !(t <= newest)) newest = t;
  }
  return newest;
}

/**
 * The `changes-since` (epoch ms) that misses nothing Nova changed since a list asked for at `at`
 * (this worker's clock), given `offset`, at most Nova's clock less this worker's (the newest
 * `updated` a list showed, less when it was seen).
 */
export function changedSince(at: number, offset: number): number {
  return at + offset - CHANGES_SLACK_MS;
}
