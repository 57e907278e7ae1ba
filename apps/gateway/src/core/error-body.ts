import type { ErrorCode } from '@trellis/common';

/** Senlin's error document (fault middleware): WebOb's title and explanation plus the error itself. */
export interface SenlinErrorBody {
  code: number;
  title: string;
  explanation: string;
  error: { code: number; message: string; type: string; error_id?: string };
}

const BAD_REQUEST_EXPLANATION =
  'The server could not comply with the request since it is either malformed or otherwise incorrect.';

const TITLES: Record<number, [string, string]> = {
  400: ['Bad Request', BAD_REQUEST_EXPLANATION],
  401: [
    'Unauthorized',
    'This server could not verify that you are authorized to access the document you requested. ' +
      'Either you supplied the wrong credentials (e.g., bad password), or your browser does not understand how to supply the credentials required.',
  ],
  403: ['Forbidden', 'Access was denied to this resource.'],
  404: ['Not Found', 'The resource could not be found.'],
  405: ['Method Not Allowed', 'The method is not allowed for this resource.'],
  406: ['Not Acceptable', BAD_REQUEST_EXPLANATION],
  408: ['Request Timeout', 'The server has waited too long for the request to be sent by the client.'],
  409: ['Conflict', 'There was a conflict when trying to complete your request.'],
  413: ['Request Entity Too Large', 'The body of your request was too large for this server.'],
  415: ['Unsupported Media Type', 'The request media type is not supported by this server.'],
  422: ['Unprocessable Entity', 'Unable to process the contained instructions'],
  431: ['Request Header Fields Too Large', 'The request header fields were too large'],
  500: ['Internal Server Error', 'The server has either erred or is incapable of performing the requested operation.'],
  503: ['Service Unavailable', 'The server is currently unavailable. Please try again at a later time.'],
};

export const STATUS_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  INVALID_SPEC: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  FORBIDDEN: 403,
  UNAUTHORIZED: 401,
  NOT_ACCEPTABLE: 406,
  UNPROCESSABLE: 422,
  UNAVAILABLE: 503,
  INTERNAL: 500,
};

/** WebOb's class names, for errors raised by the HTTP layer rather than by domain code */
export const HTTP_TYPE: Record<number, string> = {
  400: 'HTTPBadRequest',
  401: 'HTTPUnauthorized',
  403: 'HTTPForbidden',
  404: 'HTTPNotFound',
  405: 'HTTPMethodNotAllowed',
  406: 'HTTPNotAcceptable',
  408: 'HTTPRequestTimeout',
  409: 'HTTPConflict',
  413: 'HTTPRequestEntityTooLarge',
  415: 'HTTPUnsupportedMediaType',
  431: 'HTTPRequestHeaderFieldsTooLarge',
  500: 'HTTPInternalServerError',
  503: 'HTTPServiceUnavailable',
};

export function senlinErrorBody(status: number, message: string, type: string, errorId?: string): SenlinErrorBody {
  const [title, explanation] = TITLES[status] ?? TITLES[status >= 500 ? 500 : 400];
  const error: SenlinErrorBody['error'] = { code: status, message, type };
  if (errorId !== undefined) error.error_id = errorId;
  return { code: status, title, explanation, error };
}
