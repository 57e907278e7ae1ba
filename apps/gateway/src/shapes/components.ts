import type { ReferenceObject, SchemaObject } from '@nestjs/swagger';

export type Schema = SchemaObject | ReferenceObject;

/** What a request or response shape shows the OpenAPI document: its component name and a reference to it. */
export interface NamedShape {
  readonly name: string;
  readonly ref: ReferenceObject;
}

/**
 * The OpenAPI document's named schemas. Each is registered by the one shape that defines it (request
 * bodies beside the services that read them, responses beside the views that build them), and
 * openapi.ts lists them all: the document holds no schema that the code does not read or write.
 */
const components = new Map<string, SchemaObject>();

export function registerComponent(name: string, schema: SchemaObject): ReferenceObject {
  if (components.has(name)) throw new Error(`Two API shapes are named ${name}.`);
  components.set(name, schema);
  return { $ref: `#/components/schemas/${name}` };
}

export function componentSchemas(): Record<string, SchemaObject> {
  return Object.fromEntries([...components].sort(([a], [b]) => a.localeCompare(b)));
}

/** A reference that carries its own description, in the form @nestjs/swagger writes one. */
export function described(ref: ReferenceObject, description: string | undefined): Schema {
  return description === undefined ? ref : { description, allOf: [ref] };
}
