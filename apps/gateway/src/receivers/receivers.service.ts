import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { DomainError, badRequest, conflict, forbidden } from '@trellis/common';
import { ClusterEntity, ReceiverEntity, row } from '@trellis/persistence/entities';
import type { EntityManager } from 'typeorm';
import { requireVersion } from '../core/api-version';
import { checkActionParams } from '../clusters/cluster-actions.service';
import type { ApiRequest } from '../core/request.decorators';
import { insertRow } from '../infra/persistence.adapter';
import { UnitOfWork } from '../infra/unit-of-work';
import { show } from '../shared/body';
import { isUuid, parseListQuery, runList, whereUuidIn } from '../shared/list-query';
import { lookup, mustFind } from '../shared/lookup';
import { TrustBroker } from '../trusts/trust-broker';
import { CLUSTER_ACTION_NAMES, RECEIVER_TYPES, WEBHOOK_ACTION_KEYS } from './receiver-actions';
import { alarmUrl, receiverView } from './receiver-view';
import { ReceiverCreateBody, ReceiverUpdateBody } from './receiver.shapes';

export const RECEIVER_LIST = {
  filters: ['name', 'type', 'cluster_id', 'action', 'user'],
  sortKeys: ['name', 'type', 'action', 'cluster_id', 'created_at', 'user'],
} as const;

/**
 * Senlin's receivers (senlin-api: receivers). Webhook receivers only: Senlin makes a message
 * receiver's channel in Zaqar, and Trellis has no message service, so creating one fails as
 * Senlin fails when Zaqar is not there (500 EResourceCreation).
 */
@Injectable()
export class ReceiversService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly trusts: TrustBroker,
  ) {}

  async create(req: ApiRequest, body: unknown) {
    const input = ReceiverCreateBody.parse(body);
    const { name, type, cluster_id: clusterIdentity, action } = input;
    const params = input.params ?? {};
    if (type === 'message') {
      throw new DomainError(
        'INTERNAL',
        'Failed in creating queue: Trellis has no message service (Zaqar); use a webhook receiver.',
        'EResourceCreation',
      );
    }
    if (clusterIdentity === null) throw badRequest('Cluster identity is required for creating webhook receiver.');
    if (action === null) throw badRequest('Action name is required for creating webhook receiver.');
    if (action === 'CLUSTER_CREATE') throw badRequest("Action name cannot be any of ['CLUSTER_CREATE'].");
    checkTriggerable(action);
    checkActionParams(WEBHOOK_ACTION_KEYS[action], params);

    return this.uow.run(async ({ manager }) => {
      const cluster = await lookup(manager, ClusterEntity, clusterIdentity, { project: req.caller.projectId });
      if (!cluster) throw badRequest(`The referenced cluster '${clusterIdentity}' could not be found.`);
      // Senlin: only the cluster's owner (or the cloud admin) binds a webhook to it
      if (!req.caller.isAdmin && req.caller.userId !== cluster.user) throw forbidden();
      // the webhook's caller has no token: the owner's trust has to exist before anyone triggers it
      const trustId = await this.trusts.ensure(manager, req.caller);
      const id = randomUUID();
      const row: ReceiverEntity = {
        id,
        name,
        type,
        cluster_id: cluster.id,
        action,
        actor: { trust_id: trustId },
        params,
        channel: { alarm_url: alarmUrl(req.baseUrl, id, params) },
        project: req.caller.projectId,
        user: req.caller.userId,
        domain: req.caller.domainId,
        created_at: new Date(),
        updated_at: null,
      };
      await insertRow(manager, ReceiverEntity, row);
      return { receiver: receiverView(row) };
    });
  }

  async list(req: ApiRequest, query: Record<string, unknown>) {
    // a receiver's marker is a UUID field in Senlin (other collections look it up)
    if (query.marker !== undefined) {
      const marker = Array.isArray(query.marker) ? query.marker[query.marker.length - 1] : query.marker;
      if (!isUuid(String(marker))) throw badRequest(`The value for marker is not a valid UUID: '${show(marker)}'.`);
    }
    const q = parseListQuery(query, RECEIVER_LIST, req);
    for (const [field, allowed] of [['type', RECEIVER_TYPES], ['action', CLUSTER_ACTION_NAMES]] as const) {
      for (const v of q.filters[field] ?? []) {
        if (!(allowed as readonly string[]).includes(v)) throw badRequest(`Value '${v}' is not acceptable for field '${field}'.`);
      }
    }
    const qb = this.uow.manager.getRepository(ReceiverEntity).createQueryBuilder('r');
    if (q.filters.name) qb.andWhere('r.name IN (:...names)', { names: q.filters.name });
    if (q.filters.type) qb.andWhere('r.type IN (:...types)', { types: q.filters.type });
    if (q.filters.action) qb.andWhere('r.action IN (:...actions)', { actions: q.filters.action });
    if (q.filters.cluster_id) whereUuidIn(qb, 'cluster_id', q.filters.cluster_id, 'clusters');
    // the user filter came with microversion 1.4; Senlin drops it from older requests
    if (q.filters.user && req.version.atLeast('1.4')) qb.andWhere('r.user IN (:...users)', { users: q.filters.user });
    const rows = await runList(qb, q, req.caller, [{ key: 'created_at', dir: 'ASC' }]);
    return { receivers: rows.map(receiverView) };
  }

  async get(req: ApiRequest, identity: string) {
    return { receiver: receiverView(await this.find(this.uow.manager, req, identity)) };
  }

  /** Microversion 1.7: name, action and params; the alarm URL follows the params. */
  async update(req: ApiRequest, identity: string, body: unknown) {
    requireVersion(req.version, '1.7');
    const { name, action, params } = ReceiverUpdateBody.parse(body);
    return this.uow.run(async ({ manager }) => {
      const receiver = await this.find(manager, req, identity, true);
      let changed = false;
      if (name !== null && name !== receiver.name) {
        receiver.name = name;
        changed = true;
      }
      if (action !== null && action !== receiver.action) {
        if (action === 'CLUSTER_CREATE') throw badRequest("Action name cannot be any of ['CLUSTER_CREATE'].");
        checkTriggerable(action);
        receiver.action = action;
        changed = true;
      }
      if (params !== null && JSON.stringify(params) !== JSON.stringify(receiver.params)) {
        if (receiver.action !== null) checkActionParams(WEBHOOK_ACTION_KEYS[receiver.action], params);
        receiver.params = params;
        receiver.channel = { alarm_url: alarmUrl(req.baseUrl, receiver.id, params) };
        changed = true;
      }
      if (!changed) throw badRequest('No property needs an update.');
      receiver.updated_at = new Date();
      // an UPDATE of the fields, not save(): save() diffs the stored params against the new ones
      // with TypeORM's deep compare, which calls each object's hasOwnProperty, and a user's params
      // may have a key of that name (found by the RPC fuzz: a 500)
      const { name: newName, action: newAction, params: newParams, channel, updated_at } = receiver;
      await manager.getRepository(ReceiverEntity).update({ id: receiver.id }, row<ReceiverEntity>({ name: newName, action: newAction, params: newParams, channel, updated_at }));
      return { receiver: receiverView(receiver) };
    });
  }

  async remove(req: ApiRequest, identity: string): Promise<void> {
    await this.uow.run(async ({ manager }) => {
      const receiver = await this.find(manager, req, identity, true);
      await manager.getRepository(ReceiverEntity).delete({ id: receiver.id });
    });
  }

  /** Senlin's receiver_notify: only message receivers are notified, and Trellis has none. */
  async notify(req: ApiRequest, identity: string): Promise<never> {
    const receiver = await this.find(this.uow.manager, req, identity);
    if (!req.caller.isAdmin && req.caller.userId !== receiver.user) throw forbidden();
    throw badRequest('Notifying non-message receiver is not allowed.');
  }

  private find(manager: EntityManager, req: ApiRequest, identity: string, forUpdate = false): Promise<ReceiverEntity> {
    return mustFind(manager, ReceiverEntity, 'receiver', identity, { project: req.caller.projectId, forUpdate });
  }
}

/** A Senlin action Trellis runs only through its own API (or not at all) cannot be bound to a webhook. */
function checkTriggerable(action: string): void {
  if (!(action in WEBHOOK_ACTION_KEYS)) {
    throw conflict(
      `A Trellis webhook cannot run ${action}; it runs ${Object.keys(WEBHOOK_ACTION_KEYS).join(', ')}.`,
      'FeatureNotSupported',
    );
  }
}
