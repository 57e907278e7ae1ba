import { readFileSync } from 'node:fs';
import { startGatewayHarness, TOKENS, type GatewayHarness } from '../testing/gateway-harness';
import { MAX_BODY_DEPTH } from '../core/request-input';
import { MAX_EVALUATION_VALUES } from './evaluation-request';

/** Senlin's worked example of zone placement (test/conformance), as `trellis evaluate` reads it. */
const example = JSON.parse(readFileSync('test/conformance/zone-grow-equal-weights.json', 'utf8')) as {
  input: Record<string, unknown>;
  expect: { status: string; data: Record<string, unknown> };
};

const nested = (levels: number, leaf: string) => `${'{"a":'.repeat(levels)}${leaf}${'}'.repeat(levels)}`;

describe('POST /v1/evaluations checks its body (issue 18)', () => {
  let h: GatewayHarness;
  beforeAll(async () => {
    h = await startGatewayHarness();
  });
  afterAll(() => h?.close());

  const send = (text: string) =>
    h
      .http()
      .post('/v1/evaluations')
      .set('X-Auth-Token', TOKENS.alice)
      .set('OpenStack-API-Version', 'clustering 1.14')
      .set('Content-Type', 'application/json')
      .send(text);

  it('evaluates a snapshot', async () => {
    const res = await send(JSON.stringify(example.input));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ hook: 'pre_op', ...example.expect });
  });

  it.each([
    ['no body', '', 'action.action: a pre_op evaluation needs the action to decide (e.g. "CLUSTER_SCALE_OUT")'],
    ['{}', '{}', 'action.action: a pre_op evaluation needs the action to decide (e.g. "CLUSTER_SCALE_OUT")'],
    ['""', '""', 'The evaluation request must be a JSON object (a decision snapshot).'],
    ['a list', '[{"hook": "pre_op"}]', 'The evaluation request must be a JSON object (a decision snapshot).'],
    ['a post_op without an action', '{"hook": "post_op", "action": {"inputs": {}}}', 'action.action: a post_op evaluation needs the action to decide (e.g. "CLUSTER_SCALE_OUT")'],
    ['an action that is not a string', '{"action": {"action": 7}}', 'action.action: a pre_op evaluation needs the action to decide (e.g. "CLUSTER_SCALE_OUT")'],
    [
      '10,000 levels under an unknown key',
      `{"action": {"action": "CLUSTER_SCALE_OUT"}, "x": ${nested(10_000, '1')}}`,
      `The request body is nested more than ${MAX_BODY_DEPTH} levels deep at x${'.a'.repeat(MAX_BODY_DEPTH - 1)}.`,
    ],
    [
      '10,000 levels of lists in action.inputs',
      `{"action": {"action": "CLUSTER_SCALE_OUT", "inputs": {"a": ${'['.repeat(10_000)}${']'.repeat(10_000)}}}}`,
      `The request body is nested more than ${MAX_BODY_DEPTH} levels deep at action.inputs.a${'[0]'.repeat(MAX_BODY_DEPTH - 3)}.`,
    ],
    [
      '10,000 levels in action.data',
      `{"action": {"action": "CLUSTER_SCALE_OUT", "data": ${nested(10_000, '1')}}}`,
      `The request body is nested more than ${MAX_BODY_DEPTH} levels deep at action.data${'.a'.repeat(MAX_BODY_DEPTH - 2)}.`,
    ],
    [
      `more than ${MAX_EVALUATION_VALUES} values`,
      `{"action": {"action": "CLUSTER_SCALE_OUT"}, "cloud": {"hypervisors": [${Array(MAX_EVALUATION_VALUES).fill('0').join(',')}]}}`,
      `The evaluation request holds more than ${MAX_EVALUATION_VALUES} values.`,
    ],
  ])('%s → 400 naming what is wrong', async (_what, text, message) => {
    const res = await send(text);
    expect({ status: res.status, message: res.body?.error?.message }).toEqual({ status: 400, message });
  });

  it(`a snapshot ${MAX_BODY_DEPTH} levels deep is evaluated`, async () => {
    const input = { ...example.input, action: { action: 'CLUSTER_SCALE_OUT', inputs: { count: 1 }, data: JSON.parse(nested(MAX_BODY_DEPTH - 2, '1')) } };
    const res = await send(JSON.stringify(input));
    expect(res.status).toBe(200);
  });
});
