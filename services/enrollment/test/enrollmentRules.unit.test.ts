import { describe, expect, it } from 'vitest';
import { fromWire } from '@efs/contracts';
import { assertDevicesOfSite, assertEligible, assertSiteComplete, checkFormAnswers, missingSiteFields, termsOf } from '../src/domain/enrollmentRules.ts';
import { DeviceViewFields, ProgramViewFields, SiteViewFields, type DeviceView, type ProgramView, type SiteView } from '../src/domain/readModels.ts';
import { deviceMessage, errorOf, programMessage, siteMessage } from './fixtures.ts';

const site = (over: Partial<SiteView> = {}): SiteView => ({ ...fromWire(SiteViewFields, siteMessage('s1')), ...over });
const program = (over: Partial<ProgramView> = {}): ProgramView => ({ ...fromWire(ProgramViewFields, programMessage({ id: 'p1' })), ...over });
const device = (id: string, type: DeviceView['type'] = 'BATTERY'): DeviceView => fromWire(DeviceViewFields, deviceMessage('s1', id, { type }));

describe('site information completeness', () => {
  it('is complete with a person name or a company name', () => {
    expect(missingSiteFields(site())).toEqual([]);
    expect(missingSiteFields(site({ first_name: null, last_name: null, company_name: 'ACME' }))).toEqual([]);
  });

  it('lists every missing field; blank counts as missing', () => {
    expect(missingSiteFields(site({ first_name: null, last_name: ' ', email: null, street_address: null, city: null, state_code: null, zip_code: null }))).toEqual([
      'first_name',
      'last_name',
      'email',
      'street_address',
      'city',
      'state_code',
      'zip_code',
    ]);
    const err = errorOf(() => assertSiteComplete(site({ email: null, zip_code: '' })));
    expect(err.code).toBe('SITE_INFO_INCOMPLETE');
    expect(err.status).toBe(422);
    expect(err.errors).toEqual([
      { message: 'email is required', path: 'email' },
      { message: 'zip_code is required', path: 'zip_code' },
    ]);
  });
});

describe('eligibility, ownership, terms', () => {
  it('refuses a zip code the program does not cover and a device type it does not take', () => {
    expect(() => assertEligible(program(), site(), [device('d1')])).not.toThrow();
    expect(errorOf(() => assertEligible(program(), site({ zip_code: '88803' }), [device('d1')])).code).toBe('NOT_ELIGIBLE');
    const err = errorOf(() => assertEligible(program(), site(), [device('d1'), device('ev', 'EV_CHARGER')]));
    expect(err.code).toBe('NOT_ELIGIBLE');
    expect(err.errors).toEqual([{ message: 'Device type EV_CHARGER is not eligible for the program', path: 'device_ids/ev' }]);
  });

  it('devices not found at the site answer 404', () => {
    const err = errorOf(() => assertDevicesOfSite(['d1', 'd2'], [device('d1')], 's1'));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.errors).toEqual([{ message: 'Device not found at this site', path: 'device_ids/d2' }]);
  });

  it('terms: required agreement to the current version; recorded as the current version', () => {
    const withTerms = program({ terms_and_conditions_version: 'v2' });
    expect(termsOf(withTerms, true, 'v2')).toEqual({ has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: 'v2' });
    for (const [agreed, version] of [[undefined, 'v2'], [false, 'v2'], [null, 'v2'], [true, 'v1'], [true, undefined]] as const) {
      expect(errorOf(() => termsOf(withTerms, agreed, version)).code).toBe('TERMS_NOT_ACCEPTED');
    }
    expect(termsOf(program(), undefined, undefined)).toEqual({ has_agreed_to_terms_and_conditions: null, terms_and_conditions_version: null });
    expect(termsOf(program(), true, 'whatever')).toEqual({ has_agreed_to_terms_and_conditions: true, terms_and_conditions_version: null });
  });
});

describe('enrollment form answers', () => {
  const p = program({
    enrollment_form: [
      { name: 'account', label: 'Account', type: 'string', hint: '' },
      { name: 'kw', label: 'kW', type: 'number', hint: '' },
      { name: 'owner', label: 'Owner', type: 'boolean', hint: '' },
    ],
  });

  it('accepts every item answered with its type, returned in form order', () => {
    expect(checkFormAnswers(p, [{ name: 'owner', value: 'true' }, { name: 'kw', value: '7.5' }, { name: 'account', value: 'A-1' }])).toEqual([
      { name: 'account', value: 'A-1' },
      { name: 'kw', value: '7.5' },
      { name: 'owner', value: 'true' },
    ]);
    expect(checkFormAnswers(program(), [])).toEqual([]);
  });

  it('refuses missing, mistyped, unknown and repeated answers with 400 naming each', () => {
    const err = errorOf(() => checkFormAnswers(p, [{ name: 'kw', value: 'seven' }, { name: 'owner', value: 'yes' }, { name: 'extra', value: 'x' }, { name: 'kw', value: '1' }]));
    expect(err.code).toBe('VALIDATION_ERROR');
    expect(err.status).toBe(400);
    expect(err.errors.map((e) => e.path)).toEqual([
      'program_specific_attributes/extra',
      'program_specific_attributes/kw',
      'program_specific_attributes/account',
      'program_specific_attributes/kw',
      'program_specific_attributes/owner',
    ]);
    expect(err.detail[0]!.loc).toEqual(['body', 'program_specific_attributes', '2', 'extra']);
    expect(errorOf(() => checkFormAnswers(p, [{ name: 'account', value: '  ' }, { name: 'kw', value: '1' }, { name: 'owner', value: 'false' }])).errors).toEqual([
      { message: 'account must not be blank', path: 'program_specific_attributes/account' },
    ]);
  });
});
