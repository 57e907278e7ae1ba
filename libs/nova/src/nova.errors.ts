import { DomainError } from '@trellis/common';

/** How a call to Nova fails: as any call to an OpenStack service does (libs/identity), or for want of a microversion. */
export { NovaError, NovaForbiddenError, NovaResponseError, isNovaError, type NovaErrorDetails, type OpenStackService } from '@trellis/identity';

/** The requested operation needs a compute microversion this Nova does not offer. */
export class NovaMicroversionError extends DomainError {
  constructor(message: string) {
    super('BAD_REQUEST', message, 'BadRequest', false);
    this.name = 'NovaMicroversionError';
  }
}
