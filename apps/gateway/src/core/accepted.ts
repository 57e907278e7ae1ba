import type { HttpResponse } from './http.types';
import type { ApiRequest } from './request.decorators';

/** 202 responses point at the action to poll (clients split the Location on `/actions/`). */
export function setActionLocation(res: HttpResponse, req: ApiRequest, actionId: string): void {
  res.setHeader('Location', `${req.baseUrl}/v1/actions/${actionId}`);
}

/**
 * The body of Senlin's 202 for a delete, the JSON document `null`, as a passthrough handler returns
 * it: Nest sends no body at all for a returned `null`, so the text is sent with a JSON type.
 */
export function acceptedNull(res: HttpResponse, req: ApiRequest, actionId: string): string {
  setActionLocation(res, req, actionId);
  res.status(202).type('application/json');
  return 'null';
}
