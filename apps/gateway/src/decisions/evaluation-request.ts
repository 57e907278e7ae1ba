import { badRequest } from '@trellis/common';
import type { EvaluationInput } from '@trellis/policies';
import { isMap } from '../shared/body';
import { FREE_MAP, ObjectBody, given } from '../shapes/request';

/**
 * How many values a POST /v1/evaluations body may hold, far above what a real snapshot needs:
 * Senlin's worked examples (test/conformance) hold under 150 values; a node takes about 20 values,
 * so the 1,000 nodes a cluster may have about 20,000. Its depth is bounded as every body's is
 * (core/request-input.ts, MAX_BODY_DEPTH), before it gets here.
 */
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
      description:
        "Policies to run: {id, name, spec, enabled, binding_id, attached_at, binding_data, last_op, priority}. A stored decision's input also has spec_digest (the engine's loader's), which is ignored here.",
    }),
    attached: given({ type: 'array', items: FREE_MAP, description: 'attach only: policies already attached.' }),
    cluster: given({ ...FREE_MAP, description: '{id, name, min_size, max_size, desired_capacity, profile, nodes}.' }),
    cloud: given({ ...FREE_MAP, nullable: true, description: 'Cloud facts: availability zones, hosts, server groups.' }),
    action: given({ ...FREE_MAP, example: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 } }, description: 'Required for pre_op and post_op.' }),
    now: given({ type: 'string', format: 'date-time' }),
    seed: given({ type: 'integer', description: 'Seed for deterministic random choices and ids.' }),
    max_nodes_per_cluster: given({
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000,
      description: "The most nodes a cluster may have (Senlin's max_nodes_per_cluster; default 1000). A stored decision's input has it when its deployment set another.",
    }),
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

/** One walk over the body without recursion, counting values. */
function checkBounds(root: object): void {
  const stack: unknown[] = [root];
  let values = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (++values > MAX_EVALUATION_VALUES) throw badRequest(`The evaluation request holds more than ${MAX_EVALUATION_VALUES} values.`);
    if (typeof value !== 'object' || value === null) continue;
    // one push per item: spreading 100,000 items into push() would overflow the stack itself
    for (const item of Array.isArray(value) ? value : Object.values(value)) stack.push(item);
  }
}
