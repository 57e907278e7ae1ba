import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { randomUUID } from 'node:crypto';
import { badRequest, withLogContext, type Logger } from '@trellis/common';
import { TOKEN_VALIDATOR, type TokenValidator } from '@trellis/identity';
import { Queues, ContractViolation } from '@trellis/contracts';
import type { ConsumerHandle, IncomingMessage, MessageBus } from '@trellis/messaging/bus.port';
import { ActionsService } from '../actions/actions.service';
import { ClusterActionsService } from '../clusters/cluster-actions.service';
import { ClusterPoliciesController } from '../clusters/cluster-policies.controller';
import { ClustersService } from '../clusters/clusters.service';
import { ClusterCollectService } from '../clusters/cluster-collect.service';
import { BuildInfoController } from '../build-info/build-info.controller';
import { ServicesController } from '../services/services.controller';
import { authenticate } from '../core/api.guard';
import { authorize, authorizer } from '../core/policy.guard';
import { SERVICE_TYPE, negotiateApiVersion, type ApiVersion } from '../core/api-version';
import { senlinErrorBody } from '../core/error-body';
import { MAX_BODY_BYTES, checkBodyText, checkQueryParams } from '../core/request-input';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import type { ApiRequest } from '../core/request.decorators';
import { describeError } from '../core/senlin-exception.filter';
import { toWireJson } from '../core/sorted-json';
import { GATEWAY_LOGGER, POLICY_ENFORCER } from '../core/tokens';
import type { PolicyEnforcer } from '@trellis/authz';
import { DecisionsService } from '../decisions/decisions.service';
import { EventsController } from '../events/events.controller';
import { FindingsService } from '../findings/findings.service';
import { NodeActionsService } from '../nodes/node-actions.service';
import { NodesService } from '../nodes/nodes.service';
import { IdempotentWrites, isIdempotencyKey, type WriteAnswer } from '../idempotency/idempotent-writes';
import { PoliciesService } from '../policies/policies.service';
import { PolicyTypesController } from '../policies/policy-types.controller';
import { ProfileTypesController } from '../profiles/profile-types.controller';
import { ProfilesService } from '../profiles/profiles.service';
import { RPC_REQUEST_KEYS, RpcRequestMessage, readRpcRequest, type RpcReply, type RpcReplyHeaders } from './rpc-message';
import { rpcRoutes, type RpcCall, type RpcRoute } from './rpc-routes';
import { ReceiversService } from '../receivers/receivers.service';
import { RequestRate } from '../limits/request-rate';

/** What a correlation id must look like to follow the action through every service's messages. */
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface RpcServeOptions {
  /** `scheme://host[/prefix]` of the REST API, for Location headers (TRELLIS_PUBLIC_URL wins) */
  baseUrl: string;
  /** requests handled at once */
  prefetch: number;
}

/** Thrown for a request the gateway cannot route: a reply goes back, never a crash or silence. */
class RpcRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string,
  ) {
    super(message);
  }
}

/**
 * The gateway's RPC transport: every REST operation as a message pattern on the durable request
 * queue `trellis.gateway.rpc`. Each request goes through what a REST request goes through (the
 * microversion, then the Keystone token through the same TokenValidator, then the same service
 * call) and every outcome, including a malformed message, becomes a reply: `{status, body,
 * headers, action_id?}` or `{status, error, headers}` with REST's status and Senlin's error object.
 *
 * Served with `bus.serve` rather than a Nest `BusTransport`: the REST exception filter and guard
 * are HTTP-only, and a malformed request needs the same error shape as a domain error.
 */
@Injectable()
export class RpcServer implements OnModuleInit {
  private routes: ReadonlyMap<string, RpcRoute> = new Map();
  private baseUrl: string | null = null;

  constructor(
    private readonly moduleRef: ModuleRef,
    @Inject(TOKEN_VALIDATOR) private readonly tokens: TokenValidator,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
    @Inject(GATEWAY_LOGGER) private readonly logger: Logger,
    @Inject(POLICY_ENFORCER) private readonly enforcer: PolicyEnforcer,
    private readonly writes: IdempotentWrites,
    private readonly rate: RequestRate,
  ) {}

  onModuleInit(): void {
    // The controllers are looked up rather than injected: Nest does not inject controllers into
    // providers. Where the REST logic lives in a controller, RPC calls the very same method.
    const get = <T>(type: new (...args: never[]) => T): T => this.moduleRef.get(type, { strict: true });
    this.routes = rpcRoutes({
      profiles: get(ProfilesService),
      profileTypes: get(ProfileTypesController),
      policies: get(PoliciesService),
      policyTypes: get(PolicyTypesController),
      clusters: get(ClustersService),
      clusterActions: get(ClusterActionsService),
      clusterCollect: get(ClusterCollectService),
      buildInfo: get(BuildInfoController),
      services: get(ServicesController),
      clusterPolicies: get(ClusterPoliciesController),
      nodes: get(NodesService),
      nodeActions: get(NodeActionsService),
      findings: get(FindingsService),
      actions: get(ActionsService),
      decisions: get(DecisionsService),
      events: get(EventsController),
      receivers: get(ReceiversService),
    });
  }

  /** The message patterns served, sorted. */
  patterns(): string[] {
    return [...this.routes.keys()].sort();
  }

  /** Starts answering `trellis.gateway.rpc`; cancel the handle to stop after running requests. */
  serve(bus: MessageBus, options: RpcServeOptions): Promise<ConsumerHandle> {
    this.baseUrl = (this.config.publicUrl ?? options.baseUrl).replace(/\/+$/, '');
    return bus.serve(Queues.gatewayRpc, (message) => this.handle(message), { prefetch: options.prefetch });
  }

  /** One request → its reply, every line it logs carrying its request id. Never throws. */
  handle(message: IncomingMessage): Promise<RpcReply> {
    const requestId = message.correlationId && CORRELATION_ID.test(message.correlationId) ? message.correlationId : `req-${randomUUID()}`;
    return withLogContext({ correlation_id: requestId }, () => this.reply(message, requestId));
  }

  private async reply(message: IncomingMessage, requestId: string): Promise<RpcReply> {
    const headers: RpcReplyHeaders = { 'x-openstack-request-id': requestId };
    const pattern = message.type;
    try {
      refuseOversized(message);
      const { name, route } = this.routeOf(pattern);
      const request = this.parseRequest(message);
      const version = this.negotiate(request.microversion);
      headers['openstack-api-version'] = `${SERVICE_TYPE} ${version}`;
      const caller = await authenticate(this.tokens, request.token);
      this.rate.admitCaller(caller, 'rpc');
      const { path, query } = splitParams(name, route, request.params ?? {});
      checkQueryParams(query);
      checkBodyText(request.body);
      if (!route.body && !isEmptyBody(request.body)) {
        throw badRequest(`'${name}' takes no body (${route.rest}).`, 'HTTPBadRequest');
      }
      const allows = authorizer(this.enforcer, caller);
      authorize(allows, route.operations({ path, query, body: request.body }));
      const req: ApiRequest = { requestId, baseUrl: this.baseUrl ?? this.config.publicUrl ?? '', version, caller, allows, via: 'rpc' };
      const { answer, replayed } = await this.runOnce(name, route, message, request, { req, path, query, body: request.body });
      if (answer.location) headers.location = answer.location;
      if (replayed) headers['idempotent-replayed'] = 'true';
      this.logger.debug('rpc request served', { pattern, request_id: requestId, status: answer.status, replayed });
      return {
        status: answer.status,
        body: answer.body,
        ...(answer.actionId ? { action_id: answer.actionId } : {}),
        headers,
      };
    } catch (e) {
      if (e instanceof RpcRequestError) {
        return { status: e.status, error: senlinErrorBody(e.status, e.message, e.type).error, headers };
      }
      const { status, body, retryAfter } = describeError(e, this.logger, { request_id: requestId, pattern: pattern ?? null });
      if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
      return { status, error: body.error, headers };
    }
  }

  /**
   * Runs the call. A write with a message id is answered once per id: a redelivery (a gateway died
   * between its commit and its ack) or a client's resend with the same id gets the first reply and
   * starts nothing (docs/RPC.md).
   */
  private runOnce(pattern: string, route: RpcRoute, message: IncomingMessage, request: RpcRequestMessage, call: RpcCall) {
    const write = async (): Promise<WriteAnswer> => {
      const result = await route.run(call);
      const actionId = result.actionId ?? null;
      return { status: result.status, body: toWireJson(result.body), location: actionId && `${call.req.baseUrl}/v1/actions/${actionId}`, actionId };
    };
    if (route.rest.startsWith('GET ') || !isIdempotencyKey(message.messageId)) return write().then((answer) => ({ answer, replayed: false }));
    const asked = { pattern, microversion: request.microversion ?? null, params: request.params ?? {}, body: request.body ?? null };
    return this.writes.answer({ transport: 'rpc', key: message.messageId, caller: call.req.caller, request: asked }, write);
  }

  private routeOf(pattern: string | undefined): { name: string; route: RpcRoute } {
    if (!pattern) {
      throw new RpcRequestError(400, "The request names no message pattern: set the AMQP 'type' property (e.g. 'cluster.list').", 'HTTPBadRequest');
    }
    const route = this.routes.get(pattern);
    if (!route) throw new RpcRequestError(404, `Unknown message pattern '${pattern}'.`, 'HTTPNotFound');
    return { name: pattern, route };
  }

  private parseRequest(message: IncomingMessage): RpcRequestMessage {
    if (message.parseError) {
      throw new RpcRequestError(400, `Malformed request body: ${message.parseError}`, 'HTTPBadRequest');
    }
    const body = message.body;
    if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
      const extra = Object.keys(body).filter((k) => !RPC_REQUEST_KEYS.includes(k));
      if (extra.length) {
        throw new RpcRequestError(400, `Unknown request field(s) ${extra.map((k) => `'${k}'`).join(', ')}; a request has ${RPC_REQUEST_KEYS.join(', ')}.`, 'HTTPBadRequest');
      }
    }
    try {
      return readRpcRequest(body);
    } catch (e) {
      if (e instanceof ContractViolation) {
        throw new RpcRequestError(400, `Malformed request: ${e.problems.join('; ')}`, 'HTTPBadRequest');
      }
      throw e;
    }
  }

  /** As REST's `OpenStack-API-Version: clustering <microversion>`, with the same errors. */
  private negotiate(microversion: string | undefined): ApiVersion {
    return negotiateApiVersion(microversion === undefined ? undefined : `${SERVICE_TYPE} ${microversion}`, undefined);
  }
}

const isEmptyBody = (body: unknown) =>
  body === undefined || body === null || (typeof body === 'object' && !Array.isArray(body) && Object.keys(body).length === 0);

/** Path parameters must be non-empty strings; the rest is the query string where the call reads one. */
function splitParams(pattern: string, route: RpcRoute, params: Record<string, unknown>) {
  const path: Record<string, string> = {};
  for (const name of route.path) {
    const value = params[name];
    if (typeof value !== 'string' || value.trim() === '') {
      throw badRequest(`'params.${name}' is required by '${pattern}' and must be a non-empty string.`, 'HTTPBadRequest');
    }
    path[name] = value;
  }
  const query: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(params)) {
    if (route.path.includes(name)) continue;
    if (!route.query) throw badRequest(`Invalid parameter '${name}' for '${pattern}' (${route.rest}).`, 'HTTPBadRequest');
    query[name] = queryValue(name, value);
  }
  return { path, query };
}

/** What a query string can say: a scalar, or a repeated parameter as a list of scalars. */
function queryValue(name: string, value: unknown): string | string[] {
  const scalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';
  if (scalar(value)) return String(value);
  if (Array.isArray(value) && value.length > 0 && value.every(scalar)) return value.map(String);
  throw badRequest(`The value of 'params.${name}' must be a string, number, boolean or a non-empty list of them.`, 'HTTPBadRequest');
}

/**
 * Refuses a request over the body limit before anything else looks at it, the pattern included: REST's
 * body parser runs before routing, so an oversized body to an unknown path is a 413 there too, and no
 * request is taken over RPC that REST refuses.
 */
function refuseOversized(message: IncomingMessage): void {
  if (message.raw.length > MAX_BODY_BYTES) {
    throw new RpcRequestError(413, `Request size (${message.raw.length} bytes) exceeds the maximum allowed size (${MAX_BODY_BYTES} bytes).`, 'RequestLimitExceeded');
  }
}
