import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { PUBLIC_ROUTE } from '../core/api.guard';
import { OPERATION, type OperationSpec } from '../core/policy.guard';
import { GATEWAY_CONTROLLERS } from '../gateway.module';
import { GatewayMetricsController } from '../health/health.controller';

export interface RestRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** `/v1/clusters/:cluster_id`, as Nest routes it */
  path: string;
  /** `ClustersController.get` */
  handler: string;
  /** the @Operation, undefined when the method has none */
  operation: OperationSpec | undefined;
  /** served without a token (@PublicRoute on the controller or the method) */
  public: boolean;
}

const join = (...parts: string[]) => '/' + parts.flatMap((p) => p.split('/')).filter(Boolean).join('/');

/** A controller's methods, its own and those it inherits (/healthz, /readyz, /metrics), as Nest routes them. */
function methodNames(proto: object): string[] {
  const names = new Set<string>();
  for (let p = proto; p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const name of Object.getOwnPropertyNames(p)) names.add(name);
  }
  return [...names];
}

/**
 * Every route the gateway serves with the default configuration (/metrics included), public ones
 * too, read from the controllers' Nest metadata.
 */
export function gatewayRoutes(): RestRoute[] {
  const routes: RestRoute[] = [];
  for (const controller of [...GATEWAY_CONTROLLERS, GatewayMetricsController]) {
    const publicController = Reflect.getMetadata(PUBLIC_ROUTE, controller) === true;
    const prefixes = [Reflect.getMetadata(PATH_METADATA, controller) as string | string[]].flat();
    const proto = controller.prototype as unknown as Record<string, unknown>;
    for (const name of methodNames(proto)) {
      const fn = proto[name];
      if (name === 'constructor' || typeof fn !== 'function') continue;
      const method = Reflect.getMetadata(METHOD_METADATA, fn) as RequestMethod | undefined;
      if (method === undefined) continue;
      const paths = [Reflect.getMetadata(PATH_METADATA, fn) as string | string[]].flat();
      for (const prefix of prefixes) {
        for (const path of paths) {
          routes.push({
            method: RequestMethod[method] as RestRoute['method'],
            path: join(prefix, path),
            handler: `${controller.name}.${name}`,
            operation: Reflect.getMetadata(OPERATION, fn) as OperationSpec | undefined,
            public: publicController || Reflect.getMetadata(PUBLIC_ROUTE, fn) === true,
          });
        }
      }
    }
  }
  return routes;
}

/** Every authenticated route the gateway serves. */
export function authenticatedRoutes(): RestRoute[] {
  return gatewayRoutes().filter((r) => !r.public);
}
