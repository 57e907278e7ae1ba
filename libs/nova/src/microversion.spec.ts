import { atLeast, chooseMicroversion, compareMicroversions, readVersionDocument } from './microversion';

describe('microversions', () => {
  it('compare numerically', () => {
    expect(compareMicroversions('2.9', '2.10')).toBeLessThan(0);
    expect(compareMicroversions('2.64', '2.64')).toBe(0);
    expect(atLeast('2.93', '2.64')).toBe(true);
    expect(atLeast('2.60', '2.64')).toBe(false);
  });

  it.each([
    [{ max: '2.93', min: '2.1', href: null }, '2.93'],
    [{ max: '2.100', min: '2.1', href: null }, '2.93'],
    [{ max: '2.60', min: '2.1', href: null }, '2.60'],
    [{ max: null, min: null, href: null }, '2.1'],
  ])('choose min(offered, 2.93) from %j', (doc, expected) => expect(chooseMicroversion(doc)).toBe(expected));

  it('read the v2.1 document and the root list', () => {
    expect(readVersionDocument({ version: { id: 'v2.1', version: '2.93', min_version: '2.1' } })).toEqual({ max: '2.93', min: '2.1', href: null });
    expect(
      readVersionDocument({
        versions: [
          { id: 'v2.0', version: '', min_version: '' },
          { id: 'v2.1', version: '2.79', min_version: '2.1', links: [{ rel: 'self', href: 'http://n/v2.1/' }] },
        ],
      }),
    ).toEqual({ max: '2.79', min: '2.1', href: 'http://n/v2.1/' });
    expect(readVersionDocument({ servers: [] })).toBeNull();
    expect(readVersionDocument('<html>')).toBeNull();
  });
});
