import type { ApiRequest } from '../core/request.decorators';

// The shape of one route, apart from the route table so that feature folders (receivers) can define
// routes that the table imports without a circle.

/** One RPC request after the envelope, the microversion and the token were checked. */
export interface RpcCall {
  req: ApiRequest;
  /** the path parameters the route names, as non-empty strings */
  path: Record<string, string>;
  /** every other parameter, as the REST query string would carry it */
  query: Record<string, string | string[]>;
  body: unknown;
}

export interface RpcResult {
  /** the status the REST call answers with */
  status: number;
  /** the REST response body (`null` where REST sends the JSON document `null` or nothing) */
  body: unknown;
  /** set by operations that start an action: the action is committed when the result exists */
  actionId?: string;
}

export interface RpcRoute {
  /** the REST call this pattern stands for, for documentation and error messages */
  rest: string;
  /** path parameters, required in `params` */
  path: readonly string[];
  /** whether the REST call reads its query string; other routes refuse extra parameters */
  query: boolean;
  /** whether the REST call takes a JSON body; other routes refuse one */
  body: boolean;
  /** the policy rules the caller must pass, the REST route's (@Operation) */
  operations(call: Omit<RpcCall, 'req'>): readonly string[];
  run(call: RpcCall): Promise<RpcResult>;
}
