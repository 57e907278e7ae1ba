import { FREE_MAP } from '../shapes/request';
import { bool, list, map, nullable, oneOf, optional, str, time, uuid, value, view } from '../shapes/response';

/** The answers of the decision endpoints: an action's stored decision, a dry run, an evaluation. */

const HOOK = oneOf(['pre_op', 'post_op', 'attach', 'detach']);
const TRACE = list(value(FREE_MAP), { description: 'One entry per policy run.' });

const DecisionRecord = view('DecisionRecord', {
  action_id: uuid(),
  hook: HOOK,
  created_at: time(),
  input: map({
    description:
      'The snapshot the engine decided from (POST /v1/evaluations format). Unless the caller is a cloud or project admin, ' +
      "host names are shown as Nova's hostId (sha224 of project id + host) and cloud.hypervisors (present when a bound policy may read them: " +
        'affinity with enable_drs_extension, or a plugin) is [] with cloud.hidden saying how many there were.',
  }),
  output: map(),
  plan: nullable(map()),
  trace: TRACE,
});
export const DecisionEnvelope = view('DecisionEnvelope', { decision: DecisionRecord });

const DryRunDecision = view('DryRunDecision', {
  status: oneOf(['OK', 'FAILED']),
  reason: nullable(str()),
  hook: HOOK,
  input: map(),
  output: map(),
  plan: nullable(map()),
  trace: TRACE,
});

/** 200 body of POST /v1/clusters/{id}/actions?dry_run=true: what the engine would decide, nothing stored. */
export const DryRunResult = view('DryRunResult', {
  dry_run: bool({ example: true }),
  action: map({ example: { action: 'CLUSTER_SCALE_OUT', target: 'c1-uuid', inputs: { count: 1 } } }),
  decision: DryRunDecision,
});

/** libs/policies EvaluationOutput. */
export const EvaluationResult = view('EvaluationResult', {
  hook: HOOK,
  status: oneOf(['OK', 'ERROR']),
  reason: str(),
  data: map({ description: 'The action data the policies wrote (placement, creation, deletion, ...).' }),
  plan: nullable(map()),
  trace: TRACE,
  binding_updates: optional(list(map(), { description: 'pre_op / post_op.' })),
  ok: optional(bool({ description: 'attach / detach.' })),
  binding_data: optional(map({ description: 'attach / detach.' })),
  message: optional(str({ description: 'attach / detach.' })),
  cloud_changes: optional(list(map())),
});
