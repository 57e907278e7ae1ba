import { pyInt, pyNumber } from '../schema/schema';
import { pyStr } from '../schema/py-format';
import { ActionData } from '../framework/types';

/** senlin/common/scaleutils.py with decisions 14 and 15. */
export const EXACT_CAPACITY = 'EXACT_CAPACITY';
export const CHANGE_IN_CAPACITY = 'CHANGE_IN_CAPACITY';
export const CHANGE_IN_PERCENTAGE = 'CHANGE_IN_PERCENTAGE';
export const ADJUSTMENT_TYPES = [EXACT_CAPACITY, CHANGE_IN_CAPACITY, CHANGE_IN_PERCENTAGE] as const;
export type AdjustmentType = (typeof ADJUSTMENT_TYPES)[number];

export const DEFAULT_MAX_NODES_PER_CLUSTER = 1000;
/** The largest max_nodes_per_cluster a deployment may set (TRELLIS_MAX_NODES_PER_CLUSTER) or an input may say. */
export const MAX_MAX_NODES_PER_CLUSTER = 1_000_000;

/** The cluster sizes the size checks compare against. */
export interface ClusterSizes {
  min_size: number;
  /** -1: unlimited */
  max_size: number;
  desired_capacity: number;
}

/** §3.1. A 0 % change is no change whatever min_step says (decision 15). */
export function calculateDesired(current: number, type: string, number: number, minStep: number | null | undefined): number {
  if (type === EXACT_CAPACITY) return number;
  if (type === CHANGE_IN_CAPACITY) return current + number;
  const delta = (number * current) / 100.0;
  if (delta === 0) return current;
  let rounded: number;
  if (delta > 0) rounded = Math.abs(delta) < 1 ? Math.ceil(delta) : Math.floor(delta);
  else rounded = Math.abs(delta) < 1 ? Math.floor(delta) : Math.ceil(delta);
  if (minStep !== null && minStep !== undefined && minStep > Math.abs(rounded)) {
    return current + (rounded > 0 ? minStep : -minStep);
  }
  return current + rounded;
}

/** §3.2: only used when strict is false. A max of 0 never truncates. */
export function truncateDesired(cluster: ClusterSizes, desired: number, minSize: number | null, maxSize: number | null): number {
  if (minSize !== null && desired < minSize) desired = minSize;
  else if (minSize === null && desired < cluster.min_size) desired = cluster.min_size;
  if (maxSize !== null && maxSize > 0 && desired > maxSize) desired = maxSize;
  else if (maxSize === null && desired > cluster.max_size && cluster.max_size > 0) desired = cluster.max_size;
  return desired;
}

/** §3.3: the first failing rule's message, or null. */
export function checkSizeParams(
  cluster: ClusterSizes,
  desired: number | null,
  minSize: number | null = null,
  maxSize: number | null = null,
  strict = false,
  maxNodesPerCluster = DEFAULT_MAX_NODES_PER_CLUSTER,
): string | null {
  const d = desired === null ? '' : pyStr(desired);
  if (desired !== null) {
    if (desired > maxNodesPerCluster) {
      return `The target capacity (${d}) is greater than the maximum number of nodes allowed per cluster (${maxNodesPerCluster}).`;
    }
    if (minSize !== null && desired < minSize) return `The target capacity (${d}) is less than the specified min_size (${minSize}).`;
    if (minSize === null && strict && desired < cluster.min_size) {
      return `The target capacity (${d}) is less than the cluster's min_size (${cluster.min_size}).`;
    }
    if (maxSize !== null && maxSize >= 0 && desired > maxSize) {
      return `The target capacity (${d}) is greater than the specified max_size (${maxSize}).`;
    }
    if (maxSize === null && strict && cluster.max_size >= 0 && desired > cluster.max_size) {
      return `The target capacity (${d}) is greater than the cluster's max_size (${cluster.max_size}).`;
    }
  }
  if (minSize !== null) {
    if (maxSize !== null && maxSize >= 0 && minSize > maxSize) {
      return `The specified min_size (${minSize}) is greater than the specified max_size (${maxSize}).`;
    }
    if (maxSize === null && cluster.max_size >= 0 && minSize > cluster.max_size) {
      return `The specified min_size (${minSize}) is greater than the current max_size (${cluster.max_size}) of the cluster.`;
    }
    if (desired === null && strict && minSize > cluster.desired_capacity) {
      return `The specified min_size (${minSize}) is greater than the current desired_capacity (${cluster.desired_capacity}) of the cluster.`;
    }
  }
  if (maxSize !== null) {
    if (maxSize > maxNodesPerCluster) {
      return `The specified max_size (${maxSize}) is greater than the maximum number of nodes allowed per cluster (${maxNodesPerCluster}).`;
    }
    if (minSize === null && maxSize >= 0 && maxSize < cluster.min_size) {
      return `The specified max_size (${maxSize}) is less than the current min_size (${cluster.min_size}) of the cluster.`;
    }
    if (desired === null && strict && maxSize >= 0 && maxSize < cluster.desired_capacity) {
      return `The specified max_size (${maxSize}) is less than the current desired_capacity (${cluster.desired_capacity}) of the cluster.`;
    }
  }
  return null;
}

/** The resize inputs as the API stores them on a CLUSTER_RESIZE action. */
export interface ResizeParams {
  adjustment_type: string | null;
  number: number | null;
  min_size: number | null;
  max_size: number | null;
  min_step: number | null;
  strict: boolean;
}

/** Reads the six resize inputs, accepting the numeric strings the API may have stored. */
export function readResizeParams(inputs: Record<string, unknown>): ResizeParams {
  const num = (v: unknown) => (v === null || v === undefined ? null : (pyNumber(v) ?? null));
  const int = (v: unknown) => (v === null || v === undefined ? null : (pyInt(v) ?? null));
  const type = inputs.adjustment_type;
  return {
    adjustment_type: type === null || type === undefined ? null : String(type),
    number: num(inputs.number),
    min_size: int(inputs.min_size),
    max_size: int(inputs.max_size),
    min_step: int(inputs.min_step),
    strict: inputs.strict === true || inputs.strict === 'true' || inputs.strict === 'True',
  };
}

export type ResizeResult = { ok: true } | { ok: false; reason: string };

/**
 * §3.4 parse_resize_params: on success writes `data.deletion = {count}` (shrink) or
 * `data.creation = {count}` (grow or same size), replacing what was there. A current size of 0 is 0
 * (decision 14).
 */
export function parseResizeParams(
  inputs: Record<string, unknown>,
  data: ActionData,
  cluster: ClusterSizes,
  current: number,
  maxNodesPerCluster = DEFAULT_MAX_NODES_PER_CLUSTER,
): ResizeResult {
  const p = readResizeParams(inputs);
  let desired = p.adjustment_type !== null ? calculateDesired(current, p.adjustment_type, p.number ?? 0, p.min_step) : current;
  if (!p.strict) desired = truncateDesired(cluster, desired, p.min_size, p.max_size);
  const error = checkSizeParams(cluster, desired, p.min_size, p.max_size, p.strict, maxNodesPerCluster);
  if (error) return { ok: false, reason: error };
  const count = current - desired;
  if (count > 0) data.deletion = { count };
  else data.creation = { count: Math.abs(count) };
  return { ok: true };
}

/**
 * The gateway's synchronous resize check (senlin-api.md §5.5), strict by default. Returns the
 * 400 message or null. `nodeCount` is the cluster's current number of nodes.
 */
export function checkResizeRequest(
  cluster: ClusterSizes,
  nodeCount: number,
  params: Partial<ResizeParams>,
  maxNodesPerCluster = DEFAULT_MAX_NODES_PER_CLUSTER,
): string | null {
  const error = checkResizeParams(params);
  if (error) return error;
  const type = params.adjustment_type ?? null;
  const desired = type !== null ? calculateDesired(nodeCount, type, params.number as number, params.min_step ?? null) : null;
  return checkSizeParams(cluster, desired, params.min_size ?? null, params.max_size ?? null, params.strict ?? true, maxNodesPerCluster);
}

/**
 * The checks of a resize request that need no cluster, made before the cluster is looked up (as
 * Senlin's conductor did): the 400 message or null.
 */
export function checkResizeParams(params: Partial<ResizeParams>): string | null {
  const type = params.adjustment_type ?? null;
  const number = params.number ?? null;
  const minSize = params.min_size ?? null;
  const maxSize = params.max_size ?? null;
  if (type === null && number === null && minSize === null && maxSize === null) return 'Not enough parameters to do resize action.';
  if (type !== null && number === null) return 'Missing number value for size adjustment.';
  if (number !== null && type === null) return 'Missing adjustment_type value for size adjustment.';
  if (minSize !== null && maxSize !== null && maxSize > 0 && minSize > maxSize) {
    return `The specified min_size (${minSize}) is greater than the specified max_size (${maxSize}).`;
  }
  if (type === EXACT_CAPACITY && number !== null && number < 0) {
    return `The 'number' must be non-negative integer for adjustment type '${EXACT_CAPACITY}'.`;
  }
  return null;
}

/**
 * The gateway's synchronous scale_out / scale_in check (senlin-api.md §5.5): count 0 is refused and
 * the new desired capacity gets the non-strict size check. `count` null means the request had none.
 */
export function checkScaleRequest(
  cluster: ClusterSizes,
  action: 'CLUSTER_SCALE_OUT' | 'CLUSTER_SCALE_IN',
  count: number | null,
  maxNodesPerCluster = DEFAULT_MAX_NODES_PER_CLUSTER,
): string | null {
  const out = action === 'CLUSTER_SCALE_OUT';
  if (count === 0) return `Count for ${out ? 'scale-out' : 'scale-in'} request cannot be 0.`;
  if (count === null) return null;
  const desired = out ? cluster.desired_capacity + count : cluster.desired_capacity - count;
  return checkSizeParams(cluster, desired, null, null, false, maxNodesPerCluster);
}
