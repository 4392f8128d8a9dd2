import { describe, expect, it } from 'vitest';
import {
  addressIdentity,
  cidrContains,
  embeddedIPv4,
  hostIdentity,
  parseCidr,
  parseIPv4,
  parseIPv6,
  parseIp,
} from '../../lambdas/platform/ip-address.ts';

describe('IP helpers', () => {
  it.each([
    ['0.0.0.0', 0n],
    ['127.0.0.1', 0x7f000001n],
    ['255.255.255.255', 0xffffffffn],
  ])('parseIPv4(%s)', (text, value) => expect(parseIPv4(text)).toBe(value));

  it.each([
    '256.0.0.1',
    '1.2.3',
    '1.2.3.4.5',
    '01.2.3.4',
    '0x7f.0.0.1',
    '',
    '1..2.3',
    ' 1.2.3.4',
    '1.2.3.-4',
  ])('parseIPv4 refuses %j', (text) => expect(parseIPv4(text)).toBeUndefined());

  it.each([
    ['::', 0n],
    ['::1', 1n],
    ['fe80::1%eth0', (0xfe80n << 112n) | 1n],
    ['::ffff:1.2.3.4', (0xffffn << 32n) | 0x01020304n],
    ['::ffff:7f00:1', (0xffffn << 32n) | 0x7f000001n],
    ['::1.2.3.4', 0x01020304n],
    ['1:2:3:4:5:6:7:8', 0x0001_0002_0003_0004_0005_0006_0007_0008n],
    ['1:2:3:4:5:6:1.2.3.4', (0x0001_0002_0003_0004_0005_0006n << 32n) | 0x01020304n],
    ['1::', 1n << 112n],
    ['FD00:EC2::254', (0xfd00n << 112n) | (0xec2n << 96n) | 0x254n],
  ])('parseIPv6(%s)', (text, value) => expect(parseIPv6(text)).toBe(value));

  it.each([
    '',
    ':',
    ':::',
    '1::2::3',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '12345::',
    'g::',
    '::1.2.3',
    ':1',
    '1:',
    '1:2:3:4:5:6:7::8',
    '::ffff:1.2.3.4:1',
  ])('parseIPv6 refuses %j', (text) => expect(parseIPv6(text)).toBeUndefined());

  it('parseIp unmaps IPv4-mapped IPv6 in both notations, with or without brackets', () => {
    for (const text of [
      '::ffff:169.254.169.254',
      '::ffff:a9fe:a9fe',
      '[::ffff:a9fe:a9fe]',
      '169.254.169.254',
    ]) {
      expect(parseIp(text)).toEqual({ family: 4, value: 0xa9fea9fen });
    }
    expect(parseIp('[::1]')).toEqual({ family: 6, value: 1n });
    expect(parseIp('example.com')).toBeUndefined();
  });

  it('parseIp keeps the other IPv4-carrying forms as IPv6', () => {
    expect(parseIp('[64:ff9b::a00:5]')).toEqual({ family: 6, value: (0x64ff9bn << 96n) | 0x0a000005n });
    expect(parseIp('::10.0.0.5')).toEqual({ family: 6, value: 0x0a000005n });
  });

  it.each([
    // NAT64 64:ff9b::/96 (RFC 6052): the last 32 bits
    ['64:ff9b::169.254.169.254', 0xa9fea9fen],
    ['64:ff9b::a00:5', 0x0a000005n],
    ['64:FF9B:0:0:0:0:808:808', 0x08080808n],
    ['64:ff9b::', 0n],
    // IPv4-compatible ::/96 (deprecated), except :: and ::1
    ['::10.0.0.5', 0x0a000005n],
    ['::a9fe:a9fe', 0xa9fea9fen],
    ['::2', 2n],
    ['::ffff', 0xffffn],
    // SIIT ::ffff:0:0:0/96
    ['::ffff:0:10.0.0.5', 0x0a000005n],
    ['0:0:0:0:ffff:0:a9fe:a9fe', 0xa9fea9fen],
    // 6to4 2002::/16: the relay's IPv4 address in bits 16-47
    ['2002:a00:5::1', 0x0a000005n],
    ['2002:a9fe:a9fe:1:2:3:4:5', 0xa9fea9fen],
    ['2002::', 0n],
  ])('embeddedIPv4(%s)', (text, value) => {
    expect(embeddedIPv4(parseIp(text)!)).toEqual({ family: 4, value });
  });

  it.each([
    '::',
    '::1',
    '10.0.0.5',
    '::ffff:10.0.0.5', // parsed as IPv4 already
    '64:ff9b:0:1::a00:5', // outside 64:ff9b::/96
    '64:ff9b:1::a00:5', // local-use NAT64: not decoded
    '2001:0:4136:e378:8000:63bf:f5ff:fffa', // Teredo: not decoded
    '2003:a00:5::1',
    '0:0:0:1::a00:5',
    '::1:0:0:a00:5',
    '2001:db8::a00:5',
  ])('embeddedIPv4(%s) is undefined', (text) => expect(embeddedIPv4(parseIp(text)!)).toBeUndefined());

  it('parseCidr and cidrContains', () => {
    expect(parseCidr('10.1.2.3/8')).toEqual({ family: 4, network: 0x0a000000n, prefix: 8 });
    expect(parseCidr('::1')).toEqual({ family: 6, network: 1n, prefix: 128 });
    expect(parseCidr('::ffff:10.0.0.0/104')).toEqual({ family: 4, network: 0x0a000000n, prefix: 8 });
    // The boundary: from /96 on, an IPv4-mapped CIDR is the IPv4 CIDR it carries.
    expect(parseCidr('::ffff:10.0.0.0/96')).toEqual({ family: 4, network: 0n, prefix: 0 });
    expect(parseCidr('::ffff:0.0.0.0/95').family).toBe(6);
    expect(parseCidr('0.0.0.0/0')).toEqual({ family: 4, network: 0n, prefix: 0 });
    const ten = parseCidr('10.0.0.0/8');
    expect(cidrContains(ten, parseIp('10.255.255.255')!)).toBe(true);
    expect(cidrContains(ten, parseIp('11.0.0.0')!)).toBe(false);
    expect(cidrContains(ten, parseIp('::ffff:a00:1')!)).toBe(true);
    expect(cidrContains(parseCidr('::/0'), parseIp('10.0.0.1')!)).toBe(false);
    expect(cidrContains(parseCidr('0.0.0.0/0'), parseIp('8.8.8.8')!)).toBe(true);
    for (const bad of [
      '10.0.0.0/33',
      '::/129',
      '10.0.0.0/-1',
      '10.0.0.0/',
      '10.0.0/8',
      'x/8',
      'fe80::1%eth0/64',
    ]) {
      expect(() => parseCidr(bad), bad).toThrow(Error);
    }
  });

  it.each([
    ['127.0.0.2', '127.0.0.2'],
    ['[::ffff:7f00:2]', '127.0.0.2'],
    ['[64:ff9b::7f00:2]', '127.0.0.2'],
    ['[::7f00:2]', '127.0.0.2'],
    ['[::ffff:0:7f00:2]', '127.0.0.2'],
    ['[2002:7f00:2:9::1]', '127.0.0.2'],
    ['[::1]', '[::1]'],
    ['[64:ff9b:1::7f00:2]', '[64:ff9b:1::7f00:2]'], // local-use NAT64: not decoded
    ['[2001::7f00:2]', '[2001::7f00:2]'], // Teredo: not decoded
    ['erp.example.com', 'erp.example.com'],
    ['localhost', 'localhost'], // a name is never resolved
  ])('hostIdentity(%s) is %s', (host, identity) => expect(hostIdentity(host)).toBe(identity));

  it('addressIdentity gives the carried IPv4 address, or the address itself', () => {
    expect(addressIdentity(parseIp('64:ff9b::a00:5')!)).toEqual({ family: 4, value: 0x0a000005n });
    expect(addressIdentity(parseIp('fd00::1')!)).toEqual(parseIp('fd00::1'));
  });
});
