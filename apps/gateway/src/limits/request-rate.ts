import { Inject, Injectable } from '@nestjs/common';
import { tooManyRequests, type AuthContext } from '@trellis/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import { TokenBuckets } from './token-buckets';

/**
 * The request rate of each project (the token's; the user's for a token without a project) and of
 * each webhook receiver (its trigger carries no token): TRELLIS_REQUESTS_PER_SECOND, in bursts of
 * up to TRELLIS_REQUEST_BURST, then 429 with `Retry-After`. Counted in this process: each gateway
 * replica grants the rate on its own (docs/SECURITY.md, Limits).
 */
@Injectable()
export class RequestRate {
  private readonly buckets: TokenBuckets | null;

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.buckets = config.requestsPerSecond > 0 ? new TokenBuckets(config.requestsPerSecond, config.requestBurst) : null;
  }

  /** A 429 when the caller's project has no request left. */
  admitCaller(caller: AuthContext): void {
    if (caller.projectId) this.admit(`project:${caller.projectId}`, `project ${caller.projectId}`);
    else this.admit(`user:${caller.userId}`, `user ${caller.userId}`);
  }

  /** A 429 when this webhook has no trigger left; the message does not name it (its id is its credential). */
  admitWebhook(receiverId: string): void {
    this.admit(`receiver:${receiverId}`, 'this webhook');
  }

  private admit(key: string, who: string): void {
    const wait = this.buckets?.take(key) ?? 0;
    if (wait === 0) return;
    const { requestsPerSecond, requestBurst } = this.config;
    throw tooManyRequests(
      `Too many requests for ${who}: at most ${requestsPerSecond} a second, in bursts of up to ${requestBurst}; try again in ${Math.ceil(wait)} s.`,
      wait,
      'RateLimitExceeded',
    );
  }
}
