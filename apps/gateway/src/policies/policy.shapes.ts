import { EnvelopedBody, given, name } from '../shapes/request';
import { map, str, value, view } from '../shapes/response';

/** The request bodies of /v1/policies. A spec is judged by its policy type (libs/policies), not here. */

const PolicySpec = view('PolicySpec', {
  type: str({ example: 'senlin.policy.zone_placement', description: 'Policy type name, without the version.' }),
  version: value({ oneOf: [{ type: 'number' }, { type: 'string' }], example: 1.0 }),
  properties: map({ example: { zones: [{ name: 'az1', weight: 100 }] }, description: 'Checked against the policy type schema.' }),
});

const spec = given({ allOf: [PolicySpec.ref] }).required();

export const PolicyCreateBody = new EnvelopedBody(
  'policy',
  'PolicyCreate',
  { name: name({ example: 'zp1' }).required(), spec },
  { description: 'Both name and spec are required; no other keys.' },
);

export const PolicyValidateBody = new EnvelopedBody('policy', 'PolicyValidate', { spec }, { description: 'Microversion 1.2 or later.' });

export const PolicyUpdateBody = new EnvelopedBody(
  'policy',
  'PolicyUpdate',
  { name: name({ example: 'zp2', description: 'The new name (the only updatable field).' }).required() },
  { missing: "Malformed request data, missing 'policy' key in request body." },
);
