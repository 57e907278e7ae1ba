import { EnvelopedBody, freeMap, given, name } from '../shapes/request';
import { map, str, value, view } from '../shapes/response';

/** The request bodies of /v1/profiles. A spec is judged by its profile type (profile-type.ts), not here. */

const ProfileSpec = view('ProfileSpec', {
  type: str({ example: 'os.nova.server', description: 'Profile type; Trellis builds nodes of os.nova.server.' }),
  version: value({ oneOf: [{ type: 'number' }, { type: 'string' }], example: 1.0, description: 'Type version (a JSON number or string).' }),
  properties: map({ description: 'Type-specific properties (flavor, image, networks, ...).', example: { flavor: 'm1.small', image: 'cirros' } }),
});

const spec = given({ description: 'The profile spec, as a parsed YAML/JSON map; checked against its profile type.', allOf: [ProfileSpec.ref] });

export const ProfileCreateBody = new EnvelopedBody('profile', 'ProfileCreate', {
  name: name({ example: 'p1', description: 'Profile name: alphanumeric or "_-.~", starting with a letter.' }).required(),
  spec: spec.required(),
  metadata: freeMap({ example: {}, description: 'Free-form key/value metadata.' }),
});

export const ProfileValidateBody = new EnvelopedBody('profile', 'ProfileValidate', { spec: spec.required() }, { description: 'Microversion 1.2 or later.' });

export const ProfileUpdateBody = new EnvelopedBody(
  'profile',
  'ProfileUpdate',
  { name: name({ example: 'p2' }), metadata: freeMap({ example: { owner: 'ops' } }) },
  { description: 'Only name and metadata can change.', missing: "Malformed request data, missing 'profile' key in request body." },
);
