import { rolesOf, rolesUsed, showsSecondFactor, StaffPolicy, staffMemberOf } from './staff';
import { readMfaRoles, readRoleMap, STAFF_ROLES } from '../../common/domain/staff-roles';

describe('staff', () => {
  describe(showsSecondFactor.name, () => {
    const none = new Set<string>();
    it.each([
      [['pwd', 'otp'], true],
      [['pwd', 'hwk'], true],
      [['face'], false],
      [['pwd', 'face'], true],
      [['mfa'], true],
      [['pwd'], false],
      [['pwd', 'kba'], false],
      [['pwd', 'pin'], false],
      [[], false],
      [['otp', 'sms'], false],
      [['pwd', 'constructor'], false],
      [['toString', 'valueOf'], false],
      [['__proto__', 'pwd'], false],
      [['pwd', 'hasOwnProperty'], false],
      [['pwd', 'geo'], false],
    ])('when amr is %j, then a second factor is %s', (amr, expected) => {
      expect(showsSecondFactor({ amr }, none)).toBe(expected);
    });

    it('when acr is one configured as a second factor, then it counts without amr; another acr does not', () => {
      const acrValues = new Set(['http://schemas.openid.net/pape/policies/2007/06/multi-factor']);
      expect(showsSecondFactor({ amr: [], acr: 'http://schemas.openid.net/pape/policies/2007/06/multi-factor' }, acrValues)).toBe(true);
      expect(showsSecondFactor({ amr: [], acr: '1' }, acrValues)).toBe(false);
    });
  });

  describe(rolesOf.name, () => {
    it('when there is no map, then only values that are a role’s own name grant it, in the roles’ order', () => {
      expect(rolesOf(['operator', 'Support', 'admin', 'support'])).toEqual(['support', 'operator']);
    });

    it('when there is a map, then a group grants what it maps to and a role’s own name grants nothing', () => {
      const map = readRoleMap('{"gw-support": "support", "gw-admins": ["operator", "compliance"]}');
      expect(rolesOf(['gw-admins', 'support'], map)).toEqual(['compliance', 'operator']);
      expect(rolesOf(['gw-support'], map)).toEqual(['support']);
      expect(rolesOf(['__proto__', 'constructor'], map)).toEqual([]);
    });
  });

  describe(rolesUsed.name, () => {
    const everyRole = new Set(STAFF_ROLES);
    it('when the member holds an allowed role and signed in with a second factor, then that role is used', () => {
      expect(rolesUsed({ roles: ['support', 'operator'], secondFactor: true }, ['support', 'compliance'], everyRole)).toEqual({
        roles: ['support'],
        needsSecondFactor: false,
      });
    });
    it('when the allowed role needs a second factor they did not show, then none is used and the second factor is what is missing', () => {
      expect(rolesUsed({ roles: ['support'], secondFactor: false }, ['support'], everyRole)).toEqual({ roles: [], needsSecondFactor: true });
    });
    it('when a role that needs no second factor also allows it, then that one is used', () => {
      expect(rolesUsed({ roles: ['support', 'compliance'], secondFactor: false }, ['support', 'compliance'], new Set(['compliance'] as const))).toEqual({
        roles: ['support'],
        needsSecondFactor: false,
      });
    });
    it('when none of their roles is allowed, then none is used and a second factor would not help', () => {
      expect(rolesUsed({ roles: ['operator'], secondFactor: false }, ['compliance'], everyRole)).toEqual({ roles: [], needsSecondFactor: false });
    });
  });

  it('when the settings are wrong, then they are refused with a reason', () => {
    expect(() => readRoleMap('["support"]')).toThrow(/JSON object/);
    expect(() => readRoleMap('{"g": "admin"}')).toThrow(/support, compliance, operator/);
    expect(() => readRoleMap('{"g": []}')).toThrow(/support, compliance, operator/);
    expect(() => readRoleMap('not json')).toThrow(/JSON object/);
    expect(() => readMfaRoles('support,root')).toThrow(/support, compliance, operator/);
    expect([...readMfaRoles(' support , operator ')]).toEqual(['support', 'operator']);
    expect([...readMfaRoles('')]).toEqual([]);
  });

  it('when a token’s claims are read with the policy, then the member has the mapped roles and whether they showed a second factor', () => {
    const policy = new StaffPolicy(new Set(STAFF_ROLES), new Set(), readRoleMap('{"g-ops": "operator"}'));
    expect(staffMemberOf({ id: 'x', name: 'X', groups: ['g-ops', 'operator'], amr: ['pwd', 'otp'] }, policy)).toEqual({
      id: 'x',
      name: 'X',
      roles: ['operator'],
      secondFactor: true,
    });
  });
});
