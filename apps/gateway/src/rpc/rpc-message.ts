import { Allow, IsObject, IsOptional, IsString } from 'class-validator';
import { ContractViolation, checkContractInput } from '@trellis/contracts';
import type { SenlinErrorBody } from '../core/error-body';

/**
 * An RPC request on `trellis.gateway.rpc` (exchange `trellis.rpc`, routing key `rpc.request`). The
 * AMQP `type` property names the pattern (`cluster.scale_out`); the body is this JSON object.
 */
export class RpcRequestMessage {
  /** a Keystone token, as REST's X-Auth-Token; the project comes from it */
  @IsOptional()
  @IsString()
  token?: string;

  /** the clustering microversion (`1.14`, `latest`); 1.0 when absent, as in REST */
  @IsOptional()
  @IsString()
  microversion?: string;

  /** path parameters (`cluster_id`) and, for calls that read one, the REST query string */
  @IsOptional()
  @IsObject()
  params?: Record<string, unknown>;

  /** the REST request body */
  @Allow()
  body?: unknown;
}

export const RPC_REQUEST_KEYS: readonly string[] = ['token', 'microversion', 'params', 'body'];

/**
 * `parseContract(RpcRequestMessage, input)` checked by hand, for a request whose keys are all
 * RPC_REQUEST_KEYS (the server refuses others first): the same rules as the decorators
 * above, the same ContractViolation with the same problems in the same order (rpc-message.spec.ts
 * compares the two on every kind of value). class-validator cost the gateway about 0.17 ms of CPU
 * per RPC request, a twelfth of an alarm storm's (BENCHMARKS.md, burst).
 */
export function readRpcRequest(input: unknown): RpcRequestMessage {
  checkContractInput(RpcRequestMessage.name, input);
  const problems: string[] = [];
  const optionalString = (key: 'token' | 'microversion') => {
    const v = input[key];
    if (v !== undefined && v !== null && typeof v !== 'string') problems.push(`${key}: ${key} must be a string`);
  };
  optionalString('token');
  optionalString('microversion');
  const params = input.params;
  if (params !== undefined && params !== null && (typeof params !== 'object' || Array.isArray(params))) problems.push('params: params must be an object');
  if (problems.length) throw new ContractViolation(RpcRequestMessage.name, problems);
  const request = new RpcRequestMessage();
  for (const key of RPC_REQUEST_KEYS) {
    if (Object.prototype.hasOwnProperty.call(input, key)) Object.defineProperty(request, key, { value: input[key], enumerable: true, writable: true, configurable: true });
  }
  return request;
}

/** Reply headers, named as REST's response headers (lower case). */
export interface RpcReplyHeaders {
  'x-openstack-request-id': string;
  /** `clustering <version>`, absent when the request failed before the version was known */
  'openstack-api-version'?: string;
  /** the action to poll, on 202 replies */
  location?: string;
  /** `true` on the stored reply to a request whose message id was answered before (a redelivery) */
  'idempotent-replayed'?: string;
  /** seconds to wait before trying again, on 503 replies (the database or Keystone unreachable) and 429 (a limit) */
  'retry-after'?: string;
}

export interface RpcSuccessReply {
  /** the HTTP status REST answers with (200, 201, 202, 204) */
  status: number;
  /** the JSON body REST answers with (`null` for 204 and for deletes) */
  body: unknown;
  /** set when the call started an action: it is committed (with its outbox row) before this reply */
  action_id?: string;
  headers: RpcReplyHeaders;
}

export interface RpcErrorReply {
  status: number;
  /** Senlin's error object, as in REST's error body */
  error: SenlinErrorBody['error'];
  headers: RpcReplyHeaders;
}

export type RpcReply = RpcSuccessReply | RpcErrorReply;
