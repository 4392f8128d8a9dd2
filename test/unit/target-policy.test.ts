import type { LookupAddress, LookupOptions } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { v1ExecuteSchema } from '../../lambdas/core/schemas.ts';
import { LOCAL_DEFAULT_TARGETS } from '../../lambdas/platform/config.ts';
import { TargetRefusedError } from '../../lambdas/platform/errors.ts';
import { parseIp } from '../../lambdas/platform/ip-address.ts';
import { createHttpClient, type HttpClient } from '../../lambdas/upstream/http-client.ts';
import {
  type BaseLookup,
  type CompiledTargetPolicy,
  checkResolvedAddress,
  checkTarget,
  classifyAddress,
  compileTargetPolicy,
  createPolicyLookup,
  findTargetRefusal,
} from '../../lambdas/upstream/target-policy.ts';

const compile = (allowedTargets: readonly string[] = [], allowedDatabases: readonly string[] = []) =>
  compileTargetPolicy({ allowedTargets, allowedDatabases });

const OPEN = compile(); // Lambda default: any public address
/** The one refusal for a name not listed by name, whatever DNS answered (docs/target-policy.md). */
const unreachable = (host: string) =>
  `Target ${host} refused: it does not resolve to an address this proxy may reach`;
const LOCAL = compile(LOCAL_DEFAULT_TARGETS); // local server default

/** Runs `fn` and returns the TargetRefusedError it threw, or undefined when it did not throw. */
function refusal(fn: () => unknown): TargetRefusedError | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(TargetRefusedError);
    return error as TargetRefusedError;
  }
  return undefined;
}

describe('classifyAddress', () => {
  it.each([
    ['0.0.0.0', 'always-refused'],
    ['0.255.255.255', 'always-refused'],
    ['169.254.169.254', 'always-refused'],
    ['::', 'always-refused'],
    ['fe80::1', 'always-refused'],
    ['febf:ffff::1', 'always-refused'],
    ['fd00:ec2::254', 'always-refused'],
    ['::ffff:169.254.169.254', 'always-refused'],
    ['::ffff:0.0.0.0', 'always-refused'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.255', 'private'],
    ['127.0.0.1', 'private'],
    ['127.255.255.254', 'private'],
    ['::1', 'private'],
    ['fc00::1', 'private'],
    ['fd12:3456::1', 'private'],
    ['fd00:ec2::253', 'private'],
    ['::ffff:127.0.0.1', 'private'],
    ['::ffff:7f00:1', 'private'],
    ['::ffff:a00:1', 'private'],
    ['1.1.1.1', 'public'],
    ['172.15.255.255', 'public'],
    ['172.32.0.0', 'public'],
    ['100.63.255.255', 'public'],
    ['100.128.0.0', 'public'],
    ['169.253.255.255', 'public'],
    ['1.0.0.0', 'public'],
    ['2001:4860:4860::8888', 'public'],
    // Multicast, reserved and broadcast
    ['224.0.0.1', 'always-refused'],
    ['239.255.255.255', 'always-refused'],
    ['240.0.0.1', 'always-refused'],
    ['255.255.255.255', 'always-refused'],
    ['::ffff:255.255.255.255', 'always-refused'],
    ['ff02::1', 'always-refused'],
    ['ff0e::1', 'always-refused'],
    ['223.255.255.255', 'public'],
    ['feff::1', 'private'],
    ['fec0::1', 'private'], // site-local; was 'public' before site-local joined PRIVATE_RANGES
    ['fefe:ffff::1', 'private'],
    // IPv4-carrying IPv6 forms: the more restrictive of the address and the IPv4 it carries
    ['64:ff9b::169.254.169.254', 'always-refused'],
    ['64:ff9b::a00:5', 'private'],
    ['64:ff9b::7f00:1', 'private'],
    ['64:ff9b::808:808', 'public'],
    ['64:ff9b::', 'always-refused'],
    ['64:ff9b::e000:1', 'always-refused'],
    ['::169.254.169.254', 'always-refused'],
    ['::10.0.0.5', 'private'],
    ['::127.0.0.1', 'private'],
    ['::8.8.8.8', 'public'],
    ['::2', 'always-refused'], // ::0.0.0.2 is in 0.0.0.0/8; was 'public' before ::/96 was decoded
    ['::ffff:0:169.254.169.254', 'always-refused'],
    ['::ffff:0:10.0.0.5', 'private'],
    ['::ffff:0:8.8.8.8', 'public'],
    ['2002:a9fe:a9fe::1', 'always-refused'],
    ['2002:a00:5::1', 'private'],
    ['2002:c0a8:101:1::1', 'private'],
    ['2002:808:808::1', 'public'],
    ['2002::1', 'always-refused'], // relay 0.0.0.0
    // Not decoded: private whatever they carry
    ['64:ff9b:1::808:808', 'private'],
    ['64:ff9b:1:ffff::1', 'private'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffa', 'private'], // Teredo
    ['2001::1', 'private'],
    ['2001:1::1', 'public'],
    ['64:ff9b:2::1', 'public'],
    ['2003::1', 'public'],
  ])('classifyAddress(%s) is %s', (text, kind) => expect(classifyAddress(parseIp(text)!)).toBe(kind));
});

describe('compileTargetPolicy', () => {
  it('sorts entries into names, wildcards and CIDRs (case-insensitive, trailing dot ignored)', () => {
    const policy = compile([
      ' ERP.Example.com. ',
      '*.Example.ORG',
      '10.0.0.0/8',
      '192.168.1.5',
      '[::1]',
      'bücher.ch',
    ]);
    expect([...policy.exactNames]).toEqual(['erp.example.com', 'xn--bcher-kva.ch']);
    expect(policy.wildcardSuffixes).toEqual(['.example.org']);
    expect(policy.cidrs).toEqual([
      { family: 4, network: 0x0a000000n, prefix: 8 },
      { family: 4, network: 0xc0a80105n, prefix: 32 },
      { family: 6, network: 1n, prefix: 128 },
    ]);
    expect(policy.restricted).toBe(true);
    expect(compile().restricted).toBe(false);
  });

  it.each([
    '',
    '  ',
    '10.0.0.0/33',
    '10.0.0.300',
    '2130706433',
    '127.1',
    'http://erp.example.com',
    'erp.example.com:8069',
    'erp.example.com/x',
    '*',
    '*.',
    'a.*.example.com',
    'erp*.example.com',
    'user@host',
    'two words',
    '-bad.example.com',
    'a..b',
    'fe80::1%eth0',
  ])('an invalid entry %j throws an Error naming it', (entry) => {
    expect(() => compile([entry])).toThrow(/Invalid ERP_ALLOWED_TARGETS entry/);
    if (entry.trim() !== '') expect(() => compile([entry])).toThrow(entry);
  });

  it('accepts always-refused ranges but they stay refused', () => {
    const policy = compile(['169.254.0.0/16', '0.0.0.0/0', '::/0', 'fd00:ec2::254']);
    for (const url of [
      'http://169.254.169.254/',
      'http://0.0.0.0/',
      'http://[::]/',
      'http://[fd00:ec2::254]/',
    ]) {
      expect(refusal(() => checkTarget(policy, url))?.message, url).toMatch(/never allowed/);
    }
    expect(checkTarget(policy, 'http://10.0.0.1/').hostname).toBe('10.0.0.1');
  });
});

describe('checkTarget: URL shape', () => {
  it('takes the URL the request schema parsed, and hands the same object on (the target is parsed once)', () => {
    const parsed = v1ExecuteSchema().parse({
      id: '1',
      action: 'search_count',
      model_id: 'res.partner',
      params: [[]],
      erp_instance: { url: 'https://erp.example.com/odoo', db: 'd', user_id: 2, api_key: 'k' },
    }).erp_instance.url;
    expect(parsed).toBeInstanceOf(URL);
    expect(checkTarget(OPEN, parsed)).toBe(parsed);
  });

  it.each([
    ['ftp://erp.example.com/', /only http: and https:.*\(ftp:\)/],
    ['file:///etc/passwd', /only http: and https:.*\(file:\)/],
    ['javascript:alert(1)', /only http: and https:.*\(javascript:\)/],
    ['gopher://127.0.0.1:6379/_x', /only http: and https:/],
    ['ws://erp.example.com/', /only http: and https:/],
    ['erp.example.com', /not a valid URL/],
    ['', /not a valid URL/],
    ['http://', /not a valid URL/],
    ['http://:80/', /not a valid URL/],
    ['http://[::1/', /not a valid URL/],
    ['http://1.2.3.4.5/', /not a valid URL/],
    ['http://erp.example.com:99999/', /not a valid URL/],
  ])('%j is refused', (url, message) => {
    expect(refusal(() => checkTarget(OPEN, url))?.message).toMatch(message);
  });

  it.each([
    'http://admin:s3cret@erp.example.com/',
    'https://admin@erp.example.com:8069/web',
    'http://:s3cret@erp.example.com/',
  ])('user-info in %j is refused without echoing it', (url) => {
    const err = refusal(() => checkTarget(OPEN, url));
    expect(err?.message).toMatch(/remove the user:password@ part/);
    expect(err?.message).toMatch(/erp\.example\.com/);
    expect(err?.message).not.toMatch(/admin|s3cret/);
    expect(err?.code).toBe(-32008);
    expect(err?.httpStatus).toBe(403);
  });

  it('a scheme-less user:password@host does not echo the "scheme" (it is the user name)', () => {
    const err = refusal(() => checkTarget(OPEN, 'admin:s3cret@erp.example.com'));
    expect(err?.message).toMatch(/only http: and https:/);
    expect(err?.message).not.toMatch(/admin|s3cret/);
  });

  it('never echoes the path or query', () => {
    const err = refusal(() => checkTarget(OPEN, 'http://10.0.0.1:8069/web?token=s3cret#x'));
    expect(err?.message).toBe(
      'Target http://10.0.0.1:8069 refused: it is a private or loopback address not listed in ERP_ALLOWED_TARGETS',
    );
  });

  it('returns the parsed URL', () => {
    const url = checkTarget(OPEN, 'HTTPS://ERP.Example.com:8069/odoo');
    expect(url).toBeInstanceOf(URL);
    expect(url.href).toBe('https://erp.example.com:8069/odoo');
  });

  it('an empty "user@" is not user-info', () => {
    expect(checkTarget(OPEN, 'http://@erp.example.com/').hostname).toBe('erp.example.com');
  });

  it('shortens a very long host in the message', () => {
    const host = `${'a'.repeat(200)}.example.com`;
    const err = refusal(() => checkTarget(compile(['erp.example.com']), `http://${host}/`));
    expect(err?.message.length).toBeLessThan(220);
  });
});

describe('checkTarget: literal IP hosts', () => {
  const alwaysRefused = [
    'http://0.0.0.0/',
    'http://0/',
    'http://0.1.2.3/',
    'http://169.254.169.254/latest/meta-data/',
    'http://169.254.0.1/',
    'http://169.254.255.255/',
    'http://2852039166/', // decimal 169.254.169.254
    'http://0xa9fea9fe/', // hex
    'http://0251.0376.0251.0376/', // octal
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://169.254.43518/', // 169.254.169.254 in the a.b.c form
    'http://[::]/',
    'http://[::0]/',
    'http://[0:0:0:0:0:0:0:0]/',
    'http://[fe80::1]/',
    'http://[FE80::a:b:c:d]:8069/',
    'http://[febf::1]/',
    'http://[fd00:ec2::254]/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[0:0:0:0:0:ffff:a9fe:a9fe]/',
    'http://[::ffff:0.0.0.0]/',
    'http://[::ffff:0:0]/',
    // multicast, reserved and broadcast
    'http://224.0.0.1/',
    'http://239.1.2.3/',
    'http://240.0.0.1/',
    'http://255.255.255.255/',
    'http://4294967295/', // decimal 255.255.255.255
    'http://[ff02::1]/',
    'http://[FF05::1:3]/',
    'http://[::ffff:224.0.0.1]/',
    // IPv6 forms carrying a metadata, unspecified or multicast IPv4 address
    'http://[64:ff9b::169.254.169.254]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[64:ff9b::]/',
    'http://[64:ff9b::224.0.0.1]/',
    'http://[::169.254.169.254]/',
    'http://[::a9fe:a9fe]/',
    'http://[::2]/',
    'http://[::ffff:0:169.254.169.254]/',
    'http://[::ffff:0:0:0]/',
    'http://[2002:a9fe:a9fe::]/',
    'http://[2002:a9fe:a9fe:1::8069]/',
    'http://[2002::1]/',
  ];
  for (const [name, policy] of [
    ['open', OPEN],
    ['local defaults', LOCAL],
    ['everything listed', compile(['0.0.0.0/0', '::/0', '169.254.0.0/16', 'fe80::/10'])],
  ] as const) {
    it.each(alwaysRefused)(`%s is always refused (${name})`, (url) => {
      expect(refusal(() => checkTarget(policy, url))?.message).toMatch(/never allowed/);
    });
  }

  // [URL, a CIDR that lists it]
  const privates: Array<[string, string]> = [
    ['http://10.0.0.1/', '10.0.0.0/8'],
    ['http://10.255.255.255/', '10.0.0.0/8'],
    ['http://172.16.0.1/', '172.16.0.0/12'],
    ['http://172.31.255.254/', '172.16.0.0/12'],
    ['http://192.168.0.1/', '192.168.0.0/16'],
    ['http://100.64.0.1/', '100.64.0.0/10'],
    ['http://100.127.255.255/', '100.64.0.0/10'],
    ['http://127.0.0.1:8069/', '127.0.0.0/8'],
    ['http://127.1.2.3/', '127.0.0.0/8'],
    ['http://2130706433/', '127.0.0.0/8'], // decimal 127.0.0.1
    ['http://0177.0.0.1/', '127.0.0.0/8'], // octal
    ['http://0x7f.1/', '127.0.0.0/8'], // hex, a.b form
    ['http://0x7f000001/', '127.0.0.0/8'],
    ['http://127.1/', '127.0.0.0/8'],
    ['http://%31%32%37.0.0.1/', '127.0.0.0/8'], // percent-encoded
    ['http://[::1]:8069/', '::1/128'],
    ['http://[0:0:0:0:0:0:0:1]/', '::1'],
    ['http://[fc00::1]/', 'fc00::/7'],
    ['http://[fdab:cdef::1]/', 'fc00::/7'],
    ['http://[::ffff:127.0.0.1]/', '127.0.0.0/8'],
    ['http://[::ffff:7f00:1]/', '127.0.0.0/8'],
    ['http://[::ffff:10.1.2.3]/', '::ffff:10.0.0.0/104'],
    ['http://[::ffff:c0a8:101]/', '192.168.1.1'],
    // IPv4-carrying IPv6 forms are listed by the IPv4 range they carry, as IPv4-mapped ones are
    ['http://[64:ff9b::10.0.0.5]/', '10.0.0.0/8'],
    ['http://[64:ff9b::a00:5]:8069/', '10.0.0.5'],
    ['http://[64:ff9b::127.0.0.1]/', '127.0.0.0/8'],
    ['http://[64:ff9b::ac10:1]/', '::ffff:172.16.0.0/108'],
    ['http://[::10.0.0.5]/', '10.0.0.0/8'],
    ['http://[::7f00:1]/', '127.0.0.0/8'],
    ['http://[::ffff:0:10.0.0.5]/', '10.0.0.0/8'],
    ['http://[::ffff:0:c0a8:101]/', '192.168.0.0/16'],
    ['http://[2002:a00:5::1]/', '10.0.0.0/8'],
    ['http://[2002:6440:1::1]/', '100.64.0.0/10'],
    // New private IPv6 ranges: listed by an IPv6 CIDR
    ['http://[fec0::1]/', 'fec0::/10'],
    ['http://[feff::1]/', 'fec0::/10'],
    ['http://[64:ff9b:1::a00:5]/', '64:ff9b:1::/48'],
    ['http://[64:ff9b:1::808:808]/', '64:ff9b:1::/64'],
    ['http://[2001:0:4136:e378:8000:63bf:f5ff:fffa]/', '2001::/32'],
    ['http://[2001::1]/', '2001::/32'],
  ];
  it.each(privates)('%s is refused when not listed', (url) => {
    expect(refusal(() => checkTarget(OPEN, url))?.message).toMatch(/private or loopback address not listed/);
    expect(refusal(() => checkTarget(compile(['erp.example.com', '8.8.8.8']), url))).toBeDefined();
  });
  it.each(privates)('%s is allowed when %s is listed', (url, cidr) => {
    expect(checkTarget(compile([cidr]), url)).toBeInstanceOf(URL);
  });

  it('WHATWG URL normalizes IPv4 spellings before the check', () => {
    expect(new URL('http://2130706433/').hostname).toBe('127.0.0.1');
    expect(new URL('http://0177.0.0.1/').hostname).toBe('127.0.0.1');
    expect(new URL('http://0x7f.1/').hostname).toBe('127.0.0.1');
    expect(new URL('http://[::ffff:169.254.169.254]/').hostname).toBe('[::ffff:a9fe:a9fe]');
  });

  it('the local defaults allow loopback literals', () => {
    expect(checkTarget(LOCAL, 'http://127.0.0.1:8069/').host).toBe('127.0.0.1:8069');
    expect(checkTarget(LOCAL, 'http://[::1]:8069/').host).toBe('[::1]:8069');
    expect(refusal(() => checkTarget(LOCAL, 'http://10.0.0.1/'))).toBeDefined();
    expect(refusal(() => checkTarget(LOCAL, 'http://8.8.8.8/'))?.message).toBe(
      'Target http://8.8.8.8 refused: not listed in ERP_ALLOWED_TARGETS',
    );
  });

  it.each([
    'http://8.8.8.8/',
    'http://1.1.1.1:8069/',
    'http://[2001:db8::1]/',
    'http://172.32.0.1/',
    'http://100.128.0.1/',
    'http://223.255.255.255/',
    'http://[64:ff9b::8.8.8.8]/',
    'http://[::8.8.8.8]/',
    'http://[::ffff:0:8.8.8.8]/',
    'http://[2002:808:808::1]/',
    'http://[2001:1::1]/',
  ])('%s (public) is allowed when the list is empty', (url) => {
    expect(checkTarget(OPEN, url)).toBeInstanceOf(URL);
  });

  it('an IPv6 entry is no consent to reach a private IPv4 address carried inside it', () => {
    for (const [url, entry] of [
      ['http://[64:ff9b::10.0.0.5]/', '64:ff9b::/96'],
      ['http://[64:ff9b::10.0.0.5]/', '64:ff9b::a00:0/104'],
      ['http://[64:ff9b::10.0.0.5]/', '::/0'],
      ['http://[::10.0.0.5]/', '::/0'],
      ['http://[::10.0.0.5]/', '::/96'],
      ['http://[::ffff:0:10.0.0.5]/', '::ffff:0:0:0/96'],
      ['http://[2002:a00:5::1]/', '2002::/16'],
      ['http://[2002:7f00:1::1]/', '::/0'],
    ]) {
      const policy = compile([entry!]);
      expect(refusal(() => checkTarget(policy, url!))?.message, `${url} with ${entry}`).toMatch(
        /private or loopback address not listed/,
      );
    }
    const metadata = compile(['64:ff9b::/96', '::/0', '0.0.0.0/0', '169.254.0.0/16']);
    expect(refusal(() => checkTarget(metadata, 'http://[64:ff9b::a9fe:a9fe]/'))?.message).toMatch(
      /never allowed/,
    );
  });

  it('a non-empty list allows a public carried IPv4 address through its IPv4 or its IPv6 range', () => {
    const byV4 = compile(['203.0.113.0/24']);
    for (const url of [
      'http://[64:ff9b::203.0.113.7]/',
      'http://[::203.0.113.7]/',
      'http://[::ffff:0:203.0.113.7]/',
      'http://[2002:cb00:7107::1]/',
    ]) {
      expect(checkTarget(byV4, url), url).toBeInstanceOf(URL);
    }
    expect(refusal(() => checkTarget(byV4, 'http://[64:ff9b::203.0.114.7]/'))?.message).toMatch(/not listed/);
    const byV6 = compile(['64:ff9b::/96', '2002::/16']);
    expect(checkTarget(byV6, 'http://[64:ff9b::8.8.8.8]/')).toBeInstanceOf(URL);
    expect(checkTarget(byV6, 'http://[2002:808:808::1]/')).toBeInstanceOf(URL);
    expect(refusal(() => checkTarget(byV6, 'http://8.8.8.8/'))?.message).toMatch(/not listed/);
    expect(refusal(() => checkTarget(byV6, 'http://[::8.8.8.8]/'))?.message).toMatch(/not listed/);
  });

  it('a non-empty list restricts public literal IPs to its CIDRs', () => {
    const policy = compile(['203.0.113.0/24', '2001:db8::/32', 'erp.example.com']);
    expect(checkTarget(policy, 'http://203.0.113.7/')).toBeInstanceOf(URL);
    expect(checkTarget(policy, 'http://[2001:db8::7]/')).toBeInstanceOf(URL);
    expect(refusal(() => checkTarget(policy, 'http://203.0.114.7/'))?.message).toMatch(/not listed/);
    expect(refusal(() => checkTarget(policy, 'http://[2001:db9::7]/'))?.message).toMatch(/not listed/);
  });
});

describe('checkTarget: host names', () => {
  it('any name passes pre-flight when the list is empty (the resolved address decides)', () => {
    for (const host of ['erp.example.com', 'localhost', 'metadata.google.internal', 'a..b']) {
      expect(checkTarget(OPEN, `http://${host}/`).hostname).toBe(host);
    }
  });

  const listed = compile(['erp.example.com', '*.example.org', 'localhost']);
  it.each([
    ['http://erp.example.com/', true],
    ['http://ERP.EXAMPLE.COM/', true],
    ['http://erp.example.com./', true],
    ['http://erp.example.com:8069/', true],
    ['https://localhost:8443/', true],
    ['http://localhost./', true],
    ['http://other.example.com/', false],
    ['http://example.com/', false],
    ['http://erp.example.com.evil.net/', false],
    ['http://evilerp.example.com/', false],
    ['http://a.example.org/', true],
    ['http://A.B.Example.Org./', true],
    ['http://x.y.z.example.org/', true],
    ['http://example.org/', false], // apex is not matched by the wildcard
    ['http://example.org./', false],
    ['http://evilexample.org/', false],
    ['http://example.org.evil.net/', false],
  ])('with names only, %s allowed: %s', (url, allowed) => {
    const err = refusal(() => checkTarget(listed, url));
    if (allowed) expect(err).toBeUndefined();
    else expect(err?.message).toMatch(/not listed in ERP_ALLOWED_TARGETS/);
  });

  it('IDN names match their punycode entry', () => {
    expect(checkTarget(compile(['bücher.ch']), 'http://BÜCHER.ch/').hostname).toBe('xn--bcher-kva.ch');
    expect(checkTarget(compile(['*.bücher.ch']), 'http://erp.xn--bcher-kva.ch/')).toBeInstanceOf(URL);
  });

  it('with a CIDR entry, an unlisted name passes pre-flight (the resolved address decides)', () => {
    const policy = compile(['erp.example.com', '10.0.0.0/8']);
    expect(checkTarget(policy, 'http://other.example.net/').hostname).toBe('other.example.net');
  });
});

describe('checkTarget: databases', () => {
  const policy = compile([], ['prod', 'Staging']);
  it('allows a listed database (exact match)', () => {
    expect(checkTarget(policy, 'https://erp.example.com/', 'prod')).toBeInstanceOf(URL);
    expect(checkTarget(policy, 'https://erp.example.com/', 'Staging')).toBeInstanceOf(URL);
  });
  it.each(['PROD', 'staging', 'prod ', '', 'other', 'prod2'])('refuses %j and names it', (db) => {
    expect(refusal(() => checkTarget(policy, 'https://erp.example.com/', db))?.message).toBe(
      `Database ${JSON.stringify(db)} is not allowed by this proxy (ERP_ALLOWED_DATABASES)`,
    );
  });
  it('does not check a call that selects no database (db undefined)', () => {
    expect(checkTarget(policy, 'https://erp.example.com/')).toBeInstanceOf(URL);
  });
  it('any database when the list is empty', () => {
    expect(checkTarget(OPEN, 'https://erp.example.com/', 'anything')).toBeInstanceOf(URL);
  });
  it('the URL shape is checked before the database', () => {
    expect(refusal(() => checkTarget(policy, 'ftp://erp.example.com/', 'other'))?.message).toMatch(
      /only http/,
    );
  });
});

describe('checkResolvedAddress', () => {
  it.each([
    '169.254.169.254',
    '169.254.0.1',
    '0.0.0.0',
    '0.1.2.3',
    '::',
    'fe80::1',
    'fe80::1%eth0',
    'fd00:ec2::254',
    '::ffff:169.254.169.254',
    '::ffff:a9fe:a9fe',
    '::ffff:0.0.0.0',
    '224.0.0.251',
    '255.255.255.255',
    '240.1.2.3',
    'ff02::fb',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::169.254.169.254',
    '64:ff9b::',
    '::a9fe:a9fe',
    '::ffff:0:a9fe:a9fe',
    '2002:a9fe:a9fe::1',
    '2002:e000:1::1',
  ])('%s is always refused, even when the name and the range are listed', (address) => {
    const policy = compile([
      'meta.test',
      '*.test',
      '0.0.0.0/0',
      '::/0',
      '169.254.0.0/16',
      'fe80::/10',
      '224.0.0.0/4',
      'ff00::/8',
    ]);
    const err = refusal(() => checkResolvedAddress(policy, 'meta.test', address));
    expect(err?.message).toBe(
      'Target meta.test refused: it resolves to a link-local, metadata, unspecified, multicast or reserved address, which is never allowed',
    );
    expect(err?.message).not.toContain(address);
  });

  it.each([
    ['10.1.2.3', '10.0.0.0/8'],
    ['172.20.0.1', '172.16.0.0/12'],
    ['192.168.10.10', '192.168.0.0/16'],
    ['100.100.100.100', '100.64.0.0/10'],
    ['127.0.0.1', '127.0.0.0/8'],
    ['::1', '::1/128'],
    ['fd12::1', 'fc00::/7'],
    ['::ffff:127.0.0.1', '127.0.0.0/8'],
    ['::ffff:7f00:1', '127.0.0.1/32'],
    ['::ffff:a01:203', '10.0.0.0/8'],
    ['64:ff9b::a00:5', '10.0.0.0/8'],
    ['64:ff9b::10.0.0.5', '10.0.0.5'],
    ['64:ff9b::c0a8:101', '192.168.0.0/16'],
    ['::a00:5', '10.0.0.0/8'],
    ['::ffff:0:7f00:1', '127.0.0.0/8'],
    ['2002:a00:5::1', '10.0.0.0/8'],
    ['fec0::1', 'fec0::/10'],
    ['64:ff9b:1::a00:5', '64:ff9b:1::/48'],
    ['2001:0:4136:e378:8000:63bf:f5ff:fffa', '2001::/32'],
  ])('private %s: refused unless a CIDR (%s) or the name is listed', (address, cidr) => {
    // A name not listed by name gets the one refusal that does not say what DNS answered.
    expect(refusal(() => checkResolvedAddress(OPEN, 'erp.internal', address))?.message).toBe(
      unreachable('erp.internal'),
    );
    expect(
      refusal(() => checkResolvedAddress(compile(['other.internal']), 'erp.internal', address))?.message,
    ).toBe(unreachable('erp.internal'));
    // An IP literal host is no DNS answer: its refusal says why.
    expect(refusal(() => checkResolvedAddress(OPEN, address, address))?.message).toBe(
      `Target ${address} refused: it resolves to a private or loopback address not listed in ERP_ALLOWED_TARGETS`,
    );
    expect(refusal(() => checkResolvedAddress(compile([cidr]), 'erp.internal', address))).toBeUndefined();
    // Listing the name is the operator's consent, exact or wildcard.
    expect(
      refusal(() => checkResolvedAddress(compile(['erp.internal']), 'erp.internal', address)),
    ).toBeUndefined();
    expect(
      refusal(() => checkResolvedAddress(compile(['ERP.internal.']), 'Erp.Internal.', address)),
    ).toBeUndefined();
    expect(
      refusal(() => checkResolvedAddress(compile(['*.internal']), 'erp.internal', address)),
    ).toBeUndefined();
    expect(
      refusal(() => checkResolvedAddress(compile(['*.erp.internal']), 'erp.internal', address)),
    ).toBeDefined();
  });

  it('localhost resolving to loopback is allowed by the local defaults, refused on Lambda defaults', () => {
    for (const address of ['127.0.0.1', '::1']) {
      expect(refusal(() => checkResolvedAddress(LOCAL, 'localhost', address))).toBeUndefined();
      expect(refusal(() => checkResolvedAddress(OPEN, 'localhost', address))).toBeDefined();
    }
  });

  it('public addresses: any when the list is empty; otherwise the name or a CIDR must match', () => {
    expect(refusal(() => checkResolvedAddress(OPEN, 'erp.example.com', '93.184.216.34'))).toBeUndefined();
    expect(refusal(() => checkResolvedAddress(OPEN, 'erp.example.com', '2606:2800::1'))).toBeUndefined();
    for (const address of ['64:ff9b::5db8:d822', '::ffff:0:5db8:d822', '2002:5db8:d822::1']) {
      expect(
        refusal(() => checkResolvedAddress(OPEN, 'erp.example.com', address)),
        address,
      ).toBeUndefined();
    }
    const policy = compile(['erp.example.com', '203.0.113.0/24']);
    expect(refusal(() => checkResolvedAddress(policy, 'erp.example.com', '93.184.216.34'))).toBeUndefined();
    expect(
      refusal(() => checkResolvedAddress(policy, 'other.example.com', '64:ff9b::cb00:7109')),
    ).toBeUndefined();
    expect(refusal(() => checkResolvedAddress(policy, 'other.example.com', '203.0.113.9'))).toBeUndefined();
    expect(refusal(() => checkResolvedAddress(policy, 'other.example.com', '93.184.216.34'))?.message).toBe(
      unreachable('other.example.com'),
    );
  });

  it.each([
    ['the empty list', OPEN],
    ['a CIDR list', compile(['203.0.113.0/24'])],
    ['the local defaults', LOCAL],
  ])('answers one refusal for a name not listed by name, whatever it resolves to (%s)', (_case, policy) => {
    const messages = new Set(
      ['169.254.169.254', 'fd00:ec2::254', '10.0.0.5', '127.0.0.1', '192.0.2.1', 'not-an-ip'].flatMap(
        (address) => {
          const err = refusal(() => checkResolvedAddress(policy, 'probe.internal', address));
          return err === undefined ? [] : [`${err.code} ${err.httpStatus} ${err.message}`];
        },
      ),
    );
    expect([...messages]).toEqual([`-32008 403 ${unreachable('probe.internal')}`]);
  });

  it('an IP literal host is not matched against host-name entries', () => {
    expect(
      refusal(() => checkResolvedAddress(compile(['10.0.0.1']), '10.0.0.1', '10.0.0.1')),
    ).toBeUndefined();
    expect(
      refusal(() => checkResolvedAddress(compile(['localhost']), '127.0.0.1', '127.0.0.1')),
    ).toBeDefined();
  });

  it.each(['', 'not-an-ip', '1.2.3.256', '0177.0.0.1', '2130706433'])(
    'refuses an unrecognized address %j',
    (address) => {
      expect(refusal(() => checkResolvedAddress(compile(['x.test']), 'x.test', address))?.message).toBe(
        'Target x.test refused: it resolves to an unrecognized address',
      );
      expect(refusal(() => checkResolvedAddress(OPEN, 'x.test', address))?.message).toBe(
        unreachable('x.test'),
      );
    },
  );
});

// ---------------------------------------------------------------------------------------------
// The lookup
// ---------------------------------------------------------------------------------------------

const FAKE_DNS: Record<string, string[]> = {
  'ok.test': ['127.0.0.1'],
  'meta.test': ['169.254.169.254'],
  'mixed.test': ['127.0.0.1', '169.254.169.254'],
  'mixed6.test': ['::1', '::ffff:169.254.169.254'],
  'public.test': ['93.184.216.34', '2606:2800::1'],
  'publicmeta.test': ['93.184.216.34', 'fd00:ec2::254'],
  // DNS64 answers: synthesized NAT64 addresses
  'nat64meta.test': ['64:ff9b::a9fe:a9fe'],
  'nat64private.test': ['64:ff9b::a00:5'],
  'nat64public.test': ['64:ff9b::5db8:d822'],
  'mixednat64.test': ['93.184.216.34', '64:ff9b::a00:5'],
  'sixtofour.test': ['2002:a00:5::1'],
  'teredo.test': ['2001:0:4136:e378:8000:63bf:f5ff:fffa'],
  'multicast.test': ['224.0.0.251', 'ff02::fb'],
  'empty.test': [],
};

function fakeLookup(calls: Array<{ hostname: string; options: LookupOptions }> = []): BaseLookup {
  return (hostname, options, callback) => {
    calls.push({ hostname, options });
    const addresses = FAKE_DNS[hostname];
    setImmediate(() => {
      if (addresses === undefined) {
        const err: NodeJS.ErrnoException = new Error(`getaddrinfo ENOTFOUND ${hostname}`);
        err.code = 'ENOTFOUND';
        callback(err, []);
        return;
      }
      const all: LookupAddress[] = addresses.map((address) => ({
        address,
        family: address.includes(':') ? 6 : 4,
      }));
      callback(null, options.family ? all.filter((a) => a.family === options.family) : all);
    });
  };
}

interface LookupResult {
  err: NodeJS.ErrnoException | null;
  address: string | LookupAddress[];
  family: number | undefined;
}

function runLookup(
  policy: CompiledTargetPolicy,
  hostname: string,
  options: LookupOptions,
): Promise<LookupResult> {
  const lookup = createPolicyLookup(policy, fakeLookup());
  return new Promise((resolve) =>
    lookup(hostname, options, (err, address, family) => resolve({ err, address, family })),
  );
}

describe('createPolicyLookup', () => {
  it('answers all addresses with all: true, asking the base lookup for all of them', async () => {
    const calls: Array<{ hostname: string; options: LookupOptions }> = [];
    const lookup = createPolicyLookup(OPEN, fakeLookup(calls));
    const result = await new Promise<LookupResult>((resolve) =>
      lookup('public.test', { all: true, hints: 32 }, (err, address, family) =>
        resolve({ err, address, family }),
      ),
    );
    expect(result.err).toBeNull();
    expect(result.address).toEqual([
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800::1', family: 6 },
    ]);
    expect(calls).toEqual([{ hostname: 'public.test', options: { all: true, hints: 32 } }]);
  });

  it('answers the first address and its family without all', async () => {
    expect(await runLookup(OPEN, 'public.test', {})).toEqual({
      err: null,
      address: '93.184.216.34',
      family: 4,
    });
    expect(await runLookup(OPEN, 'public.test', { family: 6 })).toEqual({
      err: null,
      address: '2606:2800::1',
      family: 6,
    });
    expect(await runLookup(LOCAL, 'ok.test', { all: false })).toEqual({
      err: null,
      address: '127.0.0.1',
      family: 4,
    });
  });

  it.each([
    ['meta.test', LOCAL],
    ['mixed.test', LOCAL],
    ['mixed6.test', LOCAL],
    ['publicmeta.test', OPEN],
    ['ok.test', OPEN],
    ['nat64meta.test', OPEN],
    ['nat64meta.test', compile(['*.test', '::/0', '0.0.0.0/0'])],
    ['nat64private.test', OPEN],
    ['nat64private.test', compile(['64:ff9b::/96'])],
    ['mixednat64.test', OPEN],
    ['sixtofour.test', OPEN],
    ['teredo.test', OPEN],
    ['teredo.test', compile(['10.0.0.0/8', '0.0.0.0/0'])],
    ['multicast.test', compile(['multicast.test'])],
  ])('refuses %s when ANY resolved address is refused, in both forms', async (hostname, policy) => {
    for (const options of [{ all: true }, {}] as LookupOptions[]) {
      const { err } = await runLookup(policy, hostname, options);
      expect(err).toBeInstanceOf(TargetRefusedError);
      expect(err?.message).toMatch(new RegExp(`^Target ${hostname.replace('.', '\\.')} refused`));
    }
  });

  it.each([
    ['nat64public.test', OPEN],
    ['nat64private.test', compile(['10.0.0.0/8'])],
    ['nat64private.test', compile(['nat64private.test'])],
    ['mixednat64.test', compile(['93.184.216.34', '10.0.0.5'])],
    ['sixtofour.test', compile(['10.0.0.0/8'])],
    ['teredo.test', compile(['2001::/32'])],
  ])('allows DNS64/6to4/Teredo answers for %s when the policy does', async (hostname, policy) => {
    for (const options of [{ all: true }, {}] as LookupOptions[]) {
      const { err } = await runLookup(policy, hostname, options);
      expect(err, JSON.stringify(options)).toBeNull();
    }
  });

  it.each([
    ['exactly', compile(['nx.test', 'empty.test'])],
    ['by a wildcard', compile(['*.test', '10.0.0.0/8'])],
  ])('passes DNS errors through unchanged for a name listed %s', async (_case, policy) => {
    const { err } = await runLookup(policy, 'nx.test', { all: true });
    expect(err?.code).toBe('ENOTFOUND');
    expect(err).not.toBeInstanceOf(TargetRefusedError);
    // An empty answer is ENOTFOUND too.
    expect((await runLookup(policy, 'empty.test', {})).err?.code).toBe('ENOTFOUND');
  });

  it.each([
    ['the empty list', OPEN],
    ['a CIDR list', compile(['203.0.113.0/24'])],
    ['the local defaults', LOCAL],
    ['a list naming other hosts', compile(['ok.test', '*.example.com', '203.0.113.0/24'])],
  ])(
    'answers a name not listed by name alike whether it is unknown, private or metadata (%s)',
    async (_case, policy) => {
      const answers = new Set<string>();
      for (const hostname of ['nx.test', 'empty.test', 'meta.test', 'mixed.test', 'nat64private.test']) {
        for (const options of [{ all: true }, {}] as LookupOptions[]) {
          const { err } = await runLookup(policy, hostname, options);
          expect(err, hostname).toBeInstanceOf(TargetRefusedError);
          const refused = err as unknown as TargetRefusedError;
          answers.add(`${refused.code} ${refused.httpStatus} ${refused.message.replace(hostname, '<host>')}`);
        }
      }
      expect([...answers]).toEqual([`-32008 403 ${unreachable('<host>')}`]);
    },
  );

  it('reports a base lookup that throws through the callback, as a DNS failure', async () => {
    const throwing = () => {
      throw new TypeError('boom');
    };
    const answer = (policy: CompiledTargetPolicy) =>
      new Promise<unknown>((resolve) =>
        createPolicyLookup(policy, throwing)('x.test', {}, (e) => resolve(e)),
      );
    // A name listed by name: the resolver's error as it is.
    expect(await answer(compile(['x.test']))).toBeInstanceOf(TypeError);
    // Any other name: the one refusal, as for an unknown name.
    const refused = await answer(OPEN);
    expect(refused).toBeInstanceOf(TargetRefusedError);
    expect((refused as TargetRefusedError).message).toBe(unreachable('x.test'));
  });

  it('works as the lookup of net.connect, with and without autoSelectFamily', async () => {
    const server = net.createServer((socket) => socket.end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const lookup = createPolicyLookup(LOCAL, fakeLookup());
    const connect = (host: string, autoSelectFamily: boolean) =>
      new Promise<unknown>((resolve) => {
        const socket = net.connect({ host, port, lookup, autoSelectFamily });
        socket.once('connect', () => {
          socket.destroy();
          resolve('connected');
        });
        socket.once('error', resolve);
      });
    try {
      for (const autoSelectFamily of [true, false]) {
        expect(await connect('ok.test', autoSelectFamily)).toBe('connected');
        expect(await connect('meta.test', autoSelectFamily)).toBeInstanceOf(TargetRefusedError);
        expect(await connect('mixed.test', autoSelectFamily)).toBeInstanceOf(TargetRefusedError);
      }
    } finally {
      server.close();
    }
  });
});

describe('findTargetRefusal', () => {
  const refused = new TargetRefusedError('Target x refused');
  it.each([
    ['the error itself', refused],
    ['a cause', new TypeError('fetch failed', { cause: refused })],
    ['a nested cause', new Error('a', { cause: new Error('b', { cause: refused }) })],
    ['an AggregateError member', new AggregateError([new Error('x'), refused])],
    ['a cause of an AggregateError member', new AggregateError([new Error('x', { cause: refused })])],
  ])('finds it as %s', (_, err) => {
    expect(findTargetRefusal(err)).toBe(refused);
  });
  it.each([undefined, null, 'string', 42, new Error('x'), { cause: 'x' }])('finds nothing in %j', (err) => {
    expect(findTargetRefusal(err)).toBeUndefined();
  });
  it('survives a cause cycle', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    Object.assign(a, { cause: b });
    expect(findTargetRefusal(a)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------
// The proxy's HTTP client with the policy lookup, on loopback
// ---------------------------------------------------------------------------------------------

describe('the HTTP client with the policy lookup', () => {
  let server: http.Server;
  let port: number;
  beforeAll(async () => {
    server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function get(client: HttpClient, url: string): Promise<string | unknown> {
    try {
      const response = await client.send({
        method: 'GET',
        url: new URL(url),
        headers: {},
        signal: AbortSignal.timeout(5_000),
        timeoutMs: 5_000,
        maxResponseBytes: 1_000,
      });
      return `${response.status} ${response.body.toString('utf8')}`;
    } catch (error) {
      return error;
    } finally {
      await client.close();
    }
  }

  it('uses the lookup for names and fails with the TargetRefusedError itself', async () => {
    const calls: Array<{ hostname: string; options: LookupOptions }> = [];
    const client = (): HttpClient =>
      createHttpClient({ lookup: createPolicyLookup(LOCAL, fakeLookup(calls)) });
    expect(await get(client(), `http://ok.test:${port}/`)).toBe('200 ok');

    const meta = await get(client(), `http://meta.test:${port}/`);
    expect(meta).toBeInstanceOf(TargetRefusedError);
    expect((meta as TargetRefusedError).code).toBe(-32008);

    expect(await get(client(), `http://mixed.test:${port}/`)).toBeInstanceOf(TargetRefusedError);
    // https goes through tls.connect with the same lookup
    expect(await get(client(), `https://meta.test:${port}/`)).toBeInstanceOf(TargetRefusedError);

    // A name that does not resolve gets the refusal a name resolving to a metadata address gets,
    // unless the list names it: then it is a DNS failure (-32004, retry is safe).
    const nx = await get(client(), `http://nx.test:${port}/`);
    expect(nx).toBeInstanceOf(TargetRefusedError);
    expect((nx as TargetRefusedError).message).toBe(
      (meta as TargetRefusedError).message.replace('meta', 'nx'),
    );
    const listed = await get(
      createHttpClient({ lookup: createPolicyLookup(compile(['nx.test']), fakeLookup(calls)) }),
      `http://nx.test:${port}/`,
    );
    expect(findTargetRefusal(listed)).toBeUndefined();
    expect((listed as { code?: number }).code).toBe(-32004);

    expect(calls.map((c) => c.hostname)).toEqual([
      'ok.test',
      'meta.test',
      'mixed.test',
      'meta.test',
      'nx.test',
      'nx.test',
    ]);
  });

  it('uses the real dns.lookup for localhost: allowed by the local defaults, refused by an empty list', async () => {
    expect(
      await get(createHttpClient({ lookup: createPolicyLookup(LOCAL) }), `http://localhost:${port}/`),
    ).toBe('200 ok');
    const err = await get(
      createHttpClient({ lookup: createPolicyLookup(OPEN) }),
      `http://localhost:${port}/`,
    );
    expect(findTargetRefusal(err)?.message).toBe(unreachable('localhost'));
  });

  it('a literal IP skips the lookup: checkTarget is what refuses it', async () => {
    const calls: Array<{ hostname: string; options: LookupOptions }> = [];
    const client = createHttpClient({ lookup: createPolicyLookup(OPEN, fakeLookup(calls)) });
    expect(await get(client, `http://127.0.0.1:${port}/`)).toBe('200 ok');
    expect(calls).toEqual([]);
    expect(refusal(() => checkTarget(OPEN, `http://127.0.0.1:${port}/`))).toBeDefined();
  });
});
