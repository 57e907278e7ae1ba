import { ListItem, MapItem, SchemaItem, SchemaMap } from './schema';

export interface RenderedSchemaItem {
  type: string;
  required: boolean;
  updatable: boolean;
  description?: string;
  default?: unknown;
  constraints?: Array<{ type: string; constraint: unknown[] }>;
  schema?: Record<string, RenderedSchemaItem>;
}

/** A schema as the policy-type API shows it (senlin-api.md §3); policy properties are never updatable. */
export function renderSchema(schema: SchemaMap): Record<string, RenderedSchemaItem> {
  const out: Record<string, RenderedSchemaItem> = {};
  for (const [key, item] of Object.entries(schema)) out[key] = renderItem(item);
  return out;
}

export function renderItem(item: SchemaItem): RenderedSchemaItem {
  const out: RenderedSchemaItem = { type: item.type, required: item.required, updatable: false };
  if (item.description !== undefined) out.description = item.description;
  if (item.default !== null) out.default = structuredClone(item.default);
  if (item.constraints.length > 0) out.constraints = item.constraints.map((c) => c.render());
  if (item instanceof MapItem && item.schema) out.schema = renderSchema(item.schema);
  if (item instanceof ListItem && item.schema) out.schema = { '*': renderItem(item.schema) };
  return out;
}
