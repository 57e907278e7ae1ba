import { gatewayRoutes } from '../../apps/gateway/src/testing/routes';

/**
 * The operations the REST fuzzer calls: every route the gateway serves (read from the controllers'
 * Nest metadata, public ones included, so a new route is fuzzed the day it is added), with its query
 * parameters and request body schema from the gateway's own OpenAPI document (GET /docs-json).
 */

export interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  oneOf?: Schema[];
  allOf?: Schema[];
  $ref?: string;
  additionalProperties?: boolean | Schema;
  minimum?: number;
  maximum?: number;
  example?: unknown;
}

interface DocOperation {
  parameters?: Array<{ name: string; in: string }>;
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, DocOperation>>;
  components: { schemas: Record<string, Schema> };
}

export interface Operation {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  /** `/v1/clusters/{cluster_id}` */
  template: string;
  /** `POST /v1/clusters/{cluster_id}/actions` */
  label: string;
  pathParams: string[];
  queryParams: string[];
  /** the request body's schema, references resolved; null when the route takes no body */
  body: Schema | null;
  public: boolean;
}

/** Follows `$ref` and the one-element `allOf` @nestjs/swagger writes for a described property. */
export function resolveSchema(doc: OpenApiDocument, schema: Schema | undefined): Schema {
  if (!schema) return {};
  if (schema.allOf?.length === 1) return { ...resolveSchema(doc, schema.allOf[0]), ...without(schema, 'allOf') };
  if (!schema.$ref) return schema;
  const found = doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')];
  if (!found) throw new Error(`the OpenAPI document has a dangling reference ${schema.$ref}`);
  return resolveSchema(doc, found);
}

const without = (schema: Schema, key: keyof Schema): Schema => {
  const copy = { ...schema };
  delete copy[key];
  return copy;
};

export function fuzzedOperations(doc: OpenApiDocument): Operation[] {
  return gatewayRoutes().map((route) => {
    const template = route.path.replace(/:([A-Za-z_]+)/g, '{$1}');
    const documented = doc.paths[template]?.[route.method.toLowerCase()];
    const parameters = documented?.parameters ?? [];
    const schema = documented?.requestBody?.content?.['application/json']?.schema;
    return {
      method: route.method,
      template,
      label: `${route.method} ${template}`,
      pathParams: [...template.matchAll(/\{([A-Za-z_]+)\}/g)].map((m) => m[1]),
      queryParams: parameters.filter((p) => p.in === 'query').map((p) => p.name),
      body: schema ? resolveSchema(doc, schema) : null,
      public: route.public,
    };
  });
}

/** Operations of the document that no route serves: the fuzzer would miss them (the spec asserts none). */
export function undocumentedOrUnserved(doc: OpenApiDocument, operations: Operation[]): string[] {
  const served = new Set(operations.map((o) => o.label));
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.keys(item)
      .map((method) => `${method.toUpperCase()} ${path}`)
      .filter((label) => !served.has(label)),
  );
}
