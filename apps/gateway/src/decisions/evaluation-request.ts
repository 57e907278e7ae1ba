import { badRequest } from '@trellis/common';
import type { EvaluationInput } from '@trellis/policies';
import { isMap } from '../shared/body';
import { FREE_MAP, ObjectBody, given } from '../shapes/request';

/**
 * Bounds of a POST /v1/evaluations body, far above what a real snapshot needs: Senlin's worked
 * examples (test/conformance) nest 7 levels (policies[0].spec.properties.zones[0].name) and hold
 * under 150 values; a node takes about 20 values, so the 1,000 nodes a cluster may have about 20,000.
 */
export const MAX_EVALUATION_DEPTH = 32;
export const MAX_EVALUATION_VALUES = 100_000;

const DECIDING_HOOKS = ['pre_op', 'post_op'];

/** The decision snapshot `trellis evaluate` reads (libs/policies EvaluationInput); its fields are evaluate()'s to judge. */
export const EvaluationRequest = new ObjectBody(
  'EvaluationRequest',
  {
    hook: given({ type: 'string', enum: ['pre_op', 'post_op', 'attach', 'detach'], default: 'pre_op' }),
    policies: given({
      type: 'array',
      items: { type: 'object', additionalProperties: true, required: ['spec'] },
      description: 'Policies to run: {id, name, spec, enabled, binding_id, attached_at, binding_data, last_op, priority}.',
    }),
    attached: given({ type: 'array', items: FREE_MAP, description: 'attach only: policies already attached.' }),
    cluster: given({ ...FREE_MAP, description: '{id, name, min_size, max_size, desired_capacity, profile, nodes}.' }),
    cloud: given({ ...FREE_MAP, nullable: true, description: 'Cloud facts: availability zones, hosts, server groups.' }),
    action: given({ ...FREE_MAP, example: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } }, description: 'Required for pre_op and post_op.' }),
    now: given({ type: 'string', format: 'date-time' }),
    seed: given({ type: 'integer', description: 'Seed for deterministic random choices and ids.' }),
  },
  { openKeys: true },
);

/** The table names exactly EvaluationInput's keys: a field added to or removed from one fails the build until the other follows. */
type SameKeys<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const documentsEvaluationInput: SameKeys<keyof typeof EvaluationRequest.fields, keyof EvaluationInput> = true;
void documentsEvaluationInput;

/**
 * The body of POST /v1/evaluations (and the `evaluation.create` RPC) as a snapshot worth
 * evaluating: a JSON object, within the bounds above, that names the action to decide (pre_op,
 * post_op) — the attach and detach hooks need their one policy instead, which evaluate() checks.
 * Field types inside are evaluate()'s to judge; it names the path of what it refuses.
 */
export function checkEvaluationRequest(body: unknown): EvaluationInput {
  if (!isMap(body)) throw badRequest('The evaluation request must be a JSON object (a decision snapshot).');
  checkBounds(body);
  const hook = body.hook ?? 'pre_op';
  if (typeof hook === 'string' && DECIDING_HOOKS.includes(hook)) {
    const action = body.action;
    if (!isMap(action) || typeof action.action !== 'string' || action.action === '') {
      throw badRequest(`action.action: a ${hook} evaluation needs the action to decide (e.g. "CLUSTER_SCALE_OUT")`);
    }
  }
  return body as EvaluationInput;
}

interface Visit {
  value: unknown;
  depth: number;
  parent: Visit | null;
  key: string | number | null;
}

/**
 * One walk over the body without recursion (a deep body must not exhaust the stack here either),
 * counting values and container depth; the path of a too-deep container is built only to name it.
 */
function checkBounds(root: object): void {
  const stack: Visit[] = [{ value: root, depth: 1, parent: null, key: null }];
  let values = 0;
  while (stack.length > 0) {
    const visit = stack.pop()!;
    if (++values > MAX_EVALUATION_VALUES) throw badRequest(`The evaluation request holds more than ${MAX_EVALUATION_VALUES} values.`);
    const { value, depth } = visit;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_EVALUATION_DEPTH) {
      throw badRequest(`The evaluation request is nested more than ${MAX_EVALUATION_DEPTH} levels deep at ${pathOf(visit)}.`);
    }
    if (Array.isArray(value)) value.forEach((v, i) => stack.push({ value: v, depth: depth + 1, parent: visit, key: i }));
    else for (const [k, v] of Object.entries(value)) stack.push({ value: v, depth: depth + 1, parent: visit, key: k });
  }
}

/** `action.inputs.a[0]`, as evaluate() names paths */
function pathOf(visit: Visit): string {
  const parts: string[] = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) parts.push(typeof v.key === 'number' ? `[${v.key}]` : `.${v.key}`);
  return parts.reverse().join('').replace(/^\./, '');
}
