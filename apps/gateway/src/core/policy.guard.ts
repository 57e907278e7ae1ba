import { CanActivate, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Credentials, PolicyEnforcer } from '@trellis/authz';
import { forbidden, type AuthContext } from '@trellis/common';
import { PUBLIC_ROUTE } from './api.guard';
import type { HttpRequest } from './http.types';
import { POLICY_ENFORCER } from './tokens';

/** What decides a request's operations when the route alone does not (a cluster action's body). */
export interface OperationInput {
  query: Record<string, unknown>;
  body: unknown;
}

/** The rule names a request must pass, all of them: a name, or names chosen from the request. */
export type OperationSpec = string | ((input: OperationInput) => readonly string[]);

export const OPERATION = 'trellis:operation';

/**
 * The policy rules (docs/SECURITY.md, Senlin's names) guarding a controller method. Every
 * authenticated route has one; a route without it is refused (and the route test fails).
 */
export const Operation = (spec: OperationSpec) => SetMetadata(OPERATION, spec);

export function operationsOf(spec: OperationSpec, input: OperationInput): readonly string[] {
  return typeof spec === 'string' ? [spec] : spec(input);
}

/** The caller as oslo.policy's credentials: a token without a project (system scope) has project_id null. */
export function credentialsOf(caller: AuthContext): Credentials {
  return {
    roles: caller.roles,
    project_id: caller.projectId === '' ? null : caller.projectId,
    user_id: caller.userId,
    domain_id: caller.domainId,
    is_admin_project: caller.isAdminProject,
    system_scope: caller.systemScope,
  };
}

/** `allows(rule)` for this caller. The target is the caller's project: objects of any other project are not found (404). */
export function authorizer(enforcer: PolicyEnforcer, caller: AuthContext): (rule: string) => boolean {
  const credentials = credentialsOf(caller);
  const target = { project_id: credentials.project_id, user_id: caller.userId };
  return (rule) => enforcer.enforce(rule, credentials, target);
}

/**
 * Refuses a call whose operation's rule the caller does not pass, with Senlin's policy refusal
 * (senlin.common.policy.enforce raises exception.Forbidden): 403, type Forbidden,
 * "You are not authorized to complete this operation.". Shared by REST (PolicyGuard) and RPC.
 */
export function authorize(allows: (rule: string) => boolean, operations: readonly string[]): void {
  if (operations.length === 0) throw new Error('an operation names no policy rule');
  for (const rule of operations) {
    if (!allows(rule)) throw forbidden();
  }
}

/**
 * Runs after ApiGuard (which authenticated the caller): checks the route's @Operation rules and
 * leaves `allows` on the request for the checks that depend on what is asked (global_project).
 */
@Injectable()
export class PolicyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(POLICY_ENFORCER) private readonly enforcer: PolicyEnforcer,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets)) return true;
    const req = context.switchToHttp().getRequest<HttpRequest>();
    const ctx = req.trellis;
    if (!ctx?.caller) throw new Error('PolicyGuard ran before ApiGuard authenticated the caller');
    const spec = this.reflector.get<OperationSpec | undefined>(OPERATION, context.getHandler());
    if (spec === undefined) throw new Error(`${context.getClass().name}.${context.getHandler().name} has no @Operation`);
    ctx.allows = authorizer(this.enforcer, ctx.caller);
    authorize(ctx.allows, operationsOf(spec, { query: req.query ?? {}, body: req.body }));
    return true;
  }
}
