import type { ErrorCode } from '@trellis/common';
import { int, optional, str, view, type OutOf } from '../shapes/response';

const SenlinErrorDetail = view('SenlinErrorDetail', {
  code: int({ example: 400 }),
  message: str({ example: "'spec' is a required property" }),
  type: str({ example: 'BadRequest', description: 'Senlin exception class: HTTPBadRequest, BadRequest, ResourceNotFound, ActionConflict, ...' }),
  error_id: optional(str({ description: 'Set on 500s: the id to find the failure in the logs.' })),
});

/** Senlin's error document (fault middleware): WebOb's title and explanation plus the error itself, for every 4xx and 5xx. */
export const SenlinError = view('SenlinError', {
  code: int({ example: 400 }),
  title: str({ example: 'Bad Request' }),
  explanation: str({ example: 'The server could not comply with the request since it is either malformed or otherwise incorrect.' }),
  error: SenlinErrorDetail,
});

export type SenlinErrorBody = OutOf<typeof SenlinError>;

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
  429: ['Too Many Requests', 'The client has sent too many requests in a given amount of time.'],
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
  TOO_MANY_REQUESTS: 429,
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
  429: 'HTTPTooManyRequests',
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
