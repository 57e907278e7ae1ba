import { applyDecorators } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBody,
  ApiCreatedResponse,
  ApiHeader,
  ApiInternalServerErrorResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiQuery,
  ApiResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { MAX_API_VERSION } from '../core/api-version';
import { SenlinError } from '../core/error-body';
import type { NamedShape } from '../shapes/components';
import type { View } from '../shapes/response';
import { MAX_LIST_LIMIT } from '../shared/list-query';

const LOCATION = {
  Location: { description: 'Absolute URL of the action to poll: <base>/v1/actions/<action_id>.', schema: { type: 'string', format: 'uri' } },
};

type Returns<T> = (...args: never[]) => T | Promise<T>;

/**
 * A method decorator that holds the handler to the documented answer: the compiler refuses a
 * handler whose return type is not the view's type.
 */
export type Answers<T> = <M extends Returns<T>>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<M>) => void;

const answers =
  <T>(decorator: MethodDecorator): Answers<T> =>
  (target, key, descriptor) =>
    decorator(target, key, descriptor);

/** The request body: one of the shapes the services read it with. */
export function RequestBody(shape: NamedShape, options: { description?: string; required?: boolean } = {}): MethodDecorator {
  return ApiBody({ schema: shape.ref, ...options });
}

/** 200 with this view. */
export function Ok<T>(view: View<T>, description?: string): Answers<T> {
  return answers(ApiOkResponse({ schema: view.ref, description }));
}

/** 201 with this view. */
export function Created<T>(view: View<T>): Answers<T> {
  return answers(ApiCreatedResponse({ schema: view.ref }));
}

/** Senlin's error document, for a status a route answers with besides those every route has. */
export function Fails(status: number, description: string): MethodDecorator {
  return ApiResponse({ status, schema: SenlinError.ref, description });
}

/**
 * What every /v1 controller shares: the microversion header, and Senlin's error document for the
 * failures any route can answer with (each operation adds the ones peculiar to it).
 */
export function SenlinApi(): ClassDecorator {
  return applyDecorators(
    ApiHeader({
      name: 'OpenStack-API-Version',
      required: false,
      description: `Microversion, "clustering 1.x" (1.0-${MAX_API_VERSION} or "latest"); absent means 1.0. Echoed on success.`,
      schema: { type: 'string', example: `clustering ${MAX_API_VERSION}` },
    }),
    ApiBadRequestResponse({ schema: SenlinError.ref, description: 'Malformed request, with a message naming the field.' }),
    ApiUnauthorizedResponse({ schema: SenlinError.ref, description: 'X-Auth-Token missing or not valid.' }),
    ApiResponse({ status: 406, schema: SenlinError.ref, description: 'Microversion outside the supported range.' }),
    ApiInternalServerErrorResponse({ schema: SenlinError.ref }),
  );
}

/** A 202 that created an action: the body is the view and Location points at the action. */
export function AcceptedAction<T>(view: View<T>, description: string): Answers<T> {
  return answers(ApiAcceptedResponse({ schema: view.ref, description, headers: LOCATION }));
}

/** Senlin answers a delete with the JSON document `null`, 202 and the Location of the delete action. */
export function AcceptedDelete(): MethodDecorator {
  return applyDecorators(
    ApiAcceptedResponse({
      description: 'The delete action was created; the body is the JSON document null.',
      headers: LOCATION,
      schema: { type: 'object', nullable: true, example: null },
    }),
    ApiQuery({ name: 'force', required: false, type: Boolean, description: 'Delete even while busy (>= 1.8).' }),
    NotFound(),
  );
}

export function NotFound(): MethodDecorator {
  return ApiNotFoundResponse({ schema: SenlinError.ref, description: 'No such object (by UUID, name or short id).' });
}

export function Conflict(description: string): MethodDecorator {
  return Fails(409, description);
}

/** Senlin's list parameters; filters are per collection and may repeat. */
export function ListQuery(options: { filters: readonly string[]; sortKeys: readonly string[]; paging?: boolean }): MethodDecorator {
  const decorators = options.filters.map((name) =>
    ApiQuery({
      name,
      required: false,
      type: String,
      isArray: true,
      description: `Filter on ${name} (repeatable).`,
    }),
  );
  decorators.push(
    ApiQuery({ name: 'sort', required: false, type: String, description: `key[:asc|desc],... over ${options.sortKeys.join(', ')}.` }),
  );
  if (options.paging !== false) {
    decorators.push(
      ApiQuery({ name: 'limit', required: false, type: Number, description: `Page size; at most ${MAX_LIST_LIMIT} (also without limit), a larger one is lowered to it.` }),
      ApiQuery({ name: 'marker', required: false, type: String, description: 'Id of the last object of the previous page.' }),
      ApiQuery({ name: 'global_project', required: false, type: Boolean, description: 'All projects (admin only).' }),
    );
  }
  return applyDecorators(...decorators);
}
