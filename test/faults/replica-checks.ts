/**
 * What the replica test (test/integration/replicas.int-spec.ts) checks beyond the fault suite's
 * invariants: each action decided by exactly one engine, each work order applied by one worker,
 * and no two actions of one cluster RUNNING at once.
 */

/** An action as the database holds it after the run. */
export interface ActionRun {
  id: string;
  cluster_id: string | null;
  action: string;
  status: string;
  /** the engine instance (TRELLIS_INSTANCE_ID) that decided it */
  owner: string | null;
  /** times an engine decided it: a decision commits with this count raised, in one transaction */
  attempts: number;
  /** decision rows stored for it */
  decisions: number;
  /** epoch seconds */
  start_time: number | null;
  end_time: number | null;
}

export interface Claims {
  /** per instance id, how many actions (engines) or work orders (workers) it took */
  perInstance: Record<string, number>;
  violations: Array<{ action_id: string; why: string }>;
}

/** The JSON log lines of a service with this `msg` that name an action. */
function logged(log: string, msg: string): Array<Record<string, unknown> & { action_id: string }> {
  const out: Array<Record<string, unknown> & { action_id: string }> = [];
  for (const line of log.split('\n')) {
    if (!line.includes(msg)) continue;
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      if (entry.msg === msg && typeof entry.action_id === 'string') out.push(entry as Record<string, unknown> & { action_id: string });
    } catch {
      /* a line cut short by SIGKILL */
    }
  }
  return out;
}

/**
 * Exactly one engine per action, seen twice: in the database (one decision row, decided once,
 * `owner` one of the engines), and in the engines' logs (one engine logged deciding it: an
 * `action handled` line whose outcome is `ordered` or `finished`). `logs` maps each engine
 * instance id to everything it logged.
 */
export function engineClaims(runs: ActionRun[], logs: Record<string, string>): Claims {
  const perInstance: Record<string, number> = {};
  const violations: Claims['violations'] = [];
  const deciders = new Map<string, Set<string>>();
  for (const [instance, log] of Object.entries(logs)) {
    for (const e of logged(log, 'action handled')) {
      if (e.kind !== 'ordered' && e.kind !== 'finished') continue;
      deciders.set(e.action_id, (deciders.get(e.action_id) ?? new Set()).add(instance));
    }
  }
  for (const r of runs) {
    if (r.owner === null || !(r.owner in logs)) violations.push({ action_id: r.id, why: `owner ${r.owner} is not one of the engines` });
    else perInstance[r.owner] = (perInstance[r.owner] ?? 0) + 1;
    if (r.attempts !== 1) violations.push({ action_id: r.id, why: `decided ${r.attempts} times` });
    if (r.decisions !== 1) violations.push({ action_id: r.id, why: `${r.decisions} decision rows` });
    const by = [...(deciders.get(r.id) ?? [])];
    if (by.length > 1) violations.push({ action_id: r.id, why: `engines ${by.join(', ')} each logged deciding it` });
    // a decision committed by an engine killed before it could log it leaves no line: the database tells
    if (by.length === 1 && r.owner !== by[0]) violations.push({ action_id: r.id, why: `owner ${r.owner} but ${by[0]} logged deciding it` });
  }
  return { perInstance, violations };
}

/**
 * One worker per work order: the instances that logged `work order applied` for it. Two are
 * allowed only when all but the last of them were killed: a worker SIGKILLed with an order in hand
 * leaves it to another once its lease runs out (a takeover, listed apart).
 */
export function workerClaims(logs: Record<string, string>, killed: readonly string[]): Claims & { takeovers: Array<{ action_id: string; by: string[] }> } {
  const perInstance: Record<string, number> = {};
  const appliers = new Map<string, string[]>();
  for (const [instance, log] of Object.entries(logs)) {
    for (const e of logged(log, 'work order applied')) {
      appliers.set(e.action_id, [...(appliers.get(e.action_id) ?? []), instance]);
      perInstance[instance] = (perInstance[instance] ?? 0) + 1;
    }
  }
  const violations: Claims['violations'] = [];
  const takeovers: Array<{ action_id: string; by: string[] }> = [];
  for (const [action, by] of appliers) {
    const live = by.filter((i) => !killed.includes(i));
    if (live.length > 1) violations.push({ action_id: action, why: `workers ${by.join(', ')} each applied it` });
    else if (by.length > 1) takeovers.push({ action_id: action, by });
  }
  return { perInstance, violations, takeovers };
}

/** Pairs of actions of one cluster whose RUNNING intervals (start_time to end_time) overlap. */
export function overlappingRuns(runs: ActionRun[]): Array<{ cluster: string; first: string; second: string }> {
  const byCluster = new Map<string, ActionRun[]>();
  for (const r of runs) {
    if (r.cluster_id === null || r.start_time === null) continue;
    byCluster.set(r.cluster_id, [...(byCluster.get(r.cluster_id) ?? []), r]);
  }
  const out: Array<{ cluster: string; first: string; second: string }> = [];
  for (const [cluster, list] of byCluster) {
    list.sort((a, b) => a.start_time! - b.start_time!);
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1];
      // an action still running has no end: anything after its start overlaps it
      if (prev.end_time === null || list[i].start_time! < prev.end_time) out.push({ cluster, first: prev.id, second: list[i].id });
    }
  }
  return out;
}
