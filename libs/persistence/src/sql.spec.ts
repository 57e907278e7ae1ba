import { sqlTextList } from './sql';

describe('sqlTextList', () => {
  it('writes plain names as text literals', () => {
    expect(sqlTextList(['READY', 'WAITING_LIFECYCLE_COMPLETION'])).toBe("'READY', 'WAITING_LIFECYCLE_COMPLETION'");
    expect(sqlTextList(['availability_zones', 'senlin.policy.scaling-1.0'])).toBe("'availability_zones', 'senlin.policy.scaling-1.0'");
  });

  it('refuses what would need quoting, and an empty list', () => {
    for (const bad of ["it's", 'a b', "x'); DROP TABLE actions; --", 'back\\slash', '']) {
      expect(() => sqlTextList(['READY', bad])).toThrow('not a plain name');
    }
    expect(() => sqlTextList([])).toThrow('an empty list');
  });
});
