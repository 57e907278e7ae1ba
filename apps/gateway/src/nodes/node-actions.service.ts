import { Inject, Injectable } from '@nestjs/common';
import { badRequest } from '@trellis/common';
import { NodeEntity, ProfileEntity } from '@trellis/persistence/entities';
import { PROFILE_TYPE_NOVA_SERVER } from '@trellis/contracts';
import { ActionSubmitter } from '../actions/action-submitter';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import { requireVersion } from '../core/api-version';
import type { ApiRequest } from '../core/request.decorators';
import { UnitOfWork } from '../infra/unit-of-work';
import { isMap, show } from '../shared/body';
import { mustFind } from '../shared/lookup';
import { checkOperationParams, hasOperation } from '../profiles/profile-type';
import { PROFILE_TYPES } from '../profiles/profile-types';
import type { EntityManager } from 'typeorm';
import { nodeActionTimeout } from './node-timeout';
import { NodeActionRequest, NodeOperationRequest, NodeRecoverParams } from './node.shapes';
import { RECOVERY_OPERATIONS } from '../clusters/cluster.shapes';

/** Senlin's reboot types. */
const REBOOT_TYPES = ['SOFT', 'HARD'];

/** The keys `POST /v1/nodes/{id}/actions` takes; RPC serves each as `node.<key>`. */
export const NODE_ACTION_KEYS = NodeActionRequest.keys;

/**
 * POST /v1/nodes/{id}/actions (check, recover) and POST /v1/nodes/{id}/ops (>= 1.4): Senlin's
 * request checks in its order (the body before the node), then one READY action. The nova-worker
 * runs them on the node's server with the caller's trust.
 */
@Injectable()
export class NodeActionsService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly submitter: ActionSubmitter,
    @Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig,
  ) {}

  async act(req: ApiRequest, identity: string, body: unknown): Promise<string> {
    const [key, params] = NodeActionRequest.pick(body);
    return this.uow.run(async (tx) => {
      const node = await mustFind(tx.manager, NodeEntity, 'node', identity, { project: req.caller.projectId });
      const inputs = key === 'check' ? { ...params } : recoverInputs({ ...params });
      const action = await this.submitter.submit(tx, req, {
        action: key === 'check' ? 'NODE_CHECK' : 'NODE_RECOVER',
        target: node.id,
        clusterId: node.cluster_id,
        inputs,
        timeout: await this.timeoutOf(tx.manager, node),
      });
      return action.id;
    });
  }

  async operate(req: ApiRequest, identity: string, body: unknown): Promise<string> {
    requireVersion(req.version, '1.4');
    const [operation, map] = NodeOperationRequest.pick(body);
    return this.uow.run(async (tx) => {
      const node = await mustFind(tx.manager, NodeEntity, 'node', identity, { project: req.caller.projectId });
      const profile = await tx.manager.getRepository(ProfileEntity).findOneBy({ id: node.profile_id });
      const typeName = `${profile?.type ?? PROFILE_TYPE_NOVA_SERVER}`;
      const type = PROFILE_TYPES.get(typeName);
      if (!hasOperation(type, operation)) {
        throw badRequest(`The requested operation '${operation}' is not supported by the profile type '${typeName}'.`);
      }
      const params = checkOperationParams(type, operation, map[operation]);
      const action = await this.submitter.submit(tx, req, {
        action: 'NODE_OPERATION',
        target: node.id,
        clusterId: node.cluster_id,
        inputs: { operation, params },
        timeout: await this.timeoutOf(tx.manager, node),
      });
      return action.id;
    });
  }

  private timeoutOf(manager: EntityManager, node: NodeEntity): Promise<number> {
    return nodeActionTimeout(manager, node, this.config.defaultActionTimeout);
  }
}

/** Senlin's node_recover: operation (+ operation_params), check, delete_timeout, force_recreate. */
function recoverInputs(params: Record<string, unknown>): Record<string, unknown> {
  const inputs: Record<string, unknown> = {};
  if ('operation' in params) {
    const op = params.operation;
    delete params.operation;
    if (typeof op !== 'string') throw badRequest('operation has to be a string');
    if (!RECOVERY_OPERATIONS.includes(op.toUpperCase())) {
      throw badRequest(`Operation value '${op}' has to be one of the following: ${RECOVERY_OPERATIONS.join(', ')}.`);
    }
    inputs.operation = op;
    if ('operation_params' in params) {
      const opParams = params.operation_params;
      delete params.operation_params;
      if (op.toUpperCase() === 'REBOOT') {
        if (!isMap(opParams)) throw badRequest('operation_params must be a map');
        if ('type' in opParams && !REBOOT_TYPES.includes(show(opParams.type).toUpperCase())) {
          throw badRequest(`Type field '${show(opParams.type)}' in operation_params has to be one of the following: ${REBOOT_TYPES.join(', ')}.`);
        }
      }
      inputs.operation_params = opParams;
    }
  }
  // the other documented parameters pass on as given
  for (const key of NodeRecoverParams.keys.filter((k) => k !== 'operation' && k !== 'operation_params')) {
    if (key in params) {
      inputs[key] = params[key];
      delete params[key];
    }
  }
  const left = Object.keys(params);
  if (left.length) throw badRequest(`Action parameter [${left.map((k) => `'${k}'`).join(', ')}] is not recognizable.`);
  return inputs;
}
