import { Inject, Injectable } from '@nestjs/common';
import type { Credentials, PolicyEnforcer } from '@trellis/authz';
import { badRequest, forbidden, notFound, type AuthContext } from '@trellis/common';
import { ClusterEntity, type ReceiverEntity } from '@trellis/persistence/entities';
import type { ApiVersion } from '../core/api-version';
import type { ApiRequest } from '../core/request.decorators';
import { POLICY_ENFORCER } from '../core/tokens';
import { ClusterActionsService } from '../clusters/cluster-actions.service';
import { hotQuery, hydrate, selectColumns } from '../infra/persistence.adapter';
import type { EntityManager } from 'typeorm';
import { UnitOfWork } from '../infra/unit-of-work';
import { RequestRate } from '../limits/request-rate';
import { isUuid } from '../shared/list-query';
import { WEBHOOK_ACTION_KEYS } from './receiver-actions';
import { triggerParams } from './receiver.shapes';

export interface WebhookTrigger {
  /** the receiver id from the URL: the webhook's credential */
  receiverId: string;
  /** the URL's `V` values */
  webhookVersion: string[];
  body: unknown;
  requestId: string;
  baseUrl: string;
  version: ApiVersion;
}

/**
 * `POST /v1/webhooks/{id}/trigger?V=2`, which carries no token (docs/SECURITY.md, Webhooks): the
 * full receiver id is the credential, and the action runs as the receiver's owner with the
 * owner's stored Keystone trust, through the same request checks and pipeline as
 * `POST /v1/clusters/{id}/actions`.
 */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly uow: UnitOfWork,
    private readonly clusterActions: ClusterActionsService,
    @Inject(POLICY_ENFORCER) private readonly enforcer: PolicyEnforcer,
    private readonly rate: RequestRate,
  ) {}

  async trigger(t: WebhookTrigger): Promise<string> {
    const v = t.webhookVersion;
    if (v.length === 0) throw badRequest('V query parameter is required in webhook trigger URL', 'HTTPBadRequest');
    if (v.length > 1 || (v[0] !== '1' && v[0] !== '2')) {
      throw badRequest(`Webhook version '${v.join(',')}' is not supported: the V query parameter must be 1 or 2.`, 'HTTPBadRequest');
    }
    const params = triggerParams(t.body, v[0], t.version);

    // exact id only: never a name or a short id, which would turn the credential into a guess
    const manager = this.uow.manager;
    const [receiver]: WebhookRow[] = isUuid(t.receiverId) ? await hotQuery(manager, receiverAndTrust(manager), [t.receiverId.toLowerCase()]) : [];
    if (!receiver || receiver.type !== 'webhook' || receiver.cluster_id === null || receiver.action === null) {
      throw notFound('receiver', t.receiverId);
    }
    // counted per receiver once it is known: ids that find nothing make no bucket
    this.rate.admitWebhook(receiver.id);
    if (receiver.trust_roles === null) {
      throw forbidden(
        `The owner of this webhook (user ${receiver.user} in project ${receiver.project}) has no Keystone trust for Trellis any more; ` +
          'their next request that starts an action, or re-creating the receiver, makes a new one.',
      );
    }
    const owner = ownerOf(receiver, receiver.trust_roles);
    const credentials: Credentials = {
      roles: owner.roles,
      project_id: owner.projectId,
      user_id: owner.userId,
      domain_id: owner.domainId,
      is_admin_project: false,
      system_scope: null,
    };
    const target = { project_id: receiver.project, user_id: receiver.user };
    const allows = (rule: string) => this.enforcer.enforce(rule, credentials, target);
    if (!allows('webhooks:trigger')) throw forbidden();

    const cluster = hydrate(manager, ClusterEntity, receiver, CLUSTER_PREFIX);
    if (!cluster) throw badRequest(`The referenced cluster '${receiver.cluster_id}' could not be found.`);
    const key = WEBHOOK_ACTION_KEYS[receiver.action];
    if (!key) throw badRequest(`The webhook's action ${receiver.action} cannot be run by Trellis.`);

    const req: ApiRequest = { requestId: t.requestId, baseUrl: t.baseUrl, version: t.version, caller: owner, allows, via: 'webhook' };
    return this.clusterActions.perform(req, cluster.id, { [key]: { ...receiver.params, ...params } }, cluster);
  }
}

/**
 * What a trigger reads of its receiver, with the roles of its owner's trust (null: no trust) and
 * its cluster's row (columns prefixed CLUSTER_PREFIX, null when the receiver's project has no such
 * cluster).
 */
type WebhookRow = Pick<ReceiverEntity, 'id' | 'type' | 'cluster_id' | 'action' | 'params' | 'project' | 'user' | 'domain'> & {
  trust_roles: string[] | null;
} & Record<string, unknown>;

const CLUSTER_PREFIX = 'cluster.';
let receiverAndTrustSql: string | null = null;

/**
 * The receiver, its owner's trust and its cluster in one statement: an alarm storm fires many
 * triggers at once, and each statement costs the gateway and PostgreSQL CPU the storm's answers
 * wait for. The cluster is the receiver's project's, by its exact id, as a lookup without names.
 */
function receiverAndTrust(manager: EntityManager): string {
  receiverAndTrustSql ??= `SELECT r.id, r.type, r.cluster_id, r.action, r.params, r.project, r."user", r.domain, t.roles AS trust_roles,
         ${selectColumns(manager, ClusterEntity, 'c', CLUSTER_PREFIX)}
    FROM receivers r LEFT JOIN trusts t ON t.user_id = r."user" AND t.project_id = r.project
      LEFT JOIN clusters c ON c.id = r.cluster_id AND c.project = r.project
   WHERE r.id = $1`;
  return receiverAndTrustSql;
}

/** The receiver's owner as the caller of the action: no token, the roles the owner's trust delegates. */
function ownerOf(r: WebhookRow, roles: string[]): AuthContext {
  return {
    token: '',
    userId: r.user,
    userName: '',
    projectId: r.project,
    projectName: '',
    domainId: r.domain,
    roles,
    isAdmin: false,
    isProjectAdmin: roles.includes('admin'),
    systemScope: null,
    isAdminProject: false,
    expiresAt: new Date(),
  };
}
