import { ContractViolation, MAX_MESSAGE_DEPTH, parseContract } from '@trellis/contracts';
import { RpcRequestMessage, readRpcRequest } from './rpc-message';

/** What a reading gives: the fields read, or the problems refused. */
function outcome(read: () => RpcRequestMessage): unknown {
  try {
    const request = read();
    expect(request).toBeInstanceOf(RpcRequestMessage);
    return { fields: { ...request } };
  } catch (e) {
    if (!(e instanceof ContractViolation)) throw e;
    return { contract: e.contract, problems: e.problems };
  }
}

const deep = (levels: number): unknown => (levels === 0 ? 1 : { a: deep(levels - 1) });

/** One value of each JSON kind, and what a field may be missing as. */
const VALUES: unknown[] = [undefined, null, '', 'text', 0, 1.5, true, false, [], ['x'], {}, { cluster_id: 'c' }];

describe('readRpcRequest', () => {
  it("reads every request with known keys as parseContract(RpcRequestMessage) does: the same fields, or the same problems in the same order", () => {
        // (the server refuses keys other than RPC_REQUEST_KEYS before reading)
    const inputs: unknown[] = [null, 'text', 3, [], [{}], { params: deep(MAX_MESSAGE_DEPTH - 2) }, { body: deep(MAX_MESSAGE_DEPTH) }, { params: deep(MAX_MESSAGE_DEPTH + 2) }];
    for (const token of VALUES) {
      for (const microversion of VALUES) {
        for (const params of VALUES) {
          const input: Record<string, unknown> = {};
          if (token !== undefined) input.token = token;
          if (microversion !== undefined) input.microversion = microversion;
          if (params !== undefined) input.params = params;
          inputs.push(input, { ...input, body: params });
        }
      }
    }
    let refused = 0;
    for (const input of inputs) {
      const byHand = outcome(() => readRpcRequest(input));
      expect(byHand).toEqual(outcome(() => parseContract(RpcRequestMessage, input)));
      if ('problems' in (byHand as object)) refused++;
    }
    // the comparison covers refusals of every rule, not only requests both accept
    expect(refused).toBeGreaterThan(inputs.length / 2);
  });

  it('names each field that is wrong', () => {
    expect(() => readRpcRequest({ token: 1, microversion: [], params: 'x' })).toThrow(
      'invalid RpcRequestMessage: token: token must be a string; microversion: microversion must be a string; params: params must be an object',
    );
  });
});
