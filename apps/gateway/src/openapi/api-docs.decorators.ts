import { applyDecorators, type Type } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiHeader,
  ApiInternalServerErrorResponse,
  ApiNotFoundResponse,
  ApiQuery,
  ApiResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { MAX_API_VERSION } from '../core/api-version';
import { SenlinError } from './response-bodies.dto';
import { MAX_LIST_LIMIT } from '../shared/list-query';

const LOCATION = {
  Location: { description: 'Absolute URL of the action to poll: <base>/v1/actions/<action_id>.', schema: { type: 'string', format: 'uri' } },
};

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
    ApiBadRequestResponse({ type: SenlinError, description: 'Malformed request, with a message naming the field.' }),
    ApiUnauthorizedResponse({ type: SenlinError, description: 'X-Auth-Token missing or not valid.' }),
    ApiResponse({ status: 406, type: SenlinError, description: 'Microversion outside the supported range.' }),
    ApiInternalServerErrorResponse({ type: SenlinError }),
  );
}

/** A 202 that created an action: the body is `type` and Location points at the action. */
export function AcceptedAction(type: Type<unknown>, description: string): MethodDecorator {
  return applyDecorators(ApiAcceptedResponse({ type, description, headers: LOCATION }));
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
  return ApiNotFoundResponse({ type: SenlinError, description: 'No such object (by UUID, name or short id).' });
}

export function Conflict(description: string): MethodDecorator {
  return ApiResponse({ status: 409, type: SenlinError, description });
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
