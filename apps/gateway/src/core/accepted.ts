import type { HttpResponse } from './http.types';
import type { ApiRequest } from './request.decorators';

/** 202 responses point at the action to poll (clients split the Location on `/actions/`). */
export function setActionLocation(res: HttpResponse, req: ApiRequest, actionId: string): void {
  res.setHeader('Location', `${req.baseUrl}/v1/actions/${actionId}`);
}
