import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { HttpRequest } from './http.types';
import { checkBodyText, checkQueryParams } from './request-input';

/**
 * The query string and the JSON body of every HTTP request, checked once before any route reads
 * them. A guard rather than a middleware so that it runs where the RPC server runs the same checks:
 * after authentication (a caller without a valid token learns nothing about its parameters, as in
 * Senlin, whose auth middleware came first) and before the policy rule, which reads `dry_run`.
 */
@Injectable()
export class RequestInputGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<HttpRequest>();
    checkQueryParams(req.query);
    checkBodyText(req.body);
    return true;
  }
}
