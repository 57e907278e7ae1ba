import { NodeSnapshot } from '../framework/types';
import { RandomSource, randrange } from '../framework/random';

/** Victim selection (senlin-behaviour §3.5); results are node ids. */

/** Bad nodes (ERROR, WARNING or tainted, then never created) in list order, and the good ones. */
export function filterErrorNodes(nodes: readonly NodeSnapshot[]): { bad: string[]; good: NodeSnapshot[] } {
  const bad: string[] = [];
  const notCreated: string[] = [];
  const good: NodeSnapshot[] = [];
  for (const n of nodes) {
    if (n.status === 'ERROR' || n.status === 'WARNING' || n.tainted === true) bad.push(n.id);
    else if (n.created_at === null || n.created_at === undefined) notCreated.push(n.id);
    else good.push(n);
  }
  for (const id of notCreated) bad.push(id);
  return { bad, good };
}

/**
 * Unlike Senlin (which crashed), asking for more nodes than there are returns all of them: the caller
 * sees a shorter list.
 */
export function nodesByRandom(nodes: readonly NodeSnapshot[], count: number, random: RandomSource): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  const selected = bad;
  const candidates = [...good];
  for (let i = count - bad.length; i > 0 && candidates.length > 0; i--) {
    const pick = randrange(random, candidates.length);
    selected.push(candidates[pick].id);
    candidates.splice(pick, 1);
  }
  return selected;
}

const time = (v: string | null | undefined): number => {
  const t = v ? Date.parse(v) : NaN;
  return Number.isNaN(t) ? 0 : t;
};

function byKey(nodes: NodeSnapshot[], key: (n: NodeSnapshot) => number): NodeSnapshot[] {
  return nodes
    .map((n, i) => ({ n, k: key(n), i }))
    .sort((a, b) => a.k - b.k || a.i - b.i)
    .map((e) => e.n);
}

/** Bad nodes first, then good nodes by created_at: oldest first or youngest first. */
export function nodesByAge(nodes: readonly NodeSnapshot[], count: number, oldFirst: boolean): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  const sorted = byKey(good, (n) => time(n.created_at));
  const result = bad;
  const wanted = Math.min(count - bad.length, sorted.length);
  for (let i = 0; i < wanted; i++) result.push(oldFirst ? sorted[i].id : sorted[sorted.length - 1 - i].id);
  return result;
}

/** Bad nodes first, then good nodes whose profile is oldest. */
export function nodesByProfileAge(nodes: readonly NodeSnapshot[], count: number): string[] {
  const { bad, good } = filterErrorNodes(nodes);
  if (count <= bad.length) return bad.slice(0, Math.max(0, count));
  const sorted = byKey(good, (n) => time(n.profile_created_at));
  const result = bad;
  const wanted = Math.min(count - bad.length, sorted.length);
  for (let i = 0; i < wanted; i++) result.push(sorted[i].id);
  return result;
}

/** The zone a node is in: the one it recorded, else the one Nova reports for its server. */
export function nodeZone(node: NodeSnapshot): string | undefined {
  const recorded = node.data?.placement?.zone;
  if (typeof recorded === 'string') return recorded;
  const reported = node.server?.availability_zone;
  return typeof reported === 'string' ? reported : undefined;
}
