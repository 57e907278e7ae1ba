import { Inject, Injectable } from '@nestjs/common';
import { tooManyRequests, type AuthContext } from '@trellis/common';
import { GATEWAY_CONFIG, type GatewayConfig } from '../core/gateway-config';
import { TokenBuckets } from './token-buckets';

/**
 * The request rate of each project (the token's; the user's for a token without a project) and of
 * each webhook receiver (its trigger carries no token): TRELLIS_REQUESTS_PER_SECOND, in bursts of
 * up to TRELLIS_REQUEST_BURST, then 429 with `Retry-After`. A project's RPC requests (other
 * services) have buckets of their own, TRELLIS_RPC_REQUESTS_PER_SECOND and TRELLIS_RPC_REQUEST_BURST,
 * so neither a person's clicking nor a service's burst uses up the other's. Counted in this process:
 * each gateway replica grants the rate on its own (docs/SECURITY.md, Limits).
 */
@Injectable()
export class RequestRate {
  private readonly buckets: TokenBuckets | null;
  private readonly rpcBuckets: TokenBuckets | null;

  constructor(@Inject(GATEWAY_CONFIG) private readonly config: GatewayConfig) {
    this.buckets = config.requestsPerSecond > 0 ? new TokenBuckets(config.requestsPerSecond, config.requestBurst) : null;
    this.rpcBuckets = config.rpcRequestsPerSecond > 0 ? new TokenBuckets(config.rpcRequestsPerSecond, config.rpcRequestBurst) : null;
  }

  /** A 429 when the caller's project has no request left on this transport. */
  admitCaller(caller: AuthContext, via: 'rest' | 'rpc'): void {
    const [key, who] = caller.projectId ? [`project:${caller.projectId}`, `project ${caller.projectId}`] : [`user:${caller.userId}`, `user ${caller.userId}`];
    if (via === 'rpc') this.admit(this.rpcBuckets, key, `${who} over RPC`, this.config.rpcRequestsPerSecond, this.config.rpcRequestBurst);
    else this.admit(this.buckets, key, who, this.config.requestsPerSecond, this.config.requestBurst);
  }

  /** A 429 when this webhook has no trigger left; the message does not name it (its id is its credential). */
  admitWebhook(receiverId: string): void {
    this.admit(this.buckets, `receiver:${receiverId}`, 'this webhook', this.config.requestsPerSecond, this.config.requestBurst);
  }

  private admit(buckets: TokenBuckets | null, key: string, who: string, perSecond: number, burst: number): void {
    const wait = buckets?.take(key) ?? 0;
    if (wait === 0) return;
    throw tooManyRequests(
      `Too many requests for ${who}: at most ${perSecond} a second, in bursts of up to ${burst}; try again in ${Math.ceil(wait)} s.`,
      wait,
      'RateLimitExceeded',
    );
  }
}
